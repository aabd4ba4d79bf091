"""Issue 30: the pid-1 takeover attacks (ptrace, and a swapped /bin/sh with a forced restart) as a non-root
image user. The task image's Dockerfile sets `USER worker` (uid 1234) and, to give the attack what a careless
image gives it, lets that user write `/usr/bin` (so it can swap `/bin/sh`). The agent's commands run as that
user; the container's pid 1 runs as root. Each attack goes through `skillworks run` with scripted agent turns
(the model provider `scripted` is the one test double; image build, containers and verifier are real) and
must end with the honest reward 0, no error, and no host byte in the run dir; the same swap under
`verifier.isolation: shared` is the positive control (it takes the reward there). One run serves every test.

The attacks need python in the image: ``FROM debian:bookworm-slim`` is mapped to
``localhost/skillworks-python`` (scripts/build-base-image.sh --include python3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.results import TrialResult
from skillworks.sandbox.container import detect_runtime
from skillworks.sandbox.container.runtime import run_command_sync

from .attacks_fresh import PID1_PTRACE, SH_SWAP_RESTART, SOLVE, host_bytes_in
from .conftest import (
    DEBIAN,
    PY_IMAGE,
    SH_VERIFIER,
    Attack,
    agent_log,
    assert_honest_failure,
    results_by_task,
    run_suite,
    write_suite,
)

pytestmark = [pytest.mark.podman, pytest.mark.slow]

NON_ROOT = "RUN useradd -m -u 1234 worker && chown worker /app /usr/bin\nUSER worker\n"
# the ptrace injection as before, its outcome kept in the agent's logs
PTRACE = PID1_PTRACE.replace(
    "python3 /tmp/inject.py /tmp/evil.sh && sleep 0.3;",
    "python3 /tmp/inject.py /tmp/evil.sh > /logs/agent/inject.txt 2>&1; sleep 0.3;",
)
assert PTRACE != PID1_PTRACE
# the swap as before, and who the agent was when it made it
SH_SWAP = SH_SWAP_RESTART.replace("echo swapped", "echo swapped $(id -u) > /logs/agent/swap.txt")
assert SH_SWAP != SH_SWAP_RESTART

ATTACKS = [
    Attack("nonroot-pid1-ptrace", (PTRACE,), verifier=SH_VERIFIER, dockerfile_extra=NON_ROOT),
    Attack("nonroot-sh-swap-restart", (SH_SWAP,), verifier=SH_VERIFIER, dockerfile_extra=NON_ROOT),
    Attack(
        "nonroot-sh-swap-shared",
        (SH_SWAP,),
        verifier=SH_VERIFIER,
        dockerfile_extra=NON_ROOT,
        verifier_keys="  isolation: shared",
    ),
    Attack("nonroot-honest", (SOLVE,), verifier=SH_VERIFIER, dockerfile_extra=NON_ROOT),
]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TrialResult]]:
    runtime = detect_runtime()
    inspected = run_command_sync(runtime.argv("image", "inspect", "--format", "{{.Id}}", PY_IMAGE))
    assert inspected.ok, f"image {PY_IMAGE} missing: scripts/build-base-image.sh --include python3 {PY_IMAGE}"
    root = tmp_path_factory.mktemp("pid1-nonroot")
    tasks, script = write_suite(root, ATTACKS, container=True)
    proc, run_dir = run_suite(root, tasks, script, "--env", "container", "--image-map", f"{DEBIAN}={PY_IMAGE}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, results_by_task(run_dir)


def test_ptrace_of_pid1_as_the_image_user_is_refused_and_scores_the_honest_0(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    run_dir, results = attacked
    result = results["nonroot-pid1-ptrace"]
    assert_honest_failure(result)
    assert result.verifier_isolation == "fresh"
    # the kernel refuses it (pid 1 is root's): the attack ran and failed, pid 1 is untouched
    assert "PermissionError: [Errno 1] ptrace 16" in agent_log(run_dir, result, "inject.txt")  # PTRACE_ATTACH
    assert agent_log(run_dir, result, "pid1.txt").strip() != "/bin/bash /tmp/evil.sh"


def test_a_sh_swap_by_the_image_user_with_a_forced_restart_does_not_reach_the_verifier(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    run_dir, results = attacked
    result = results["nonroot-sh-swap-restart"]
    assert agent_log(run_dir, result, "swap.txt").strip() == "swapped 1234"  # the image user did swap /bin/sh
    assert_honest_failure(result)
    assert result.verifier_isolation == "fresh"
    assert (run_dir / "trials" / result.trial_id / "verifier" / "logs" / "uid.txt").read_text().strip() == "0"


def test_under_shared_isolation_the_same_swap_takes_the_reward(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    """The positive control, and what `verifier.isolation: shared` gives up: in the agent's own container the
    swapped shell's writer (started by a `/bin/sh` of the verification, as root) overwrites the honest
    verifier's 0 (as root the same swap happens to be caught as `sandbox_broken`: its writer refills the
    log dir right after the reset; here it starts later and is not)."""
    run_dir, results = attacked
    result = results["nonroot-sh-swap-shared"]
    assert agent_log(run_dir, result, "swap.txt").strip() == "swapped 1234"
    assert result.verifier_isolation == "shared"
    assert "score 0.0" in (run_dir / "trials" / result.trial_id / "verifier" / "stdout.txt").read_text()
    assert result.reward == 1.0, (result.reward, result.failure_mode, result.failure_detail)


def test_the_honest_image_user_scores_1_and_no_host_byte_is_in_the_run_dir(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    run_dir, results = attacked
    honest = results["nonroot-honest"]
    assert honest.error is None and honest.reward == 1.0 and honest.outputs_not_copied == []
    assert host_bytes_in(run_dir) == []
