"""Issues 4 and 17 acceptance: each real agent CLI (installed by scripts/install-agent-clis.sh) runs against
the gateway on both sandbox backends — the local bubblewrap sandbox and a `--network none` task container
(the matrix: five harnesses x local/container). Only the model is fake: the `scripted` provider replays
tests/fixtures/harness_scripts/<harness>.yaml, whose `expect` clauses make the gateway fail the trial if the
CLI did not send what a real run would (the skill's body after the skill-loading turn), so a failed skill
load cannot pass. Each script first tries a skill that does not exist (a misspelt name; for Codex, which has no
skill tool, a wrong path): that must be recorded as a failed load, not an invocation. Where the CLI sends
reasoning back (all but OpenCode), the write turn's signed thinking must return on the next turn."""

from __future__ import annotations

import json
import os
import shutil
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
BACKENDS = ["local", pytest.param("container", marks=pytest.mark.podman)]
DEBIAN = "debian:bookworm-slim"
BASE_IMAGE = os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base")
# OpenHands runs on the host's Python, whose modules need libssl3 & co. in the image, as every image with python3
# has; the bare debootstrap base has none (see test_python_harness_in_an_image_without_its_libraries)
PY_IMAGE = os.environ.get("SKILLWORKS_TEST_PYTHON_IMAGE", "localhost/skillworks-python")
_IMAGE_FOR = {"openhands": PY_IMAGE}

SKILL = "house-greeting"
CARD = "/app/card.txt"
SCRIPT = "house-greeting/scripts/card.sh"


@dataclass(frozen=True)
class Case:
    skills_dir: str  # relative to $HOME (/home/agent in the local sandbox, the image's home in a container)
    load_tool: str  # ATIF function name of the call that loads the skill
    write_tool: str  # ATIF function name of the call that writes the card
    scripts_run: tuple[str, ...] = ()  # the scripted run writes the card with the skill's script
    failed_load: str = "house-greetings"  # the misspelt skill the script's first turn tries to load


CASES = {
    "claude-code": Case(".claude/skills", "Skill", "Write"),
    "codex": Case(".agents/skills", "exec_command", "exec_command", (SCRIPT,), failed_load=SKILL),
    "gemini-cli": Case(".gemini/skills", "activate_skill", "write_file"),
    "opencode": Case(".config/opencode/skills", "skill", "bash", (SCRIPT,)),
    "openhands": Case(".openhands/skills", "invoke_skill", "file_editor"),
}
HOMES = {"local": "/home/agent", "container": "/root"}


def _task(env: str, out: Path) -> Path:
    """The fixture task; for the container backend a copy with a Dockerfile (the script keys on its id)."""
    if env == "local":
        return TASK
    task = out / "tasks" / TASK.name
    if not task.exists():
        shutil.copytree(TASK, task)
        (task / "environment" / "Dockerfile").write_text(f"FROM {DEBIAN}\nWORKDIR /app\n")
    return task


def _run(
    harness: str,
    condition: str,
    script: Path,
    out: Path,
    env: str = "local",
    image: str | None = None,
    options: tuple[str, ...] = (),
) -> tuple[TrialResult, Path]:
    image = image or _IMAGE_FOR.get(harness, BASE_IMAGE)
    backend = ["--env", "container", "--image-map", f"{DEBIAN}={image}"] if env == "container" else []
    run_id = f"{harness}-{condition}-{env}"
    proc = skillworks(
        "run", str(_task(env, out)), "--agent", harness, "--model", f"scripted/{script}",
        "--conditions", condition, "--out", str(out), "--run-id", run_id, *backend, *options,
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    run_dir = out / run_id
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
def curated_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., tuple[TrialResult, Path]]:
    """The curated-condition run of each harness, made once per module (the report test reuses them)."""
    out = tmp_path_factory.mktemp("curated-runs")
    done: dict[tuple[str, str], tuple[TrialResult, Path]] = {}

    def get(harness: str, env: str = "local") -> tuple[TrialResult, Path]:
        if (harness, env) not in done:
            done[harness, env] = _run(harness, "curated", SCRIPTS / f"{harness}.yaml", out, env)
        return done[harness, env]

    return get


