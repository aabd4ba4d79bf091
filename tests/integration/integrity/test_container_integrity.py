"""Issue 10 on the container backend: the verifier's environment, an agent process left running into
grading, /logs the agent locked, and exhausted pids — each an attack by the scripted builtin agent
inside the container, run through `skillworks run`.

The attacks need python in the image: the task Dockerfiles say ``FROM debian:bookworm-slim``, mapped to
``localhost/skillworks-python`` (scripts/build-base-image.sh --include python3, built by
scripts/install-system-deps.sh test). The model provider (`scripted`) is the one test double."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillworks.results import TrialResult
from skillworks.sandbox.container import detect_runtime
from skillworks.sandbox.container.runtime import run_command_sync

from .conftest import (
    BACKGROUND,
    CHMOD_LOGS,
    CSV_SHADOW,
    DEBIAN,
    PIDS_EXHAUST,
    PY_IMAGE,
    SH_VERIFIER,
    USERCUSTOMIZE,
    Attack,
    agent_log,
    assert_honest_failure,
    results_by_task,
    run_suite,
    write_suite,
)

pytestmark = [pytest.mark.podman, pytest.mark.slow]

PIDS_LIMIT = 64  # the run's containers get --pids-limit 64, so the pids attack stays small
ATTACKS = [
    Attack("usercustomize", (USERCUSTOMIZE,)),
    Attack("csv-shadow", (CSV_SHADOW,)),
    Attack("background-rewrite", (BACKGROUND,), verifier=SH_VERIFIER),
    Attack("chmod-logs", (CHMOD_LOGS,)),
    Attack("pids-exhaust", (PIDS_EXHAUST,)),
]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TrialResult]]:
    runtime = detect_runtime()
    inspected = run_command_sync(runtime.argv("image", "inspect", "--format", "{{.Id}}", PY_IMAGE))
    assert inspected.ok, f"image {PY_IMAGE} missing: scripts/build-base-image.sh --include python3 {PY_IMAGE}"
    root = tmp_path_factory.mktemp("container-integrity")
    tasks, script = write_suite(root, ATTACKS, container=True)
    run_flags = f"{os.environ.get('SKILLWORKS_CONTAINER_RUN_FLAGS', '')} --pids-limit {PIDS_LIMIT}".strip()
    proc, run_dir = run_suite(
        root,
        tasks,
        script,
        "--env",
        "container",
        "--image-map",
        f"{DEBIAN}={PY_IMAGE}",
        env={"SKILLWORKS_CONTAINER_RUN_FLAGS": run_flags},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, results_by_task(run_dir)


def test_usercustomize_of_the_agent_does_not_reach_the_verifier(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    assert_honest_failure(attacked[1]["usercustomize"])


def test_workspace_module_does_not_shadow_the_verifiers_stdlib(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    assert_honest_failure(attacked[1]["csv-shadow"])


def test_background_process_is_gone_before_the_verifier(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, results = attacked
    assert_honest_failure(results["background-rewrite"])
    uid = run_dir / "trials" / results["background-rewrite"].trial_id / "verifier" / "logs" / "uid.txt"
    assert uid.read_text().strip() == "0"  # the verifier runs as root, whatever the image's user


def test_locked_logs_are_the_agents_failure_not_an_error(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    assert_honest_failure(attacked[1]["chmod-logs"])


def test_exhausted_pids_are_the_agents_failure_not_an_error(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, results = attacked
    result = results["pids-exhaust"]
    spawned = agent_log(run_dir, result, "spawned.txt")
    assert int(spawned.split()[-1]) >= PIDS_LIMIT // 2, spawned  # the attack did fill the container
    assert result.error is None, result.error
    assert result.reward == 0.0 and result.outcome == "failed"
    # ended by a restart of the container (graded normally), or, if even that failed, sandbox_broken
    assert result.failure_mode in ("no_output", "verification_failed", "sandbox_broken")
