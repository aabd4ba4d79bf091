"""Issue 13: compiled skills reach real agent CLIs through their own MCP configuration. Under `--conditions
compiled` Claude Code, Codex, Gemini CLI and OpenCode start `skillworks serve-skills` (this host's interpreter,
mounted read-only) as a stdio MCP server inside the trial's bubblewrap sandbox; the CLI lists the runtime's
handle, calls it, the operator runs in the sandbox and writes the card the verifier scores. Only the model is
fake: the `scripted` provider replays tests/fixtures/harness_scripts/compiled.yaml (with the tool named as each
CLI names MCP tools, or the attack turns below), whose `expect` clauses fail the trial unless the CLI offered
the handle and sent the runtime's answers back."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest
import yaml

from skillworks.experiment import RunStore
from skillworks.gateway import read_calls
from skillworks.results import TrialResult

from .conftest import REPO, SCRIPTS, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]

TASK = REPO / "tests" / "fixtures" / "harness_tasks" / "compiled-card"
HANDLE = "mcp__skillworks__run_card_writer"  # Claude Code; Codex's namespace mcp__skillworks, flattened by the gateway
TOOL_NAMES = {
    "claude-code": HANDLE,
    "codex": HANDLE,
    "gemini-cli": "mcp_skillworks_run_card_writer",
    "opencode": "skillworks_run_card_writer",
}
SKILL = "card-writer"
SCRIPT = "card-writer/scripts/write_card.sh"
WRITE = {"operator": "write_card", "inputs": {"name": "Ada", "arg2": "/app/card.txt"}}


def _run(
    harness: str, script: Path, out: Path, task: Path = TASK, *backend: str, run_id: str | None = None
) -> tuple[TrialResult, Path]:
    run_id = run_id or harness
    proc = skillworks(
        "run", str(task), "--agent", harness, "--model", f"scripted/{script}", "--conditions", "compiled",
        "--out", str(out), "--run-id", run_id, *backend,
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    [result] = RunStore(out / run_id).read_results()
    return result, out / run_id / result.paths["trial_dir"]


def _runtime_calls(trial: Path) -> list[dict[str, object]]:
    """What the in-sandbox server recorded (its --calls-log, in the sandbox's /logs/agent)."""
    log = trial / "agent" / "sandbox-logs" / "mcp-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def _check_no_raw_skill_staged(trial: Path) -> None:
    audit = json.loads((trial / "skills.json").read_text())
    assert audit["ok"] and audit["visible"] == [] and audit["stray_skill_md"] == [], audit["problems"]
    assert audit["handles"] == ["run_card_writer"]  # what the agent was given instead of the package
    record = json.loads((trial / "compiled-skills.json").read_text())
    assert record["visible_to_agent"] == ["run_card_writer"] and record["raw_skills_staged"] == []


def _check_solved_through_the_handle(result: TrialResult, trial: Path, statuses: list[str], read: list[str]) -> None:
    assert result.error is None, result.error
    assert (result.outcome, result.reward) == ("solved", 1.0)  # the verifier read /app/card.txt in the sandbox
    _check_no_raw_skill_staged(trial)

    # every scripted turn was answered in order: the CLI offered the handle (turn 1's expect) and sent back the
    # runtime's disclosure (turn 2's) and the operator's execution (the last turn's)
    model_calls = [c for c in read_calls(trial / "gateway.jsonl") if c.is_model_call]
    assert [c.status for c in model_calls] == ["ok"] * len(model_calls)
    assert [c.script_turn for c in model_calls] == list(range(1, len(model_calls) + 1))

    # the server the CLI started ran the operator inside the sandbox: the sandbox's paths, the task's workdir
    calls = _runtime_calls(trial)
    assert [(c["tool"], c["result"]["status"]) for c in calls] == [("run_card_writer", s) for s in statuses]
    ran = calls[-1]["result"]
    assert ran["output"]["exit_code"] == 0 and "cwd: /app" in ran["evidence"]
    # run with the interpreter its shebang names (#!/bin/sh)
    assert any(e.startswith("command: sh /home/agent/.skillworks/compiled/card-writer/") for e in ran["evidence"])
    config = "\n".join(p.read_text() for p in (trial / "agent" / "config").iterdir())
    assert "serve-skills" in config and "/home/agent/.skillworks/compiled" in config

    # skill use counts the handle: listed, invoked, and the script its operator ran
    use = result.skill_use
    assert (use.listed, use.invoked, use.scripts_run, use.failed, use.read) == ([SKILL], [SKILL], [SCRIPT], [], read)


@pytest.mark.parametrize("harness", ["codex", "gemini-cli", "opencode"])  # claude-code: the attack test below
def test_cli_lists_and_calls_the_compiled_skill_and_its_operator_runs_in_the_sandbox(
    harness: str, tmp_path: Path
) -> None:
    script = tmp_path / "compiled.yaml"
    script.write_text((SCRIPTS / "compiled.yaml").read_text().replace(HANDLE, TOOL_NAMES[harness]))
    result, trial = _run(harness, script, tmp_path)
    _check_solved_through_the_handle(result, trial, ["guidance", "execute"], read=[])


def test_claude_code_solves_through_the_handle_and_attacks_stay_in_the_sandbox(tmp_path: Path) -> None:
    """Claude Code lists and calls the handle and solves the task with its operator (as above); on the way, scripted
    turns try to leave the skill dir and reach the host through the runtime, then read the raw package past the
    handle. Honest outcome: the fallback refuses paths outside the capsule; an operator given a host path or a
    path outside the workspace is refused before anything runs; the staged capsule is readable by the
    agent's own shell (the runtime runs as the agent's user), which skill use counts as a read."""
    marker = Path("/tmp") / f"skillworks-host-marker-{uuid.uuid4().hex}"

    def turn(*calls: tuple[str, dict[str, object]], **expect: str) -> dict[str, object]:
        return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls], "expect": expect}

    escape = {"operator": "get_skill_asset", "inputs": {"path": "../contract.json"}}
    host = {"operator": "write_card", "inputs": {"name": f"Ada; touch {marker}-2", "arg2": str(marker)}}
    raw = {"command": "cat ~/.skillworks/compiled/card-writer/capsule/SKILL.md"}
    turns = [
        turn((HANDLE, {}), has_tool=HANDLE),
        turn((HANDLE, escape), tool_result_contains="write_card(name"),
        turn((HANDLE, host), tool_result_contains="has no file '../contract.json'"),
        turn(("Bash", raw), tool_result_contains="inside the workspace"),
        turn((HANDLE, WRITE), tool_result_contains="# Card writer"),
        {"text": "done", "expect": {"tool_result_contains": "ran write_card"}},
    ]
    script = tmp_path / "attack.yaml"
    script.write_text(yaml.safe_dump({"default": turns}))
    result, trial = _run("claude-code", script, tmp_path)
    _check_solved_through_the_handle(result, trial, ["guidance", "blocked", "blocked", "execute"], read=[SKILL])
    assert not marker.exists() and not Path(f"{marker}-2").exists()  # nothing reached the host's /tmp
    # a path outside the task's workspace (/tmp here) is refused before anything runs
    assert "inside the workspace" in str(_runtime_calls(trial)[2]["result"]["output"])


