"""Issue 30: a task refused at load (here a reserved workdir) is reported as a task error and the run's
other tasks still run; the run exits non-zero. Through `skillworks run` with the scripted builtin agent
(`scripted` provider: the one test double; sandbox and verifier real)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Attack, results_by_task, run_suite, write_suite

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


def test_a_refused_task_does_not_abort_the_others(tmp_path: Path) -> None:
    tasks, script = write_suite(
        tmp_path, [Attack("fine", ("echo 42 > /app/answer.txt",)), Attack("bad", ("true",))], container=False
    )
    md = tasks / "bad" / "task.md"
    md.write_text(
        md.read_text().replace("  network_mode: no-network", "  network_mode: no-network\n  workdir: /logs/verifier")
    )
    proc, run_dir = run_suite(tmp_path, tasks, script)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "task error" in proc.stderr and "bad/task.md" in proc.stderr and "reserved" in proc.stderr
    results = results_by_task(run_dir)
    assert set(results) == {"fine"}
    assert results["fine"].reward == 1.0 and results["fine"].error is None
