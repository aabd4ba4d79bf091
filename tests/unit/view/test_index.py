"""The viewer's trial index on run directories written here: filters, sorts (no value last), search over
trajectories (never outside the run), the latest attempt per trial, refresh when results.jsonl grows, and
the CLI's one-line errors for paths that hold no run."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillworks.results import TrialError, TrialResult, Usage
from skillworks.view import TrialIndex

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _result(task: str, condition: str, k: int, reward: float | None, **kw: object) -> TrialResult:
    error = TrialError(category="rate_limit", message="429", phase="agent") if reward is None else None
    outcome = "error" if reward is None else "solved" if reward == 1 else "failed"
    return TrialResult(
        trial_id=f"{task}__{condition}__a__t{k}",
        run_id="r",
        task_id=task,
        condition=condition,
        agent="a",
        trial_index=k,
        seed=k,
        reward=reward,
        outcome=outcome,
        error=error,
        started_at=NOW,
        finished_at=NOW,
        **kw,  # type: ignore[arg-type]
    )


def _run(root: Path, results: list[TrialResult], trajectories: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "experiment.json").write_text(
        json.dumps(
            {
                "run_id": root.name,
                "tasks": ["t1", "t2"],
                "conditions": ["none", "curated"],
                "agents": ["a"],
                "trials": 2,
            }
        )
    )
    for trial_id, text in (trajectories or {}).items():
        d = root / "trials" / trial_id
        d.mkdir(parents=True)
        steps = [{"step_id": 1, "source": "agent", "message": text}]
        (d / "trajectory.json").write_text(json.dumps({"schema_version": "ATIF-v1.7", "steps": steps}))
    (root / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    return root


def _paths(trial_id: str) -> dict[str, str]:
    return {"trajectory": f"trials/{trial_id}/trajectory.json"}


def test_filters_sorts_and_searches(tmp_path: Path) -> None:
    results = [
        _result("t1", "none", 0, 0.0, usage=Usage(input_tokens=10), paths=_paths("t1__none__a__t0")),
        _result("t1", "curated", 0, 1.0, usage=Usage(input_tokens=30), paths=_paths("t1__curated__a__t0")),
        _result("t2", "none", 0, None, usage=Usage(input_tokens=20)),
        _result("t2", "curated", 0, 1.0, usage=Usage(input_tokens=5), paths={"trajectory": "../../outside.json"}),
    ]
    (tmp_path / "outside.json").write_text(json.dumps({"steps": [{"message": "needle"}]}))
    run = _run(tmp_path / "run", results, {"t1__none__a__t0": "Nothing here", "t1__curated__a__t0": "Found the NEEDLE"})
    index = TrialIndex([run])

    assert index.query({"condition": "curated"})["total"] == 2
    assert index.query({"outcome": "error", "error_category": "rate_limit"})["total"] == 1
    assert index.query({"condition": "none", "task": "t2"})["rows"][0]["error"] == "429"
    up = [r["trial_id"] for r in index.query(sort="reward")["rows"]]
    down = [r["trial_id"] for r in index.query(sort="reward", descending=True)["rows"]]
    assert up[0] == "t1__none__a__t0" and up[-1] == down[-1] == "t2__none__a__t0"  # no reward: last both ways
    assert [r["tokens"] for r in index.query(sort="tokens")["rows"]] == [5, 10, 20, 30]
    # search: every word, case-insensitive, in trajectories of this run only (a path out of it is not read)
    assert [r["trial_id"] for r in index.query(q="needle")["rows"]] == ["t1__curated__a__t0"]
    assert index.query(q="found needle")["total"] == 1 and index.query(q="found nothing")["total"] == 0
    assert index.query(q="429")["total"] == 1  # errors are searched too
    facets = index.query({"condition": "curated"})["facets"]
    assert dict(facets["outcome"]) == {"solved": 2}
    with pytest.raises(ValueError, match="unknown filter"):
        index.query({"colour": "red"})
    with pytest.raises(ValueError, match="unknown sort"):
        index.query(sort="colour")


def test_latest_attempt_wins_and_a_growing_run_is_reread(tmp_path: Path) -> None:
    first = _result("t1", "none", 0, None)
    run = _run(tmp_path / "run", [first])
    index = TrialIndex([run])
    before = index.version()
    assert not index.refresh()
    retried = first.model_copy(update={"attempt": 2, "reward": 1.0, "outcome": "solved", "error": None})
    with (run / "results.jsonl").open("a") as fh:
        fh.write(retried.model_dump_json() + "\n")
        fh.write('{"torn": ')  # a write still under way
    assert index.refresh() and index.version() != before
    rows = index.query()["rows"]
    assert [(r["attempt"], r["outcome"]) for r in rows] == [(2, "solved")]


def test_unknown_cost_is_none_not_zero(tmp_path: Path) -> None:
    run = _run(
        tmp_path / "run",
        [
            _result("t1", "none", 0, 1.0, usage=Usage(cost_usd=0.0, cost_source=None)),
            _result("t1", "curated", 0, 1.0, usage=Usage(cost_usd=0.25, cost_source="provider")),
        ],
    )
    costs = {r["condition"]: r["cost"] for r in TrialIndex([run]).query()["rows"]}
    assert costs == {"none": None, "curated": 0.25}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "not a directory"),
        (lambda p: p, "neither a run directory"),
    ],
)
def test_view_command_names_a_path_that_holds_no_run(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "view", str(make(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(tmp_path) in lines[0]


def test_view_command_names_a_broken_results_file(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", [_result("t1", "none", 0, 1.0)])
    (run / "results.jsonl").write_text("not json\n" + _result("t1", "none", 1, 1.0).model_dump_json() + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "view", str(run)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "results.jsonl" in proc.stderr and "line 1" in proc.stderr
