"""Issue 2 acceptance: paired oracle / nop runs of the quickstart suite in the local sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillworks.experiment import RunStore
from skillworks.tasks import discover_tasks, load_task

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


def test_oracle_run_writes_the_run_directory_and_scores_100(runs_dir: Path, cli: Any, quickstart: Path) -> None:
    proc = cli(
        "run",
        str(quickstart),
        "--agent",
        "oracle",
        "--conditions",
        "none,curated",
        "--trials",
        "2",
        "--out",
        str(runs_dir),
        "--run-id",
        "oracle",
    )
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    run_dir = runs_dir / "oracle"
    tasks = {t.id: t for t in (load_task(p) for p in discover_tasks([quickstart]))}
    results = RunStore(run_dir).read_results()
    assert len(results) == len(tasks) * 2 * 2
    for r in results:
        assert r.outcome == "solved", (r.trial_id, r.error)
        trial = run_dir / "trials" / r.trial_id
        staged = json.loads((trial / "skills.json").read_text())
        assert staged["ok"] is True
        names = sorted(s["name"] for s in staged["visible"])
        if r.condition == "none":
            assert names == [] and r.skills_staged == []
        else:
            assert names == sorted(s.name for s in tasks[r.task_id].skills)
            hashes = {s["name"]: s["package_hash"] for s in staged["visible"]}
            assert hashes == {s.name: s.package_hash for s in tasks[r.task_id].skills}
        assert (trial / "verifier" / "logs" / "reward.txt").is_file() or (
            trial / "verifier" / "logs" / "reward.json"
        ).is_file()
    for name in ("experiment.json", "results.jsonl", "summary.json", "report.md", "report.html"):
        assert (run_dir / name).is_file(), name
    # the trajectory pages were written as the trials were recorded: the report step rendered none again
    pages = [run_dir / "trials" / r.trial_id / "trial.html" for r in results] + list((run_dir / "pairs").iterdir())
    assert len(pages) == len(results) * 3 // 2  # a page per trial, a side-by-side page per pair
    written = (run_dir / "summary.json").stat().st_mtime_ns  # the report step's first file
    assert all(p.stat().st_mtime_ns < written for p in pages)
    summary = json.loads((run_dir / "summary.json").read_text())
    text = json.dumps(summary)
    assert "oracle" in text
    report = (run_dir / "report.md").read_text()
    assert "100.0" in report


def test_nop_is_scored_zero_by_the_verifier_not_an_error(runs_dir: Path, cli: Any, quickstart: Path) -> None:
    proc = cli(
        "run",
        str(quickstart),
        "--agent",
        "nop",
        "--conditions",
        "none,curated",
        "--trials",
        "1",
        "--out",
        str(runs_dir),
        "--run-id",
        "nop",
    )
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    results = RunStore(runs_dir / "nop").read_results()
    assert results
    for r in results:
        assert r.error is None, r.error
        assert r.reward == 0.0
        assert r.outcome == "failed"
        assert r.failure_mode == "no_output"


def test_tasks_check_oracle_reports_every_task_valid(cli: Any, quickstart: Path) -> None:
    proc = cli("tasks", "check", str(quickstart), "--oracle")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path in discover_tasks([quickstart]):
        assert load_task(path).id in proc.stdout
