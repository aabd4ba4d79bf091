"""HarnessAgent without a sandbox: model ids, skill dirs, binds, and how a failed CLI becomes a typed error."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest

from skillworks.agents.base import Agent, AgentContext
from skillworks.agents.harness import HarnessAgent
from skillworks.agents.harness.specs import CLAUDE_CODE, CODEX, OPENHANDS
from skillworks.agents.harness.specs.openhands import PUBLIC_SKILLS_REPO
from skillworks.agents.registry import create_agent
from skillworks.errors import UserError
from skillworks.gateway.records import GatewayCall, append_call
from skillworks.trajectory import convert_claude_code


class _Ctx:
    def __init__(self, trial_dir: Path) -> None:
        self.trial_dir = trial_dir


def _ctx(trial_dir: Path) -> AgentContext:
    """`_error` only reads ctx.trial_dir (for gateway.jsonl)."""
    return cast(AgentContext, _Ctx(trial_dir))


def test_harnesses_are_registered_agents() -> None:
    agent = create_agent("claude-code", model="scripted/x.yaml")
    assert isinstance(agent, HarnessAgent) and isinstance(agent, Agent)
    assert agent.needs_model and agent.version == "2.1.328"
    assert agent.skills_dir("/home/agent", "/app") == "/home/agent/.claude/skills"


@pytest.mark.parametrize(
    ("model", "option", "expected"),
    [
        ("scripted/tests/x.yaml", None, "gpt-5-codex"),
        (None, None, "gpt-5-codex"),
        ("openai/gpt-5.1", None, "gpt-5.1"),
        ("openrouter/openai/gpt-5", None, "openai/gpt-5"),
        ("openai/gpt-5.1", "my-model", "my-model"),
    ],
)
def test_client_model(model: str | None, option: str | None, expected: str) -> None:
    assert HarnessAgent(CODEX, model=model, harness_model=option).client_model() == expected


def test_binary_option_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLWORKS_CLAUDE_CODE_BINARY", "/opt/claude")
    assert HarnessAgent(CLAUDE_CODE).binary == "/opt/claude"


async def test_preflight_names_the_install_command_when_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLWORKS_HARNESS_CACHE", str(tmp_path))
    monkeypatch.delenv("SKILLWORKS_HARNESS_AUTO_INSTALL", raising=False)
    with pytest.raises(UserError) as info:
        await HarnessAgent(CLAUDE_CODE).preflight()
    assert str(info.value) == (
        "agent claude-code: Claude Code 2.1.328 is not installed; run `skillworks agents install claude-code` "
        "(or set SKILLWORKS_CLAUDE_CODE_BINARY=<path to the CLI>)"
    )


def _gateway_call(status: str, error_class: str | None = None) -> GatewayCall:
    return GatewayCall(
        ts=datetime.now(UTC),
        trial_id="t",
        route="/v1/messages",
        wire="anthropic_messages",
        model="m",
        provider="scripted",
        status=status,
        http_status=200 if status == "ok" else 429,
        error_class=error_class,
        error_message="slow down" if error_class else None,
    )


CLAUDE_LOG_RATE_LIMITED = (
    '{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[],"skills":[]}\n'
    '{"type":"result","subtype":"error_during_execution","is_error":true,'
    '"result":"API Error: 429 rate_limit_error: Too many requests"}\n'
)


def test_exit_zero_and_timeouts_are_not_errors(tmp_path: Path) -> None:
    agent = HarnessAgent(CLAUDE_CODE)
    assert agent._error(_ctx(tmp_path), 0, False, "", None) is None
    assert agent._error(_ctx(tmp_path), 137, True, "killed", None) is None


def test_the_gateway_record_explains_a_failed_run_first(tmp_path: Path) -> None:
    append_call(tmp_path / "gateway.jsonl", _gateway_call("error", "rate_limit"))
    error = HarnessAgent(CLAUDE_CODE)._error(_ctx(tmp_path), 1, False, "boom", None)
    assert error is not None and error.category == "rate_limit" and "slow down" in error.message


def test_cli_output_is_classified_by_the_spec_error_patterns(tmp_path: Path) -> None:
    converted = convert_claude_code(CLAUDE_LOG_RATE_LIMITED, instruction="do it")
    error = HarnessAgent(CLAUDE_CODE)._error(_ctx(tmp_path), 1, False, "", converted)
    assert error is not None and error.category == "rate_limit" and error.phase == "agent"


def test_a_crash_without_any_event_is_a_harness_crash(tmp_path: Path) -> None:
    error = HarnessAgent(CLAUDE_CODE)._error(
        _ctx(tmp_path), 127, False, "claude: error while loading shared libraries", None
    )
    assert error is not None and error.category == "harness_crash"
    assert error.message.startswith("claude-code exited 127: claude: error while loading")


def test_a_plain_non_zero_exit_with_a_log_is_left_to_the_verifier(tmp_path: Path) -> None:
    log = '{"type":"system","subtype":"init","session_id":"s","tools":[],"skills":[]}\n'
    converted = convert_claude_code(log, instruction="do it")
    assert HarnessAgent(CLAUDE_CODE)._error(_ctx(tmp_path), 1, False, "", converted) is None


def test_claude_code_steps_get_the_gateways_completion_tokens(tmp_path: Path) -> None:
    """Issue 17: Claude Code logs each message before its final usage; the gateway's count fills the step."""
    from skillworks.agents.harness.runner import fill_step_completion_tokens

    log = Path(__file__).parents[2] / "fixtures" / "native_logs" / "claude_code.stream.jsonl"
    lines = re.sub(r'("type":"assistant".*?"output_tokens":)\d+', r"\g<1>0", log.read_text())
    (tmp_path / "cc.jsonl").write_text(lines)
    trajectory = convert_claude_code(tmp_path / "cc.jsonl").trajectory
    llm_steps = [s for s in trajectory.steps if s.source == "agent" and s.metrics is not None]
    gateway = tmp_path / "gateway.jsonl"
    now = datetime.now(UTC)
    for n in range(len(llm_steps)):
        call = GatewayCall(
            ts=now, trial_id="t", route="/v1/messages", wire="anthropic_messages", model="m", provider="scripted",
            output_tokens=100 + n,
        )  # fmt: skip
        append_call(gateway, call)
    filled = fill_step_completion_tokens(trajectory, gateway)
    got = [s.metrics.completion_tokens for s in filled.steps if s.source == "agent" and s.metrics is not None]
    assert got == [100 + n for n in range(len(llm_steps))]
    # a count mismatch (e.g. an extra call the steps do not show) leaves the trajectory as the harness logged it
    append_call(gateway, call)
    assert fill_step_completion_tokens(trajectory, gateway) == trajectory


