"""Trajectory pages written as trials are recorded (`TrialPageWriter`, what the runner does) are the
pages the report would render, so the report after a run renders none of them again; a page is rendered
again only when one of its inputs changed (the trial's result or one of its files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillworks.experiment import RunStore
from skillworks.report import write_reports
from skillworks.report.trial_pages import TrialPageWriter
from skillworks.report.write import baselines_of

from .test_report_pages import links_of, write_trial_files


def _pages(run: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*.html") if p.name != "report.html"}


def test_pages_written_during_the_run_are_the_reports_pages(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    results = RunStore(run).read_results()
    for r in results:
        write_trial_files(run, r.trial_id)
    writer = TrialPageWriter(run, baselines=baselines_of(["none", "curated"], run), reports=[run / "report.html"])
    for r in results:  # in the order the run records them: a pair page once both of its trials are in
        writer.add(r)
    during = _pages(run)
    assert len([p for p in during if p.name == "trial.html"]) == 11 and len(list((run / "pairs").iterdir())) == 5

    html = write_reports(run, resamples=100)["html"]
    assert _pages(run) == during  # not one page rendered again (same bytes, same mtime)
    links = links_of(html)
    assert links and all(p.is_file() for p in links)  # every cell's link reaches its page
    for page in during:
        assert html.resolve() in links_of(page)  # and every page links back to the report

    for page in during:
        page.unlink()
    write_reports(run, resamples=100)
    assert {p: b for p, (b, _) in _pages(run).items()} == {p: b for p, (b, _) in during.items()}  # byte for byte


def test_a_changed_input_renders_only_its_pages_again(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    for r in RunStore(run).read_results():
        write_trial_files(run, r.trial_id)
    write_reports(run, resamples=100)
    before = _pages(run)
    changed = "t1__curated__a1__t0"
    write_trial_files(run, changed, tool_output="a different tool output")  # the trial's files changed
    write_reports(run, resamples=100)
    after = _pages(run)
    trial_page = run / "trials" / changed / "trial.html"
    pair_page = run / "pairs" / f"{changed}__vs__none.html"
    assert {p for p in before if after[p] != before[p]} == {trial_page, pair_page}
    assert "a different tool output" in trial_page.read_text() and "a different tool output" in pair_page.read_text()

    # a newer attempt of a trial (its result changed): its page and its pair page again, nothing else
    lines = (run / "results.jsonl").read_text().splitlines()
    row = json.loads(next(line for line in lines if '"t2__none__a1__t0"' in line))
    row.update(attempt=2, reward=0.0, outcome="failed")
    (run / "results.jsonl").write_text("\n".join([*lines, json.dumps(row)]) + "\n")
    write_reports(run, resamples=100)
    again = _pages(run)
    rerendered = {p for p in after if again[p] != after[p]}
    assert rerendered == {
        run / "trials" / "t2__none__a1__t0" / "trial.html",
        run / "pairs" / "t2__curated__a1__t0__vs__none.html",
    }
