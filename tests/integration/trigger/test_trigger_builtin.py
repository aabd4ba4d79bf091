"""`skillworks trigger` end to end with the builtin agent in the local (bubblewrap) sandbox, through the real
gateway. The model is the scripted provider (the one test double): examples/trigger/csv-column-stats.builtin.yaml
plays known outcomes per query, so the run must reproduce them — including a `wc -c` of the SKILL.md and a
misspelt skill load that are no triggers, and a query a sibling skill takes (routing). The report page renders
in headless Chromium with every trial linked; a cost cap stops the run early."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

REPO = Path(__file__).resolve().parents[3]
SKILL = REPO / "examples" / "eval" / "skills" / "csv-column-stats"
SIBLING = REPO / "examples" / "eval" / "skills" / "invoice-vat-total"
QUERIES = REPO / "examples" / "trigger" / "csv-column-stats.queries.json"
SCRIPT = REPO / "examples" / "trigger" / "csv-column-stats.builtin.yaml"

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


def _skillworks(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args],
        capture_output=True, text=True, timeout=600, cwd=REPO, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


@pytest.fixture(scope="module")
def trigger_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("trigger")
    proc = _skillworks(
        "trigger", str(SKILL), "--queries", str(QUERIES), "--model", f"scripted/{SCRIPT}", "--sibling", str(SIBLING),
        "--decoys", "2", "--trials", "2", "--concurrency", "2", "--out", str(out), "--run-id", "t", "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "t", json.loads(proc.stdout)


def test_known_outcomes_are_reproduced(trigger_run: tuple[Path, dict[str, object]]) -> None:
    run_dir, report = trigger_run
    scores = report["scores"]
    assert isinstance(scores, dict)
    by_id = {q["id"]: q for q in scores["queries"]}
    rates = {qid: (q["triggered"], q["scored"]) for qid, q in by_id.items()}
    assert rates == {
        **{f"q0{i}": (2, 2) for i in (1, 2, 3, 4, 6, 9)},
        **{qid: (0, 2) for qid in ("q05", "q07", "q08", "q10", "q11", "q12")},
    }
    assert scores["confusion"] == {"tp": 5, "fp": 1, "tn": 5, "fn": 1}
    assert scores["f1"]["value"] == pytest.approx(5 / 6) and scores["f1"]["ci"] is not None  # 12 queries
    assert scores["accuracy"]["ci"] is not None
    assert scores["precision"]["note"] == "too few queries for an interval — n=6"
    assert by_id["q10"]["routed_to"] == {"invoice-vat-total": 2} and scores["routing"] == {"invoice-vat-total": 1}
    q12 = by_id["q12"]["trial_refs"]
    assert all(t["failed"] == ["csv-colum-stats"] and t["triggered"] is False for t in q12)  # a failed load
    assert report["providers"] == ["scripted"] and report["recorded"] == report["planned"] == 24
    # only the skill under test, its sibling and the two decoys were visible (never the user's installed skills)
    staged = {json.dumps(sorted(r["skills_staged"])) for r in map(json.loads, (run_dir / "results.jsonl").open())}
    [names] = [[s.split("@")[0] for s in json.loads(x)] for x in staged]
    assert sorted(names) == sorted(["csv-column-stats", "invoice-vat-total", *report["decoys"]])  # type: ignore[misc]
    # the run's own reports say how often the staged skills were bypassed
    summary = json.loads((run_dir / "summary.json").read_text())
    [row] = summary["skill_invocation"]
    assert (row["staged_trials"], row["bypass_trials"]) == (24, 10)  # q05, q07, q08, q11, q12 x 2 loaded no skill
    assert "Silent bypass" in (run_dir / "report.md").read_text()
    # trigger.json reads back into its schema, and the Markdown report carries the same verdicts
    from skillworks.trigger import read_report

    back = read_report(run_dir / "trigger.json")
    assert back.scores.confusion.tp == 5 and back.model_dump(by_alias=True)["schema"] == "skillworks.trigger-report/1"
    assert "| q09: Convert sales.csv to JSON lines | no | 2/2 |" in (run_dir / "trigger.md").read_text()


def _local(url: str) -> Path:
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    return Path(unquote(parsed.path))


@pytest.mark.chromium
def test_trigger_page_renders_in_chromium_with_every_trial_linked(  # type: ignore[no-untyped-def]
    chromium, trigger_run: tuple[Path, dict[str, object]]
) -> None:
    run_dir, _ = trigger_run
    page = chromium.load(run_dir / "trigger.html")
    assert page.errors == []
    assert all(_local(r).is_relative_to(run_dir) for r in page.requests + page.resources)  # no CDN, nothing outside
    targets = [_local(u) for u in page.links]
    assert all(t.is_file() for t in targets), [t for t in targets if not t.is_file()]
    trial_pages = {t for t in targets if t.name == "trial.html"}
    assert len(trial_pages) == 24 and run_dir / "report.html" in targets
    trial = chromium.load(sorted(trial_pages)[0])
    assert trial.errors == []


def test_max_cost_stops_the_run_and_the_rest_is_missing_not_missed(tmp_path: Path) -> None:
    """Each trial (one scripted turn) costs $0.02 (the script's cost_usd); a $0.03 cap stops after two trials."""
    script = tmp_path / "costly.yaml"
    script.write_text("default:\n  - text: no skill needed\n    cost_usd: 0.02\n")
    proc = _skillworks(
        "trigger", str(SKILL), "--queries", str(QUERIES), "--model", f"scripted/{script}", "--trials", "1",
        "--concurrency", "1", "--max-cost", "0.03", "--out", str(tmp_path), "--run-id", "cap", "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["stopped_by_cost"] is True and report["recorded"] == 2 and report["planned"] == 12
    assert report["cost_usd"] == pytest.approx(0.04)
    unscored = report["scores"]["unscored_queries"]
    assert len(unscored) == 10  # never run: no verdict, not counted as misses
    assert report["scores"]["accuracy"]["n"] == 2
