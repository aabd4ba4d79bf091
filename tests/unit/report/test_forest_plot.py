"""The forest plot's SVG: readable size, a labelled x-axis with 0 marked, an axis fitted to the data,
zero-width intervals drawn as such, "no interval" under the small-n rule, and ends beyond the axis
marked with an arrow and their value (never clipped silently). Runs are constructed results (provider
"scripted", the test double; see conftest)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from skillworks.report import write_reports
from skillworks.report.charts import render_chart
from skillworks.report.forest import ForestInput, forest_plot, nice_span


def _forest(html: str) -> ET.Element:
    found = re.findall(r'<svg class="chart" data-chart="forest".*?</svg>', html, re.S)
    assert len(found) == 1
    return ET.fromstring(found[0])


def _texts(svg: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in svg.iter("text") if t.get("class") == cls]


def _rows(svg: ET.Element) -> list[ET.Element]:
    return [g for g in svg.iter("g") if g.get("class") == "row"]


def _paths(row: ET.Element, cls: str) -> list[ET.Element]:
    return [p for p in row.iter("path") if cls in (p.get("class") or "").split()]


def test_the_run_forest_plot_is_readable_on_a_labelled_axis_with_0_marked(fx: Any, tmp_path: Path) -> None:
    """Six tasks, every one solved with the skill and failed without: Δ +100 pp, interval capped at both ends."""
    tasks = [f"t{i}" for i in range(6)]
    results = [fx.trial(t, c, 0, 1.0 if c == "curated" else 0.0) for t in tasks for c in ("none", "curated")]
    run = fx.write_run(tmp_path, results, fx.experiment(tasks=tasks, trials=1))
    svg = _forest(write_reports(run, resamples=200)["html"].read_text())
    assert float(svg.get("width") or 0) >= 700 and svg.get("font-size") == "12"  # readable, not a thumbnail
    assert _texts(svg, "axis-label") == ["Δ = with − without (percentage points); 0 = no effect"]
    assert _texts(svg, "tick-label") == ["-100", "-50", "0", "+50", "+100"]
    zero = next(t for t in svg.iter("text") if t.get("class") == "tick-label" and t.text == "0")
    assert zero.get("font-weight") == "bold" and any(line.get("class") == "zero" for line in svg.iter("line"))
    (row,) = _rows(svg)
    assert row.get("data-interval") == "interval" and len(_paths(row, "cap")) == 1
    assert row.find("circle") is not None and _paths(row, "clipped") == []  # +100 is on the axis, not beyond


def test_a_zero_width_interval_is_a_tall_bar_and_says_so() -> None:
    """An interval of zero width (e.g. a summary.json written before the trial-noise floor, or identical
    paired deltas): a capped bar through the dot, not a lone mark."""
    svg = ET.fromstring(str(render_chart(forest_plot("t", [ForestInput("c", 20.0, 20.0, 20.0, "Δ +20.0 pp")]))))
    (row,) = _rows(svg)
    assert row.get("data-interval") == "zero-width"
    (bar,) = _paths(row, "zero-width")
    assert "v24" in (bar.get("d") or "") and row.find("circle") is not None
    assert _texts(row, "value") == ["Δ +20.0 pp (zero-width interval)"]


def test_too_few_tasks_say_no_interval_and_a_small_effect_gets_a_fitted_axis(fx: Any, tmp_path: Path) -> None:
    results = [
        fx.trial(t, c, k, float(c == "curated" and k == 0))
        for t in ("t1", "t2")
        for c in ("none", "curated")
        for k in range(3)
    ]
    svg = _forest(write_reports(fx.write_run(tmp_path, results), resamples=100)["html"].read_text())
    (row,) = _rows(svg)
    assert row.get("data-interval") == "no-interval"
    assert _texts(row, "note") == ["no interval"] and row.find("line") is None  # no interval line drawn
    circle = row.find("circle")
    assert circle is not None and circle.get("fill") == "#fff"  # hollow: an estimate without a verdict
    # Δ +33.3 pp: the axis spans ±40 (a 1/2/4/5 x 10^k just above the data), not ±100
    assert _texts(svg, "tick-label") == ["-40", "-20", "0", "+20", "+40"]


def test_an_end_beyond_the_capped_axis_is_an_arrow_with_its_value() -> None:
    chart = forest_plot(
        "t",
        [
            ForestInput("wald", 60.0, 20.0, 130.0, "Δ +60.0 pp"),
            ForestInput("inside", 5.0, -3.0, 13.0, "Δ +5.0 pp"),
        ],
        max_span=100.0,
        fmt=lambda v: f"{v:+.1f} pp",
    )
    svg = ET.fromstring(str(render_chart(chart)))
    wald, inside = _rows(svg)
    assert len(_paths(wald, "clipped")) == 1 and _texts(wald, "clipped-value") == ["+130.0 pp"]
    assert "(beyond the axis: +130.0 pp)" in _texts(wald, "value")[0]
    assert _paths(inside, "clipped") == [] and inside.get("data-interval") == "interval"
    assert len(_paths(inside, "cap")) == 1  # both ends capped (one path, two strokes)
    assert _texts(svg, "tick-label")[-1] == "+100"


def test_nice_span() -> None:
    assert [nice_span(v, 10.0) for v in (0.0, 3.0, 9.6, 33.3, 60.0, 100.0)] == [10.0, 10.0, 20.0, 40.0, 100.0, 200.0]
    assert nice_span(0.3, 0.1) == 0.4 and nice_span(2.2, 0.1) == 4.0