def test_harness_skills_get_their_origin_and_the_hash_of_a_kept_skill_md(tmp_path: Path) -> None:
    """Issue 17: what a CLI listed beyond the staged skills is its own: origin per CLI, hash where the file was
    kept under agent/home (Codex's system skills; OpenHands' fetched public skills)."""
    from types import SimpleNamespace

    skill_md = tmp_path / "agent" / "home" / ".openhands/cache/skills/public-skills/skills/github/SKILL.md"
    skill_md.parent.mkdir(parents=True)
    skill_md.write_text("---\nname: github\n---\n")
    ctx = cast(AgentContext, SimpleNamespace(skills=[SimpleNamespace(name="staged")], agent_log_dir=tmp_path / "agent"))
    got = HarnessAgent(OPENHANDS)._harness_skills(ctx, ["staged", "github", "security"])
    assert [(h.name, h.origin, h.path) for h in got] == [
        ("github", f"fetched by openhands 1.16.0 from {PUBLIC_SKILLS_REPO} at start",
         "~/.openhands/cache/skills/public-skills/skills/github/SKILL.md"),
        ("security", f"fetched by openhands 1.16.0 from {PUBLIC_SKILLS_REPO} at start", None),
    ]  # fmt: skip
    assert got[0].sha256 == hashlib.sha256(skill_md.read_bytes()).hexdigest() and got[1].sha256 is None
    assert HarnessAgent(CODEX)._harness_skills(ctx, ["imagegen"])[0].origin == "bundled with codex 0.169.0"


def test_openhands_public_skills_switch_points_its_clone_nowhere(tmp_path: Path) -> None:
    """OpenHands has no option for its public-skills clone; harness_skills=false hands git an `insteadOf`
    rewrite in the environment. Real git, no network needed: the clone fails at once on the rewritten URL."""
    agent = HarnessAgent(OPENHANDS, harness_skills=False)
    assert agent.locked_options() == {"harness_skills": False}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **OPENHANDS.bundled_skills_off_env}
    proc = subprocess.run(
        ["git", "clone", "--depth", "1", PUBLIC_SKILLS_REPO, str(tmp_path / "public-skills")],
        env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert proc.returncode != 0 and "/nonexistent/skillworks-no-public-skills" in proc.stderr, proc.stderr
