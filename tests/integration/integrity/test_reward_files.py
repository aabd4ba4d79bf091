"""Issue 30: reward files the verifier's honest writer did not leave. The verifier here writes its
honest reward.txt, then runs the agent's deliverable `/app/report.sh` (as real verifiers run the
agent's program); the attacking agent's script then forges a reward.json that contradicts it, swaps
reward.txt for a link to a host file or a FIFO, or writes an oversized reward file. Each is the agent's
failure (reward 0, failure mode ``reward_file_refused``), never a 1.0, never an infrastructure error,
and no host byte reaches the run dir. Run through `skillworks run` with the scripted builtin agent;
the model provider (`scripted`) is the one test double, sandbox, gateway and verifier are real."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.results import TrialResult

from .conftest import DEBIAN, PY_IMAGE, Attack, results_by_task, run_suite, write_suite

pytestmark = [pytest.mark.slow]

HOST_FILE = Path("/etc/hostname") if Path("/etc/hostname").is_file() else Path("/etc/os-release")
VERIFIER = """\
mkdir -p /logs/verifier
if grep -qx 42 /app/answer.txt 2>/dev/null; then r=1.0; else r=0.0; fi
echo "$r" > /logs/verifier/reward.txt
[ -f /app/report.sh ] && bash /app/report.sh
exit 0
"""


def _deliver(script: str) -> str:
    """The agent's turn: write /app/report.sh, the program the verifier runs after scoring."""
    return f"cat > /app/report.sh <<'SH'\n{script}\nSH\necho delivered"


ATTACKS = [
    Attack("forge-json", (_deliver("""echo '{"reward": 1.0}' > /logs/verifier/reward.json"""),), verifier=VERIFIER),
    Attack(
        "link-to-host",
        (_deliver(f"rm -f /logs/verifier/reward.txt; ln -s {HOST_FILE} /logs/verifier/reward.txt"),),
        verifier=VERIFIER,
    ),
    Attack("fifo", (_deliver("rm -f /logs/verifier/reward.txt; mkfifo /logs/verifier/reward.txt"),), verifier=VERIFIER),
    Attack(
        "oversized",
        (_deliver("{ echo 1.0; head -c 200000 /dev/zero | tr '\\\\0' ' '; } > /logs/verifier/reward.txt"),),
        verifier=VERIFIER,
    ),
]


@pytest.fixture(
    scope="module",
    params=[pytest.param("local", marks=pytest.mark.bwrap), pytest.param("container", marks=pytest.mark.podman)],
)
def attacked(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, TrialResult]]:
    backend = str(request.param)
    root = tmp_path_factory.mktemp(f"reward-files-{backend}")
    tasks, script = write_suite(root, ATTACKS, container=backend == "container")
    args = ("--env", "container", "--image-map", f"{DEBIAN}={PY_IMAGE}") if backend == "container" else ()
    # as a pip-installed user runs it: no SKILLWORKS_CONTAINER_*_FLAGS (the host probe chooses the flags)
    no_flags = {f"SKILLWORKS_CONTAINER_{kind}_FLAGS": "" for kind in ("GLOBAL", "RUN", "BUILD")}
    proc, run_dir = run_suite(root, tasks, script, *args, env=no_flags)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, results_by_task(run_dir)


@pytest.mark.parametrize("name", [a.name for a in ATTACKS])
def test_a_forged_reward_file_is_the_agents_failure(attacked: tuple[Path, dict[str, TrialResult]], name: str) -> None:
    _, results = attacked
    result = results[name]
    assert result.error is None, result.error
    assert result.reward == 0.0 and result.outcome == "failed"
    assert result.failure_mode == "reward_file_refused", (result.failure_mode, result.failure_detail)


def test_no_host_byte_in_the_run_dir(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, _ = attacked
    host = HOST_FILE.read_bytes().strip()
    assert host
    for path in run_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert host not in path.read_bytes(), path
