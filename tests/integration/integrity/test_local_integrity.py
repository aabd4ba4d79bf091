"""Issue 10 on the local (bubblewrap) backend: host secrets, root-only files, host paths, the
verifier's environment, /logs the agent locked, rewards out of range, and resource limits — each an
attack by the scripted builtin agent inside the sandbox, run through `skillworks run`.

The model provider (`scripted`) is the one test double; the sandbox, gateway and verifiers are real."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from skillworks.results import TrialResult

from .conftest import (
    BACKGROUND,
    CHMOD_LOGS,
    CSV_SHADOW,
    FORK_BOMB,
    HOST_PEEK,
    MEMORY_HOG,
    REWARD_1_5,
    SH_VERIFIER,
    USERCUSTOMIZE,
    Attack,
    agent_log,
    assert_honest_failure,
    results_by_task,
    run_suite,
    write_suite,
)

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
SECRET = f"sk-ant-integrity-{uuid.uuid4().hex}"
ATTACKS = [
    Attack("host-peek", (HOST_PEEK,)),
    Attack("usercustomize", (USERCUSTOMIZE,)),
    Attack("csv-shadow", (CSV_SHADOW,)),
    Attack("background-rewrite", (BACKGROUND,), verifier=SH_VERIFIER),
    Attack("chmod-logs", (CHMOD_LOGS,)),
    Attack("reward-out-of-range", ("echo hi",), verifier=REWARD_1_5),
    Attack("fork-bomb", (FORK_BOMB,)),
    Attack("memory-hog", (MEMORY_HOG,), memory_mb=64),
]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TrialResult], str]:
    root = tmp_path_factory.mktemp("local-integrity")
    tasks, script = write_suite(root, ATTACKS, container=False)
    env = {"ANTHROPIC_API_KEY": SECRET, "SKILLWORKS_INTEGRITY_SECRET": SECRET}
    proc, run_dir = run_suite(root, tasks, script, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, results_by_task(run_dir), proc.stdout + proc.stderr


def test_no_host_environment_inside(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    run_dir, results, _ = attacked
    seen = agent_log(run_dir, results["host-peek"], "proc.txt")
    assert "PATH=" in seen  # the attack read the sandbox's processes (its own environment)
    assert SECRET not in seen
    assert "ANTHROPIC_API_KEY" not in seen and "SKILLWORKS_INTEGRITY_SECRET" not in seen


def test_no_root_only_host_file_inside(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    run_dir, results, _ = attacked
    seen = agent_log(run_dir, results["host-peek"], "shadow.txt")
    assert "root:" not in seen  # /etc/shadow and /etc/gshadow of the host (readable to the host's root)
    if Path("/etc/ssl/private").is_dir() and os.geteuid() == 0:
        private = [p.name for p in Path("/etc/ssl/private").iterdir()]
        assert not any(name in seen for name in private)


def test_mountinfo_names_no_project_or_run_path(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    run_dir, results, _ = attacked
    mountinfo = agent_log(run_dir, results["host-peek"], "mountinfo.txt")
    assert "/proc" in mountinfo
    assert str(REPO) not in mountinfo  # the forwarder is bound from the scratch dir, not the source tree
    assert str(run_dir) not in mountinfo
    cgroups = agent_log(run_dir, results["host-peek"], "cgroup.txt")
    assert all(line.endswith(":/") for line in cgroups.splitlines()), cgroups  # a cgroup namespace


def test_usercustomize_of_the_agent_does_not_reach_the_verifier(
    attacked: tuple[Path, dict[str, TrialResult], str],
) -> None:
    assert_honest_failure(attacked[1]["usercustomize"])


def test_workspace_module_does_not_shadow_the_verifiers_stdlib(
    attacked: tuple[Path, dict[str, TrialResult], str],
) -> None:
    assert_honest_failure(attacked[1]["csv-shadow"])


def test_background_process_does_not_outlive_the_agent_phase(
    attacked: tuple[Path, dict[str, TrialResult], str],
) -> None:
    run_dir, results, _ = attacked
    assert_honest_failure(results["background-rewrite"])
    uid = run_dir / "trials" / results["background-rewrite"].trial_id / "verifier" / "logs" / "uid.txt"
    assert uid.read_text().strip() == "0"  # the verifier's own user namespace (the agent is uid 1000)


def test_locked_logs_are_the_agents_failure_not_an_error(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    assert_honest_failure(attacked[1]["chmod-logs"])


def test_reward_out_of_range_is_a_verifier_error(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    run_dir, results, _ = attacked
    result = results["reward-out-of-range"]
    assert result.reward is None and result.outcome == "error"
    assert result.error is not None and result.error.category == "verifier_error"
    assert "1.5" in result.error.message and "[0, 1]" in result.error.message
    assert (run_dir / "report.md").is_file()


def test_fork_bomb_is_bounded_or_the_run_says_so(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    run_dir, results, output = attacked
    forks = agent_log(run_dir, results["fork-bomb"], "forks.txt")
    count = int(forks.split()[-1])
    spec = json.loads((run_dir / "experiment.json").read_text())
    if any("NOT enforced" in w and "pids" in w for w in spec.get("warnings", [])):
        assert "NOT enforced" in output and "NOT enforced" in (run_dir / "report.md").read_text()
    else:
        assert count < 1024, forks  # the trial's pids limit (DEFAULT_PIDS_LIMIT) stopped it
    assert_honest_failure(results["fork-bomb"])


def test_memory_limit_is_enforced_or_the_run_says_so(attacked: tuple[Path, dict[str, TrialResult], str]) -> None:
    run_dir, results, output = attacked
    memory = agent_log(run_dir, results["memory-hog"], "memory.txt")
    spec = json.loads((run_dir / "experiment.json").read_text())
    if any("NOT enforced" in w and "memory" in w for w in spec.get("warnings", [])):
        assert "NOT enforced" in output
    else:
        assert "allocated" not in memory and "exit 0" not in memory, memory
    assert_honest_failure(results["memory-hog"])
