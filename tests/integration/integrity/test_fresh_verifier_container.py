"""Issue 30 on the container backend: the verifier runs in a fresh container of the task's image with the
agent's outputs copied in, so nothing the agent left in its own container (site-packages hooks, a python3
earlier on PATH, a swapped /bin/sh that took over pid 1 through a forced restart, a pid 1 made to exec a reward writer by
ptrace, a pytest.ini and
conftest.py at /) reaches grading; no download follows a link onto the host; FIFOs and sparse files are
skipped, never inflated. Each attack goes through `skillworks run` with scripted agent turns (the model
provider `scripted` is the one test double); every one of them scored 1.0 on the old same-container
verifier (the site-packages hook still does with the explicit `verifier.isolation: shared`, shown below;
the sh-swap one is now caught there too: the swapped shell's writer fills the verifier's log dir after
its reset, and the trial is `sandbox_broken`).

The attacks need python in the image: ``FROM debian:bookworm-slim`` is mapped to
``localhost/skillworks-python`` (scripts/build-base-image.sh --include python3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.results import TrialResult
from skillworks.sandbox.container import detect_runtime
from skillworks.sandbox.container.runtime import run_command_sync

from .attacks_fresh import (
    AGENT_LOG_LINKS_INSIDE,
    AGENT_LOGS_LINK,
    COPYING_VERIFIER,
    DECLARED_VERIFIER,
    FIFO_SPARSE,
    PATH_PYTHON,
    PID1_PTRACE,
    PTH_HOOK,
    PYTEST_CONFTEST,
    PYTEST_TEST,
    PYTEST_VERIFIER,
    SH_SWAP_RESTART,
    SITECUSTOMIZE,
    SOLVE,
    SOLVE_AND_STRAY,
    SOLVE_DECLARED,
    VERIFIER_LOG_LINK,
    add_pytest_to_context,
    apparent_size,
    host_bytes_in,
)
from .conftest import (
    DEBIAN,
    PY_IMAGE,
    SH_VERIFIER,
    Attack,
    assert_honest_failure,
    results_by_task,
    run_suite,
    write_suite,
)

pytestmark = [pytest.mark.podman, pytest.mark.slow]

ATTACKS = [
    Attack("pth-hook", (PTH_HOOK,)),
    Attack("sitecustomize", (SITECUSTOMIZE,)),
    Attack("path-python", (PATH_PYTHON,)),
    Attack("sh-swap-restart", (SH_SWAP_RESTART,), verifier=SH_VERIFIER),
    Attack("pid1-ptrace", (PID1_PTRACE,), verifier=SH_VERIFIER),
    Attack("pth-hook-shared", (PTH_HOOK,), verifier_keys="  isolation: shared"),
    Attack(
        "pytest-config",
        (PYTEST_CONFTEST,),
        verifier=PYTEST_VERIFIER,
        verifier_files=(("test_answer.py", PYTEST_TEST),),
    ),
    Attack("agent-logs-link", (AGENT_LOGS_LINK,)),
    Attack("agent-log-links", (AGENT_LOG_LINKS_INSIDE,)),
    Attack("verifier-log-link", (VERIFIER_LOG_LINK,), verifier=COPYING_VERIFIER),
    Attack("fifo-sparse", (FIFO_SPARSE,)),
    Attack("honest", (SOLVE,)),
    Attack("honest-stray", (SOLVE_AND_STRAY,)),
    Attack("declared-input", (SOLVE_DECLARED,), verifier=DECLARED_VERIFIER, verifier_keys="  inputs: [/srv/result]"),
]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TrialResult]]:
    runtime = detect_runtime()
    inspected = run_command_sync(runtime.argv("image", "inspect", "--format", "{{.Id}}", PY_IMAGE))
    assert inspected.ok, f"image {PY_IMAGE} missing: scripts/build-base-image.sh --include python3 {PY_IMAGE}"
    root = tmp_path_factory.mktemp("fresh-verifier-container")
    tasks, script = write_suite(root, ATTACKS, container=True)
    env_dir = tasks / "pytest-config" / "environment"
    lines = add_pytest_to_context(env_dir)
    dockerfile = env_dir / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + lines)
    proc, run_dir = run_suite(root, tasks, script, "--env", "container", "--image-map", f"{DEBIAN}={PY_IMAGE}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, results_by_task(run_dir)


@pytest.mark.parametrize(
    "name", ["pth-hook", "sitecustomize", "path-python", "sh-swap-restart", "pid1-ptrace", "pytest-config"]
)
def test_what_the_agent_left_in_its_container_does_not_reach_the_verifier(
    attacked: tuple[Path, dict[str, TrialResult]], name: str
) -> None:
    run_dir, results = attacked
    result = results[name]
    assert_honest_failure(result)
    assert result.verifier_isolation == "fresh"
    if name == "pid1-ptrace":  # the attack did take over the agent's pid 1
        pid1 = run_dir / "trials" / result.trial_id / "agent" / "sandbox-logs" / "pid1.txt"
        assert pid1.read_text().strip() == "/bin/bash /tmp/evil.sh"
    if name == "pytest-config":  # pytest did run in the fresh container, and failed the test honestly
        assert "1 failed" in (run_dir / "trials" / result.trial_id / "verifier" / "stdout.txt").read_text()


def test_shared_isolation_is_the_explicit_opt_in_that_gives_this_up(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    run_dir, results = attacked
    shared = results["pth-hook-shared"]
    assert shared.verifier_isolation == "shared"
    assert shared.reward == 1.0  # the same attack that fails above: what `isolation: shared` gives up
    assert "verifier: shared" in (run_dir / "report.md").read_text()


def test_no_download_follows_a_link_onto_the_host(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, results = attacked
    assert host_bytes_in(run_dir) == []
    for name in ("agent-logs-link", "agent-log-links", "verifier-log-link"):
        assert_honest_failure(results[name])
    logs = run_dir / "trials" / results["agent-logs-link"].trial_id / "agent"
    assert "/logs/agent: is a link (not followed)" in (logs / "sandbox-logs.skipped.txt").read_text()
    verifier_logs = run_dir / "trials" / results["verifier-log-link"].trial_id / "verifier"
    skipped = (verifier_logs / "logs.skipped.txt").read_text()
    assert "report.txt: symbolic link to '/etc/passwd'" in skipped, skipped
    assert (verifier_logs / "logs" / "outputs").is_dir()  # the copy itself went on


def test_fifos_and_sparse_files_are_skipped_not_inflated(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, results = attacked
    result = results["fifo-sparse"]
    assert_honest_failure(result)
    trial = run_dir / "trials" / result.trial_id
    assert apparent_size(trial) < 16 << 20
    logs = trial / "agent" / "sandbox-logs"
    assert (logs / "small.txt").read_text() == "small\n"
    skipped = (trial / "agent" / "sandbox-logs.skipped.txt").read_text()
    assert "huge.bin: 1073741824 bytes: over the cap" in skipped and "pipe: FIFO: not copied" in skipped
    assert any("huge.bin" in line for line in result.outputs_skipped)  # the outputs copy skipped it too
    assert any("pipe: FIFO" in line for line in result.outputs_skipped)


def test_outputs_reach_the_fresh_verifier_and_strays_are_listed(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    run_dir, results = attacked
    honest = results["honest"]
    assert honest.reward == 1.0 and honest.outputs_not_copied == [] and honest.verifier_isolation == "fresh"
    stray = results["honest-stray"]
    assert stray.reward == 1.0 and stray.outputs_not_copied == ["/srv/stray/notes.txt"], stray.outputs_not_copied
    page = (run_dir / "trials" / stray.trial_id / "trial.html").read_text()
    assert "/srv/stray" in page and "fresh sandbox" in page
    declared = results["declared-input"]
    assert declared.reward == 1.0 and declared.outputs_not_copied == []
