"""`tasks check --oracle` keeps what explains a failure, and a task whose oracle cannot run only
matters to the oracle agent (issue 10, "real tasks as written"; local sandbox)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
LOAN = REPO / "examples" / "quickstart" / "loan-amortization"

pytestmark = pytest.mark.bwrap


@pytest.fixture
def task(tmp_path: Path) -> Path:
    dst = tmp_path / "tasks" / "loan-amortization"
    shutil.copytree(LOAN, dst)
    return dst


def test_a_failing_oracle_keeps_its_run_dir_and_names_it(task: Path, cli: Any) -> None:
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'oracle went wrong' >&2\nexit 4\n")
    proc = cli("tasks", "check", str(task), "--oracle", "--json")
    assert proc.returncode == 1, proc.stderr
    (row,) = json.loads(proc.stdout)
    trial_dir = Path(row["oracle"]["trial_dir"])
    assert trial_dir.is_dir()
    assert "oracle went wrong" in (trial_dir / "agent" / "oracle.stderr.txt").read_text()
    assert (trial_dir / "verifier" / "stdout.txt").is_file()
    shutil.rmtree(trial_dir.parents[2])  # the temp dir holding the kept run
    proc = cli("tasks", "check", str(task), "--oracle")  # the table names the kept trial dir too
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("oracle logs of loan-amortization: "))
    kept = Path(line.split(": ", 1)[1])
    assert (kept / "agent" / "oracle.stderr.txt").is_file()
    shutil.rmtree(kept.parents[2])


def test_a_passing_oracle_leaves_nothing(task: Path, cli: Any) -> None:
    proc = cli("tasks", "check", str(task), "--oracle", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["oracle"]["ok"] and row["oracle"]["trial_dir"] is None


def test_a_task_whose_solution_dir_has_no_solve_sh(task: Path, cli: Any, runs_dir: Path) -> None:
    for child in (task / "solution").iterdir():
        child.unlink()
    proc = cli("run", str(task), "--agent", "nop", "--conditions", "none", "--out", str(runs_dir), "--run-id", "n")
    assert proc.returncode == 0, proc.stderr[-2000:]  # the nop agent never needs the solution
    proc = cli("run", str(task), "--agent", "oracle", "--out", str(runs_dir), "--run-id", "o")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "the oracle agent cannot run task loan-amortization" in proc.stderr and "solve.sh" in proc.stderr
    assert not (runs_dir / "o").exists()
    proc = cli("tasks", "check", str(task), "--json")
    assert proc.returncode == 1
    assert any(i["code"] == "missing-oracle-entrypoint" for i in json.loads(proc.stdout)[0]["issues"])