def test_a_harness_without_mcp_wiring_refuses_the_compiled_condition(tmp_path: Path) -> None:
    proc = skillworks(
        "run", str(TASK), "--agent", "openhands", "--model", f"scripted/{SCRIPTS / 'compiled.yaml'}",
        "--conditions", "compiled", "--out", str(tmp_path), "--run-id", "oh",
    )  # fmt: skip
    assert proc.returncode != 0
    assert "openhands" in proc.stderr and "cannot get compiled skills" in proc.stderr
    assert not (tmp_path / "oh" / "trials").exists()  # refused before any trial


@pytest.mark.podman
def test_compiled_skill_in_a_task_container(tmp_path: Path) -> None:
    """The container backend (`--network none`): the host's interpreter is mounted into the task's image, where it
    runs when the image has python3's libraries; in the bare base image the trial is a harness_setup error naming
    the image before the CLI starts (never a run without the skills)."""
    task = tmp_path / "task" / TASK.name
    shutil.copytree(TASK, task)
    (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    images = {
        "python": os.environ.get("SKILLWORKS_TEST_PYTHON_IMAGE", "localhost/skillworks-python"),
        "bare": os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base"),
    }
    runs = {}
    for name, image in images.items():
        backend = ["--env", "container", "--image-map", f"debian:bookworm-slim={image}"]
        runs[name] = _run("claude-code", SCRIPTS / "compiled.yaml", tmp_path, task, *backend, run_id=name)
    result, trial = runs["python"]
    assert result.error is None and result.reward == 1.0, result.error
    _check_no_raw_skill_staged(trial)
    ran = _runtime_calls(trial)[1]["result"]
    assert ran["status"] == "execute" and "cwd: /app" in ran["evidence"]
    assert result.skill_use.scripts_run == [SCRIPT]
    bare, _ = runs["bare"]
    assert bare.outcome == "error" and bare.error is not None and bare.error.category == "harness_setup"
    assert "libssl" in bare.error.message and "image" in bare.error.message
