"""The HTML reports and trajectory pages of a real run, rendered in headless Chromium: every chart is laid
out with visible marks, no console error or failed load, every link resolves to a file that exists, and
nothing is fetched from outside the run directory."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from skillworks.report import write_reports

pytestmark = [pytest.mark.bwrap, pytest.mark.chromium]


def _local(url: str) -> Path:
    parsed = urlparse(url)
    assert parsed.scheme == "file", f"not a local link: {url}"
    return Path(unquote(parsed.path))


def test_run_report_and_trajectory_pages_render_in_chromium(chromium, scripted_run: Path) -> None:  # type: ignore[no-untyped-def]
    report = chromium.load(scripted_run / "report.html")
    assert report.errors == []
    kinds = [c["kind"] for c in report.charts]
    assert {"bars", "heatmap", "forest", "hbars"} <= set(kinds)
    for chart in report.charts:
        assert chart["width"] > 100 and chart["height"] > 50 and chart["marks"] > 0, chart
        assert chart["title"]
    assert all(_local(r).is_relative_to(scripted_run) for r in report.requests + report.resources)
    targets = {_local(u) for u in report.links}
    assert targets and all(t.is_file() for t in targets), [t for t in targets if not t.is_file()]
    trial_pages = {t for t in targets if t.name == "trial.html"}
    pair_pages = {t for t in targets if t.parent.name == "pairs"}
    assert len(trial_pages) == 4 and len(pair_pages) == 2  # 1 task x 2 conditions x 2 trials; 2 pairs

    skill_tags = 0
    for page_path in sorted(trial_pages | pair_pages):
        page = chromium.load(page_path)
        assert page.errors == [], page_path
        assert all(_local(r).is_relative_to(scripted_run) for r in page.requests + page.resources)
        links = [_local(u) for u in page.links]
        assert links and all(t.is_file() for t in links), (page_path, [t for t in links if not t.is_file()])
        assert scripted_run / "report.html" in links  # back to the report
        skill_tags += page.skill_tags
    assert skill_tags > 0  # the curated trials' skill loads and script runs are highlighted


def test_report_combined_into_another_directory_links_back_into_the_run(
    chromium, scripted_run: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from skillworks.report import build_summary, write_summary_files

    out = tmp_path / "combined"
    out.mkdir()
    files = write_summary_files(build_summary([scripted_run], resamples=200), out, ["html"])
    page = chromium.load(files["html"])
    assert page.errors == []
    targets = [_local(u) for u in page.links]
    assert targets and all(t.is_file() and t.is_relative_to(scripted_run) for t in targets)
    write_reports(scripted_run, resamples=200)  # leave the run's own pages linking to its own report


def test_the_browser_check_sees_a_broken_page(chromium, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Control: the same check reports console errors, failed loads and outside requests."""
    page_path = tmp_path / "broken.html"
    page_path.write_text(
        "<!DOCTYPE html><html><body><img src='missing.png'><img src='http://127.0.0.1:9/x.png'>"
        "<script>console.error('boom')</script></body></html>"
    )
    page = chromium.load(page_path)
    assert any("boom" in e for e in page.errors)
    assert any(e.startswith("load failed") for e in page.errors)
    assert any(r.startswith("http://127.0.0.1:9/") for r in page.requests)
