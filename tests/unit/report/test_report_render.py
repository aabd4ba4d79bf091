"""Markdown/HTML rendering, write_reports and summary.json read-back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from skillworks.report import (
    SCRIPTED_NOTE,
    Summary,
    build_summary,
    read_summary,
    render_html,
    render_markdown,
    write_reports,
)
from skillworks.results import SkillUse


def test_write_reports_and_summary_reads_back(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    paths = write_reports(run, resamples=300)
    assert set(paths) == {"json", "md", "html"}
    assert paths["json"] == run / "summary.json"
    assert all(p.is_file() for p in paths.values())
    back = read_summary(paths["json"])
    assert isinstance(back, Summary)
    assert back == build_summary(run, resamples=300)
    # strict: an unknown key is rejected
    data = json.loads(paths["json"].read_text())
    data["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        Summary.model_validate(data)


def test_write_reports_is_a_pure_function_of_the_run_dir(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    first = {k: p.read_text() for k, p in write_reports(run, resamples=300).items()}
    second = {k: p.read_text() for k, p in write_reports(run, resamples=300).items()}
    assert first == second


def test_markdown_sections_and_numbers(fx: Any, tmp_path: Path) -> None:
    md = render_markdown(build_summary(fx.write_run(tmp_path), resamples=300))
    for heading in (
        "## Pass rates",
        "## Skill effect vs `none`",
        "## Per task",
        "## Outcomes",
        "## Failure modes",
        "## Skill invocation",
        "## Tokens, cost and time",
        "## Errors",
        "## Missing trials",
        "## Notes",
    ):
        assert heading in md
    assert SCRIPTED_NOTE in md
    assert "| curated | a1 | 75.0% | [40.4, 100.0] | [36.5, 94.0] | 87.5% |" in md
    assert "| curated | a1 | 75.0% | 50.0% | +25.0 | too few tasks for an interval — n=2 | 0.500 |" in md
    assert "t2 / curated / a1 / t2 (run-1)" in md
    assert "container failed \\| to start" in md  # pipe escaped inside the table
    assert "3/5" in md  # skill invocation: 3 invoked of 5 scored


def test_html_is_self_contained(fx: Any, tmp_path: Path) -> None:
    html = render_html(build_summary(fx.write_run(tmp_path), resamples=300))
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.IGNORECASE)
    assert "http://" not in html and "https://" not in html
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html
    assert "<svg" in html and "<style>" in html
    # one bar per condition x agent in the pass-rate chart, each with its Wilson whisker
    bars = re.search(r'<svg class="chart" data-chart="bars".*?</svg>', html, re.S)
    assert bars is not None
    assert bars.group(0).count('<g class="bar">') == 2 and bars.group(0).count('class="whisker"') == 2
    assert SCRIPTED_NOTE in html
    assert "container failed | to start" in html


def test_html_escapes_user_text(fx: Any, tmp_path: Path) -> None:

    results = fx.standard_results()
    bad = results[5]
    assert bad.error is not None
    results[5] = bad.model_copy(update={"error": bad.error.model_copy(update={"message": "<img src=x>"})})
    html = render_html(build_summary(fx.write_run(tmp_path, results), resamples=100))
    assert "<img src=x>" not in html and "&lt;img src=x&gt;" in html


def test_failed_skill_loads_are_shown_and_not_counted_as_invoked(fx: Any, tmp_path: Path) -> None:
    """Issue 17: a trial whose skill load failed is no invocation; the report counts such trials apart."""
    results = fx.standard_results()
    loaded = results[8].model_copy(update={"skill_use": SkillUse(invoked=[], failed=["skill-a"])})
    results[8] = loaded  # t1 curated t2: its load of skill-a failed
    run = fx.write_run(tmp_path, results)
    summary = build_summary(run, resamples=200)
    row = next(r for r in summary.skill_invocation if r.condition == "curated")
    assert (row.invoked_trials, row.failed_load_trials, row.failed_skills) == (3, 1, {"skill-a": 1})
    section = render_markdown(summary).split("## Skill invocation", 1)[1].split("\n## ", 1)[0]
    curated = next(line for line in section.splitlines() if line.startswith("| curated"))
    assert curated.endswith("| 1 (skill-a ×1) |"), curated
    html = render_html(summary)
    assert "Failed loads" in html and "skill-a ×1" in html


def test_skills_the_harness_brought_itself_are_listed(fx: Any, tmp_path: Path) -> None:
    """Issue 17: under `none` a harness's bundled skills are skills too; the report names them."""
    results = fx.standard_results()
    for k in (0, 1):
        results[k] = results[k].model_copy(update={"skill_use": SkillUse(harness_provided=["verify", "debug"])})
    summary = build_summary(fx.write_run(tmp_path, results), resamples=200)
    row = next(r for r in summary.skill_invocation if r.condition == "none")
    assert row.harness_provided == {"debug": 2, "verify": 2} and row.invoked_trials == 0  # not invocations
    section = render_markdown(summary).split("## Skill invocation", 1)[1].split("\n## ", 1)[0]
    assert "Skills the harness brought itself" in section and "- none / a1: debug ×2, verify ×2" in section
    assert "debug ×2, verify ×2" in render_html(summary)


def test_silent_bypass_rate_is_in_every_report(fx: Any, tmp_path: Path) -> None:
    """Issue 28: trials whose condition staged a skill the agent never loaded, in summary.json, report.md and
    report.html."""
    results = fx.standard_results()
    results[6:] = [r.model_copy(update={"skills_staged": ["skill-a@0123456789ab"]}) for r in results[6:]]
    summary = build_summary(fx.write_run(tmp_path, results), resamples=200)
    row = next(r for r in summary.skill_invocation if r.condition == "curated")
    assert (row.staged_trials, row.bypass_trials) == (5, 2)
    assert json.loads(summary.model_dump_json())["skill_invocation"][1]["bypass_rate"] == pytest.approx(0.4)
    assert "Silent bypass" in render_markdown(summary) and "curated · a1 2/5 (40.0%)" in render_markdown(summary)
    html = render_html(summary)
    assert "Silent bypass" in html and "2/5 (40.0%)" in html