@pytest.mark.parametrize("env", BACKENDS)
@pytest.mark.parametrize("harness", sorted(CASES))
def test_harness_loads_the_curated_skill_and_solves_the_task(
    harness: str, env: str, curated_runs: Callable[..., tuple[TrialResult, Path]]
) -> None:
    case = CASES[harness]
    result, trial = curated_runs(harness, env)

    # the verifier scored the card the CLI wrote; nothing broke
    assert result.error is None, result.error
    assert (result.outcome, result.reward) == ("solved", 1.0)

    # the skill was staged where this harness looks, and the harness itself listed it
    staged = json.loads((trial / "skills.json").read_text())
    skills_dir = f"{HOMES[env]}/{case.skills_dir}"
    assert [(s["name"], s["path"]) for s in staged["visible"]] == [(SKILL, f"{skills_dir}/{SKILL}")]
    trajectory = validate_trajectory(trial / "trajectory.json")  # raises if the ATIF is invalid
    assert trajectory.extra is not None and SKILL in trajectory.extra["skills_listed"]
    assert result.skill_use.listed == [SKILL]

    # every scripted turn was answered, in order: turn 2's `expect` only passes if the CLI executed the
    # skill-loading call of turn 1 and sent the skill's body back to the model
    calls = read_calls(trial / "gateway.jsonl")
    model_calls = [c for c in calls if c.is_model_call]
    assert [c.status for c in calls] == ["ok"] * len(calls)
    assert [c.script_turn for c in model_calls] == [1, 2, 3, 4]

    # the ATIF trajectory shows the skill invocation and the CLI's own tool writing the output file
    loads = _executed_calls(trajectory, case.load_tool)
    assert any(SKILL in json.dumps(args) for args in loads), loads
    writes = _executed_calls(trajectory, case.write_tool)
    assert any(CARD in json.dumps(args) for args in writes), writes
    assert result.skill_use.invoked == [SKILL] and result.skill_use.failed == [case.failed_load]
    assert result.skill_use.scripts_run == list(case.scripts_run)

    # usage of record is the gateway's; what the harness reported in its own log agrees with it
    gateway = usage_totals(trial / "gateway.jsonl")
    assert result.usage == gateway and gateway.calls == 4 and gateway.input_tokens > 0
    native = converter_for(harness)(trial / "agent" / f"{harness}.events.jsonl").usage
    assert native is not None
    assert (native.input_tokens, native.output_tokens) == (gateway.input_tokens, gateway.output_tokens)
    if harness == "claude-code":  # its log has each step's opening count (0); the steps carry the gateway's
        steps = [s.metrics for s in trajectory.steps if s.source == "agent" and s.metrics is not None]
        assert len(steps) == 4 and all((m.completion_tokens or 0) > 0 for m in steps), steps

    # the trial's files, trajectory.json included, have one mode; OpenCode's own session record is kept
    assert (trial / "trajectory.json").stat().st_mode == (trial / "skills.json").stat().st_mode
    if harness == "opencode":
        share = trial / "agent" / "home" / ".local" / "share" / "opencode"
        assert (share / "opencode.db").stat().st_size > 0 and list((share / "log").glob("*.log"))


def test_an_errored_harness_trial_keeps_its_skill_use(tmp_path: Path) -> None:
    """A real CLI lists the skill, fails to load a misspelt one, loads the real one; then the model provider
    refuses the next call (400, not retried): the trial is an error and still reports what the agent did."""
    script = tmp_path / "errored.yaml"
    turns = [
        {"text": "Loading.", "tool_calls": [{"name": "Skill", "arguments": {"skill": "house-greetings"}}]},
        {"text": "Loading the right one.", "tool_calls": [{"name": "Skill", "arguments": {"skill": SKILL}}]},
        {"text": "never sent", "fail": {"status": 400, "times": 9, "message": "prompt is too long"}},
    ]
    script.write_text(json.dumps({"default": turns}))  # JSON is YAML
    result, _ = _run("claude-code", "curated", script, tmp_path)
    assert result.outcome == "error" and result.error is not None and result.error.category == "bad_request"
    use = result.skill_use
    assert (use.listed, use.invoked, use.failed) == ([SKILL], [SKILL], ["house-greetings"])
    assert "verify" in use.harness_provided


@pytest.mark.podman
def test_python_harness_in_an_image_without_its_libraries_is_a_clear_setup_error(tmp_path: Path) -> None:
    """OpenHands' interpreter comes from the host; in an image without libssl3 it cannot start. The trial says
    so before the CLI runs (harness_setup naming the image), instead of a crash deep inside the CLI."""
    result, _ = _run("openhands", "curated", SCRIPTS / "openhands.yaml", tmp_path, "container", image=BASE_IMAGE)
    assert result.outcome == "error" and result.error is not None
    assert result.error.category == "harness_setup", result.error
    assert "libssl" in result.error.message and "image" in result.error.message


