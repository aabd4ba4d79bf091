"""A verifier that writes no reward is an error with its reason, never a 0; Ctrl-C stops a run cleanly."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from skillworks import __version__
from skillworks.experiment import AgentConfig, ExperimentSpec, RunStore, run_experiment
from skillworks.experiment.spec import task_ref
from skillworks.tasks import load_task

pytestmark = [pytest.mark.bwrap]


def make_task(
    root: Path, test_sh: str, solve_sh: str = "mkdir -p /app/output && echo ok > /app/output/x.txt\n"
) -> Path:
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "input.txt").write_text("hello\n")
    (root / "verifier").mkdir()
    (root / "verifier" / "test.sh").write_text("#!/usr/bin/env bash\n" + test_sh)
    (root / "oracle").mkdir()
    (root / "oracle" / "solve.sh").write_text("#!/usr/bin/env bash\n" + solve_sh)
    (root / "task.md").write_text(
        textwrap.dedent(
            """\
            ---
            schema_version: "1.3"
            environment:
              network_mode: no-network
            agent:
              timeout_sec: 60
            verifier:
              timeout_sec: 60
            ---
            Write ok to /app/output/x.txt.
            """
        )
    )
    return root


def run_one(task_dir: Path, out: Path, agent: str = "oracle") -> Any:
    task = load_task(task_dir)
    spec = ExperimentSpec(
        run_id="r",
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(task)],
        conditions=["none"],
        agents=[AgentConfig(name=agent)],
        trials=1,
        seed=0,
        concurrency=1,
    )
    (result,) = asyncio.run(run_experiment(spec, [task], out / "r")).results
    return result


def test_verifier_that_writes_no_reward_is_an_error_not_zero(tmp_path: Path) -> None:
    task = make_task(tmp_path / "no-reward", "echo 'tests ran'\nexit 0\n")
    result = run_one(task, tmp_path)
    assert result.reward is None
    assert result.outcome == "error"
    assert result.error.category == "verifier_error"
    assert result.error.phase == "verify"
    assert "wrote no reward" in result.error.message


def test_garbled_reward_is_an_error(tmp_path: Path) -> None:
    task = make_task(tmp_path / "garbled", "mkdir -p /logs/verifier && echo PASSED > /logs/verifier/reward.txt\n")
    result = run_one(task, tmp_path)
    assert result.outcome == "error" and "does not hold one number" in result.error.message


def test_agent_timeout_is_classified(tmp_path: Path) -> None:
    task = make_task(
        tmp_path / "slow",
        "mkdir -p /logs/verifier; [ -f /app/output/x.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
        solve_sh="sleep 600\n",
    )
    text = (task / "task.md").read_text().replace("timeout_sec: 60\nverifier", "timeout_sec: 2\nverifier")
    (task / "task.md").write_text(text)
    started = time.monotonic()
    result = run_one(task, tmp_path)
    assert time.monotonic() - started < 60
    assert result.reward == 0.0 and result.failure_mode == "timeout"


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_keeps_recorded_results(tmp_path: Path) -> None:
    # one quick task (its trials get recorded) and one whose oracle takes a minute (its trials are running
    # when Ctrl-C arrives), so the interrupt always meets both finished and running trials
    suite = tmp_path / "suite"
    test_sh = "mkdir -p /logs/verifier; [ -f /app/output/x.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
    make_task(suite / "quick", test_sh)
    make_task(suite / "slow", test_sh, solve_sh="sleep 60\n")
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skillworks.cli.main",
            "run",
            str(suite),
            "--agent",
            "oracle",
            "--conditions",
            "none",
            "--trials",
            "3",
            "--concurrency",
            "2",
            "--out",
            str(runs),
            "--run-id",
            "c",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = runs / "c" / "results.jsonl"
    deadline = time.monotonic() + 120
    descendants: list[int] = []
    while time.monotonic() < deadline:
        recorded_lines = results.read_text().count("\n") if results.is_file() else 0
        descendants = _descendants(proc.pid)
        if recorded_lines >= 1 and any(_alive(p) for p in descendants):
            break
        time.sleep(0.05)
    assert descendants, "expected running sandboxes to interrupt"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "--resume" in err
    recorded = RunStore(runs / "c").read_results()
    assert 1 <= len(recorded) < 6
    assert all(r.task_id == "quick" for r in recorded)  # interrupted trials are not recorded
    # no process the run started survives, and no sandbox scratch dir is left behind
    assert [pid for pid in descendants if _alive(pid)] == []
    assert not list(Path(tempfile.gettempdir()).glob("sw-scratch-*-c-*"))


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie awaiting reaping by init (already dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class _BuggyAgent:
    name = "buggy"
    needs_model = False
    version = "test"

    def skills_dir(self, home: str, workdir: str) -> str | None:
        return None

    async def run(self, ctx: Any) -> Any:
        raise KeyError("a bug in an agent")


def test_a_bug_in_one_trial_is_recorded_with_its_traceback_and_the_run_goes_on(tmp_path: Path) -> None:
    from skillworks.agents import register_agent

    register_agent("buggy", lambda **_: _BuggyAgent())
    tasks = [load_task(make_task(tmp_path / f"t{i}", "exit 0\n")) for i in range(2)]
    spec = ExperimentSpec(
        run_id="bug",
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(t) for t in tasks],
        conditions=["none"],
        agents=[AgentConfig(name="buggy")],
        trials=2,
        seed=0,
        concurrency=2,
    )
    outcome = asyncio.run(run_experiment(spec, tasks, tmp_path / "bug"))
    assert len(outcome.results) == 4
    for result in outcome.results:
        assert result.outcome == "error" and result.reward is None
        assert result.error.phase == "internal" and result.error.category == "KeyError"
        log = tmp_path / "bug" / "trials" / result.trial_id / "error.log"
        assert "a bug in an agent" in log.read_text()
