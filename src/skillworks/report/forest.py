"""The forest plot layout: one row per comparison, its estimate as a dot and its 95% interval as a capped
line on a labelled x-axis with 0 (no effect) marked. Drawn by the ``forest`` macro of ``charts.svg.j2``.

The axis is symmetric around 0 and fitted to the data (a nice round span covering every estimate and
interval end, at least ``min_span``), so small effects are not a dot on a ±100 axis. With ``max_span``
the axis stops there and an end beyond it is drawn as an arrow at the edge with its value, never cut off
silently. A zero-width interval is a tall bar through the dot (and says so in its label); an estimate
without an interval (the small-n rule) is a hollow dot marked "no interval"."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillworks.report.chart_parts import CHAR_W, LEGEND_STEP, LegendItem, Tick

ABOVE, BELOW, CROSSES = "#2e7d32", "#c62828", "#757575"
_NICE = (1.0, 2.0, 4.0, 5.0, 10.0)  # an axis span is one of these times a power of ten


@dataclass(frozen=True)
class ForestInput:
    label: str
    estimate: float | None
    low: float | None
    high: float | None
    value_label: str


@dataclass(frozen=True)
class Clip:
    """An end beyond the axis: an arrow at the edge (``side`` −1 left, +1 right) with the end's value."""

    x: float
    side: int
    text: str


@dataclass(frozen=True)
class ForestRow:
    y: float
    label: str
    kind: str  # "interval" | "zero-width" | "no-interval" | "undefined"
    point: float | None  # x of the estimate (on the axis)
    low: float | None
    high: float | None
    colour: str
    value_label: str
    tooltip: str
    clips: tuple[Clip, ...] = ()
    note_x: float = 0.0  # where "no interval" / "undefined" is written, and its text-anchor
    note_anchor: str = "start"


@dataclass(frozen=True)
class Forest:
    kind = "forest"
    title: str
    width: float
    height: float
    left: float
    top: float
    plot_w: float
    row_h: float
    zero_x: float
    ticks: list[Tick]
    rows: list[ForestRow]
    legend: list[LegendItem]
    axis_label: str
    span: float


def nice_span(extent: float, min_span: float) -> float:
    """The smallest 1/2/4/5×10^k at least ``extent`` plus a 5% margin (so an end is not on the edge), and at
    least ``min_span``."""
    need = extent * 1.05
    if need <= min_span:
        return min_span
    power = 10.0 ** math.floor(math.log10(need))
    return next(m * power for m in _NICE if m * power >= need - 1e-12 * power)


def _kind(r: ForestInput, span: float) -> str:
    if r.estimate is None:
        return "undefined"
    if r.low is None or r.high is None:
        return "no-interval"
    if r.high - r.low <= span * 1e-6:
        return "zero-width"
    return "interval"


def _beyond(r: ForestInput, span: float, fmt: Callable[[float], str]) -> list[tuple[int, str]]:
    """(side, value) of the farthest of the row's values beyond each end of the axis."""
    values = [v for v in (r.estimate, r.low, r.high) if v is not None]
    out = []
    for side in (-1, 1):
        beyond = [v for v in values if v * side > span]
        if beyond:
            out.append((side, fmt(max(beyond, key=abs))))
    return out


def _tick_label(t: float) -> str:
    return "0" if t == 0 else f"{t:+g}"


def forest_plot(
    title: str,
    rows: Sequence[ForestInput],
    *,
    axis_label: str = "Δ = with − without (percentage points); 0 = no effect",
    min_span: float = 10.0,
    max_span: float | None = None,
    fmt: Callable[[float], str] = lambda v: f"{v:+.1f}",
) -> Forest | None:
    """Estimates with intervals on an axis [-span, span] fitted to them; green when the interval is above
    0, red when below, grey when it crosses 0 or there is none."""
    if not rows:
        return None
    values = [abs(v) for r in rows for v in (r.estimate, r.low, r.high) if v is not None and math.isfinite(v)]
    span = nice_span(max(values, default=0.0), min_span)
    if max_span is not None:
        span = min(span, max_span)
    kinds = [_kind(r, span) for r in rows]
    clips = [_beyond(r, span, fmt) for r in rows]
    value_labels = [
        r.value_label
        + (" (zero-width interval)" if kind == "zero-width" else "")
        + (" (beyond the axis: " + ", ".join(text for _, text in beyond) + ")" if beyond else "")
        for r, kind, beyond in zip(rows, kinds, clips, strict=True)
    ]
    label_w = min(max(len(r.label) for r in rows) * CHAR_W * 1.1 + 14, 300.0)
    left, top, plot_w, row_h = label_w, 12.0, 480.0, 30.0
    value_w = max(len(v) for v in value_labels) * CHAR_W * 1.1 + 28  # 12px text
    width = max(left + plot_w + value_w, left + LEGEND_STEP * 3 + 40)
    bottom = top + len(rows) * row_h
    height = bottom + 70  # tick labels, the axis label, the legend

    def x(v: float) -> float:
        return left + plot_w * (min(max(v, -span), span) + span) / (2 * span)

    out: list[ForestRow] = []
    for i, (r, kind, beyond, value_label) in enumerate(zip(rows, kinds, clips, value_labels, strict=True)):
        if r.low is not None and r.high is not None and r.low > 0:
            colour = ABOVE
        elif r.low is not None and r.high is not None and r.high < 0:
            colour = BELOW
        else:
            colour = CROSSES
        point = x(r.estimate) if r.estimate is not None else None
        anchor_at = point if point is not None else x(0.0)
        right_half = anchor_at > left + plot_w / 2
        out.append(
            ForestRow(
                y=top + (i + 0.5) * row_h,
                label=r.label,
                kind=kind,
                point=point,
                low=x(r.low) if r.low is not None else None,
                high=x(r.high) if r.high is not None else None,
                colour=colour,
                value_label=value_label,
                tooltip=f"{r.label}: {value_label}",
                clips=tuple(Clip(left + (plot_w if side > 0 else 0.0), side, text) for side, text in beyond),
                note_x=anchor_at - 10 if right_half else anchor_at + 10,
                note_anchor="end" if right_half else "start",
            )
        )
    ticks = [Tick(pos=x(t), label=_tick_label(t)) for t in (-span, -span / 2, 0.0, span / 2, span)]
    legend = [
        LegendItem("CI above 0", ABOVE),
        LegendItem("CI below 0", BELOW),
        LegendItem("CI crosses 0 / none", CROSSES),
    ]
    return Forest(title, width, height, left, top, plot_w, row_h, x(0.0), ticks, out, legend, axis_label, span)