@pytest.mark.podman
def test_an_image_where_node_cannot_run_is_a_clear_setup_error(tmp_path: Path) -> None:
    """Node is the host's, mounted into the image; in an image without the C++ runtime it links (libstdc++) it
    cannot start. The trial says so before the CLI runs (harness_setup naming node and the image)."""
    task = tmp_path / "tasks" / TASK.name
    shutil.copytree(TASK, task)
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {DEBIAN}\nRUN find / -xdev -name 'libstdc++.so.6*' -delete\nWORKDIR /app\n"
    )
    proc = skillworks(
        "run", str(task), "--agent", "gemini-cli", "--model", f"scripted/{SCRIPTS / 'gemini-cli.yaml'}",
        "--conditions", "curated", "--out", str(tmp_path), "--run-id", "no-node", "--env", "container",
        "--image-map", f"{DEBIAN}={BASE_IMAGE}",
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    [result] = RunStore(tmp_path / "no-node").read_results()
    assert result.outcome == "error" and result.error is not None and result.error.category == "harness_setup"
    message = result.error.message
    assert "needs `node`" in message and "libstdc++.so.6" in message and "glibc and libstdc++" in message, message
    assert not (tmp_path / "no-node" / result.paths["trial_dir"] / "agent" / "gemini-cli.events.jsonl").exists()


@pytest.mark.parametrize("harness", sorted(CASES))
def test_none_condition_harness_lists_no_task_skill(harness: str, tmp_path: Path) -> None:
    # OpenHands runs with its switch on (its other runs show the default): the public-skills clone it starts
    # with is pointed nowhere (see specs/openhands.py)
    off = ("--agent-option", "harness_skills=false") if harness == "openhands" else ()
    result, trial = _run(harness, "none", SCRIPTS / "none.yaml", tmp_path, options=off)
    assert result.error is None, result.error
    assert result.outcome == "failed"  # nothing written: scored 0 by the verifier, not an error
    staged = json.loads((trial / "skills.json").read_text())
    assert staged["ok"] is True and staged["visible"] == []
    trajectory = validate_trajectory(trial / "trajectory.json")
    assert trajectory.extra is not None
    listed = trajectory.extra["skills_listed"]
    assert isinstance(listed, list) and SKILL not in listed
    assert result.skill_use.listed == [] and result.skill_use.invoked == []
    # what the harness listed beyond the staged skills is its own, recorded under `none` too (issue 17)
    provided = staged["harness_skills"]
    assert [p["name"] for p in provided] == result.skill_use.harness_provided == listed
    assert all(p["origin"].startswith(f"bundled with {harness} ") for p in provided)
    if harness == "claude-code":  # it bundles ~16 skills (deep-research, verify, ...)
        assert {"verify", "debug", "simplify"} <= set(result.skill_use.harness_provided)
    if harness == "codex":  # its system skills are files it writes at start: hashed
        assert len(provided) >= 3 and all(p["sha256"] and p["path"].startswith("~/.codex/skills/") for p in provided)
    if harness == "openhands":  # the clone failed on the rewritten URL, not for want of network
        stderr = " ".join((trial / "agent" / "openhands.stderr.txt").read_text().split())
        assert "git clone" in stderr and "nonexistent" in stderr and "Could not resolve host" not in stderr
        options = json.loads((trial.parents[1] / "experiment.json").read_text())["agents"][0]["options"]
        assert options["harness_skills"] is False


def test_bundled_skills_can_be_switched_off(tmp_path: Path) -> None:
    """`--agent-option harness_skills=false` sets the CLI's own switch (Claude Code: an environment variable;
    Codex: `-c skills.bundled.enabled=false`); experiment.json records the option (its default too), and what
    the CLI still lists is recorded, not hidden. A CLI without a switch refuses the option."""
    on, _ = _run("claude-code", "none", SCRIPTS / "none.yaml", tmp_path)
    off_option = ("--agent-option", "harness_skills=false")
    off, _ = _run("claude-code", "none", SCRIPTS / "none.yaml", tmp_path / "off", options=off_option)
    assert off.error is None and len(off.skill_use.harness_provided) < len(on.skill_use.harness_provided) / 2
    assert not {"verify", "debug", "simplify"} & set(off.skill_use.harness_provided)
    options = [json.loads((out / "claude-code-none-local" / "experiment.json").read_text())["agents"][0]["options"]
               for out in (tmp_path, tmp_path / "off")]  # fmt: skip
    assert [o["harness_skills"] for o in options] == [True, False]
    codex_off, trial = _run("codex", "none", SCRIPTS / "none.yaml", tmp_path, options=off_option)
    assert codex_off.error is None and codex_off.skill_use.harness_provided == []  # 4 when on (see above)
    assert not (trial / "agent" / "home" / ".codex" / "skills").exists()  # not even written
    refused = skillworks(
        "run", str(TASK), "--agent", "opencode", "--model", f"scripted/{SCRIPTS / 'none.yaml'}", "--conditions",
        "none", *off_option, "--out", str(tmp_path), "--run-id", "opencode-off",
    )  # fmt: skip
    assert refused.returncode != 0 and "harness_skills=false is not supported" in refused.stderr


def test_skill_invocation_rate_is_reported_per_harness(
    curated_runs: Callable[..., tuple[TrialResult, Path]], tmp_path: Path
) -> None:
    trials = [curated_runs(h)[1] for h in sorted(CASES)]
    run_dirs = [str(t.parents[1]) for t in trials]
    proc = skillworks("report", *run_dirs, "--out", str(tmp_path), "--format", "md")
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    report = (tmp_path / "report.md").read_text()
    section = report.split("## Skill invocation", 1)[1].split("\n## ", 1)[0]
    for harness in CASES:
        row = next(line for line in section.splitlines() if line.startswith(f"| curated | {harness}"))
        assert "| 1/1 | 100.0% |" in row, row
        failed = CASES[harness].failed_load
        assert row.endswith(f"| 1 ({failed} ×1) |"), row  # the misspelt load: shown, not an invocation
    # and the skills the CLIs brought themselves (curated runs list them too)
    assert "Skills the harness brought itself" in section and "verify ×1" in section and "imagegen ×1" in section
