"""Issue 4 acceptance: each real agent CLI (installed from npm by scripts/install-agent-clis.sh) runs in the
local sandbox against the gateway. Only the model is fake: the `scripted` provider replays
tests/fixtures/harness_scripts/<harness>.yaml, whose `expect` clauses make the gateway fail the trial if the
CLI did not send what a real run would (e.g. the skill's body after the skill-loading turn)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillworks.agents.harness.runner import converter_for
from skillworks.experiment import RunStore
from skillworks.gateway import read_calls, usage_totals
from skillworks.results import TrialResult
from skillworks.trajectory import Trajectory, validate_trajectory

from .conftest import SCRIPTS, TASK, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]

SKILL = "house-greeting"
CARD = "/app/card.txt"
SCRIPT = "house-greeting/scripts/card.py"


@dataclass(frozen=True)
class Case:
    skills_dir: str  # inside the sandbox
    load_tool: str  # ATIF function name of the call that loads the skill
    write_tool: str  # ATIF function name of the call that writes the card
    scripts_run: tuple[str, ...] = ()  # the scripted run writes the card with the skill's script


CASES = {
    "claude-code": Case("/home/agent/.claude/skills", "Skill", "Write"),
    "codex": Case("/home/agent/.agents/skills", "exec_command", "exec_command", (SCRIPT,)),
    "gemini-cli": Case("/home/agent/.gemini/skills", "activate_skill", "write_file"),
    "opencode": Case("/home/agent/.config/opencode/skills", "skill", "bash", (SCRIPT,)),
    "openhands": Case("/home/agent/.openhands/skills", "invoke_skill", "file_editor"),
}


def _run(harness: str, condition: str, script: Path, out: Path) -> tuple[TrialResult, Path]:
    proc = skillworks(
        "run",
        str(TASK),
        "--agent",
        harness,
        "--model",
        f"scripted/{script}",
        "--conditions",
        condition,
        "--out",
        str(out),
        "--run-id",
        f"{harness}-{condition}",
    )
    assert proc.returncode == 0, proc.stderr
    run_dir = out / f"{harness}-{condition}"
    [result] = RunStore(run_dir).read_results()
    return result, run_dir / result.paths["trial_dir"]


def _executed_calls(trajectory: Trajectory, name: str) -> list[dict[str, object]]:
    """Arguments of every call to `name` that the CLI executed (its result is in the same step)."""
    calls = []
    for step in trajectory.steps:
        answered = {r.source_call_id for r in (step.observation.results if step.observation else [])}
        calls += [c.arguments for c in step.tool_calls or [] if c.function_name == name and c.tool_call_id in answered]
    return calls


@pytest.fixture(scope="module")
def curated_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[TrialResult, Path]]:
    """The curated-condition run of each harness, made once per module (the report test reuses them)."""
    out = tmp_path_factory.mktemp("curated-runs")
    done: dict[str, tuple[TrialResult, Path]] = {}

    def get(harness: str) -> tuple[TrialResult, Path]:
        if harness not in done:
            done[harness] = _run(harness, "curated", SCRIPTS / f"{harness}.yaml", out)
        return done[harness]

    return get


@pytest.mark.parametrize("harness", sorted(CASES))
def test_harness_loads_the_curated_skill_and_solves_the_task(
    harness: str, curated_runs: Callable[[str], tuple[TrialResult, Path]]
) -> None:
    case = CASES[harness]
    result, trial = curated_runs(harness)

    # the verifier scored the card the CLI wrote; nothing broke
    assert result.error is None, result.error
    assert (result.outcome, result.reward) == ("solved", 1.0)

    # the skill was staged where this harness looks, and the harness itself listed it
    staged = json.loads((trial / "skills.json").read_text())
    assert [(s["name"], s["path"]) for s in staged["visible"]] == [(SKILL, f"{case.skills_dir}/{SKILL}")]
    trajectory = validate_trajectory(trial / "trajectory.json")  # raises if the ATIF is invalid
    assert trajectory.extra is not None and SKILL in trajectory.extra["skills_listed"]
    assert result.skill_use.listed == [SKILL]

    # every scripted turn was answered, in order: turn 2's `expect` only passes if the CLI executed the
    # skill-loading call of turn 1 and sent the skill's body back to the model
    calls = read_calls(trial / "gateway.jsonl")
    model_calls = [c for c in calls if c.is_model_call]
    assert [c.status for c in calls] == ["ok"] * len(calls)
    assert [c.script_turn for c in model_calls] == [1, 2, 3]

    # the ATIF trajectory shows the skill invocation and the CLI's own tool writing the output file
    loads = _executed_calls(trajectory, case.load_tool)
    assert any(SKILL in json.dumps(args) for args in loads), loads
    writes = _executed_calls(trajectory, case.write_tool)
    assert any(CARD in json.dumps(args) for args in writes), writes
    assert result.skill_use.invoked == [SKILL]
    assert result.skill_use.scripts_run == list(case.scripts_run)

    # usage of record is the gateway's; what the harness reported in its own log agrees with it
    gateway = usage_totals(trial / "gateway.jsonl")
    assert result.usage == gateway and gateway.calls == 3 and gateway.input_tokens > 0
    native = converter_for(harness)(trial / "agent" / f"{harness}.events.jsonl").usage
    assert native is not None
    assert (native.input_tokens, native.output_tokens) == (gateway.input_tokens, gateway.output_tokens)


@pytest.mark.parametrize("harness", sorted(CASES))
def test_none_condition_harness_lists_no_task_skill(harness: str, tmp_path: Path) -> None:
    result, trial = _run(harness, "none", SCRIPTS / "none.yaml", tmp_path)
    assert result.error is None, result.error
    assert result.outcome == "failed"  # nothing written: scored 0 by the verifier, not an error
    staged = json.loads((trial / "skills.json").read_text())
    assert staged["ok"] is True and staged["visible"] == []
    trajectory = validate_trajectory(trial / "trajectory.json")
    assert trajectory.extra is not None
    listed = trajectory.extra["skills_listed"]
    assert isinstance(listed, list) and SKILL not in listed
    assert result.skill_use.listed == [] and result.skill_use.invoked == []


def test_skill_invocation_rate_is_reported_per_harness(
    curated_runs: Callable[[str], tuple[TrialResult, Path]], tmp_path: Path
) -> None:
    trials = [curated_runs(h)[1] for h in sorted(CASES)]
    run_dirs = [str(t.parents[1]) for t in trials]
    proc = skillworks("report", *run_dirs, "--out", str(tmp_path), "--format", "md")
    assert proc.returncode == 0, proc.stderr
    report = (tmp_path / "report.md").read_text()
    section = report.split("## Skill invocation", 1)[1].split("\n## ", 1)[0]
    for harness in CASES:
        row = next(line for line in section.splitlines() if line.startswith(f"| curated | {harness}"))
        assert "| 1/1 | 100.0% |" in row, row
