"""Chart layouts for the HTML reports: plain data (coordinates, labels, colours, links) computed here and
drawn as inline SVG by the macros of ``templates/charts.svg.j2``. No script and no external asset, so a
report stays one self-contained file that opens from file:// (see docs/design/reports.md).

Each ``*_chart`` function returns a chart object or None when there is nothing to draw; `render_chart`
turns it into SVG markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from skillworks.report.chart_parts import CHAR_W, LEGEND_STEP, PAGE_WIDTH, PALETTE, Interval, LegendItem, Tick
from skillworks.report.forest import Forest
from skillworks.report.jinja_env import template

MIN_BAR = 2.0  # px: a 0% bar is still drawn as a visible sliver with its label
MIN_BAR_W = 16.0
HEAT_COL_LABEL = 40  # characters of a slanted heatmap column label (longer ones are cut with …)


# --- vertical grouped bars with interval whiskers (pass rates) ------------------------------------------


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    label: str  # the value printed above the bar
    tooltip: str
    whisker: tuple[float, float] | None  # (y of high, y of low)


@dataclass(frozen=True)
class Group:
    x: float  # centre
    label: str


@dataclass(frozen=True)
class BarChart:
    kind = "bars"
    title: str
    width: float
    height: float
    left: float
    top: float
    plot_w: float
    plot_h: float
    ticks: list[Tick]
    bars: list[Bar]
    groups: list[Group]
    legend: list[LegendItem]
    slanted: bool = False  # group labels drawn at an angle (too long to stand level under their group)
    bar_w: float = 40.0


@dataclass(frozen=True)
class BarValue:
    group: str  # x axis group (e.g. agent)
    series: str  # legend entry (e.g. condition)
    value: float  # on [0, 1]
    interval: Interval | None = None


def grouped_bar_chart(title: str, values: Sequence[BarValue]) -> BarChart | None:
    """Bars on [0, 1] grouped by ``group``, coloured by ``series``, with optional interval whiskers."""
    if not values:
        return None
    groups = list(dict.fromkeys(v.group for v in values))
    series = list(dict.fromkeys(v.series for v in values))
    colour = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    top, plot_h = 28.0, 200.0
    # bars narrow (down to MIN_BAR_W) so that many agents still fit the page width unscaled
    group_gap = 28.0 if len(groups) <= 6 else 14.0
    bar_gap = 6.0 if len(groups) <= 6 else 2.0
    label_run = max((min(len(g), 30) for g in groups), default=0) * CHAR_W * 0.71  # at -45°: as high as wide
    left, slanted = 44.0, False
    for _ in range(2):  # a slanted first label runs down to the left of its group: the second pass makes room
        fit = (PAGE_WIDTH - left - 10 - group_gap * (len(groups) + 1)) / (len(groups) * len(series)) - bar_gap
        bar_w = min(40.0, max(MIN_BAR_W, fit))
        group_w = len(series) * (bar_w + bar_gap) - bar_gap
        slanted = any(len(g) * CHAR_W > group_w + group_gap for g in groups)  # too long to stand level
        if not slanted:
            break
        left = max(44.0, label_run - group_gap - group_w / 2 + 8)
    plot_w = len(groups) * (group_w + group_gap) + group_gap
    label_h = label_run + 20 if slanted else 20.0
    width = max(left + plot_w + 10, left + LEGEND_STEP * len(series) + 10)
    height = top + plot_h + 20 + label_h

    def y(rate: float) -> float:
        return top + plot_h * (1.0 - min(max(rate, 0.0), 1.0))

    bars: list[Bar] = []
    group_marks: list[Group] = []
    for gi, g in enumerate(groups):
        gx = left + group_gap + gi * (group_w + group_gap)
        group_marks.append(Group(x=gx + group_w / 2, label=g))
        for si, s in enumerate(series):
            v = next((v for v in values if v.group == g and v.series == s), None)
            if v is None:
                continue
            h = max(plot_h * min(max(v.value, 0.0), 1.0), MIN_BAR)
            iv = v.interval
            tip = f"{s} / {g}: {v.value * 100:.1f}%"
            if iv is not None:
                tip += f" (95% CI {iv.low * 100:.1f}–{iv.high * 100:.1f}%)"
            bars.append(
                Bar(
                    x=gx + si * (bar_w + bar_gap),
                    y=top + plot_h - h,
                    width=bar_w,
                    height=h,
                    colour=colour[s],
                    label=f"{v.value * 100:.0f}%",
                    tooltip=tip,
                    whisker=(y(iv.high), y(iv.low)) if iv is not None else None,
                )
            )
    ticks = [Tick(pos=y(t), label=f"{int(t * 100)}%") for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
    legend = [LegendItem(s, colour[s]) for s in series]
    return BarChart(title, width, height, left, top, plot_w, plot_h, ticks, bars, group_marks, legend, slanted, bar_w)


# --- horizontal (optionally stacked) bars with a value axis (failure modes, usage, skill use) -----------


@dataclass(frozen=True)
class Segment:
    x: float
    width: float
    colour: str
    tooltip: str


@dataclass(frozen=True)
class HRow:
    y: float
    label: str
    value_label: str
    segments: list[Segment]


@dataclass(frozen=True)
class HBarChart:
    kind = "hbars"
    title: str
    width: float
    height: float
    left: float
    top: float
    plot_w: float
    row_h: float
    ticks: list[Tick]
    rows: list[HRow]
    legend: list[LegendItem]


@dataclass(frozen=True)
class HBarInput:
    label: str
    parts: dict[str, float]  # series -> value (stacked in legend order)
    value_label: str | None = None


def hbar_chart(
    title: str,
    rows: Sequence[HBarInput],
    *,
    fmt: Callable[[float], str] = lambda v: f"{v:g}",
    max_value: float | None = None,
    colours: dict[str, str] | None = None,
) -> HBarChart | None:
    """One horizontal bar per row; a row's parts are stacked; the axis runs from 0 to the largest total."""
    if not rows:
        return None
    series = list(dict.fromkeys(s for r in rows for s, v in r.parts.items() if v > 0))
    colour = colours or {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    top_total = max((sum(r.parts.values()) for r in rows), default=0.0)
    scale_max = max_value if max_value is not None else (top_total or 1.0)
    label_w = min(max((len(r.label) for r in rows), default=4) * 6.5 + 12, 260.0)
    left, top, plot_w, row_h = label_w, 28.0, 360.0, 22.0
    legend = [LegendItem(s, colour.get(s, PALETTE[0])) for s in series] if len(series) > 1 else []
    width = max(left + plot_w + 90, left + LEGEND_STEP * len(legend) + 10)
    height = top + len(rows) * row_h + 24
    out_rows: list[HRow] = []
    for i, r in enumerate(rows):
        x = left
        segs: list[Segment] = []
        for s in series:
            v = r.parts.get(s, 0.0)
            if v <= 0:
                continue
            w = plot_w * v / scale_max
            segs.append(Segment(x=x, width=w, colour=colour.get(s, PALETTE[0]), tooltip=f"{r.label}: {s} {fmt(v)}"))
            x += w
        total = sum(r.parts.values())
        out_rows.append(HRow(y=top + i * row_h, label=r.label, value_label=r.value_label or fmt(total), segments=segs))
    ticks = [Tick(pos=left + plot_w * f, label=fmt(scale_max * f)) for f in (0.0, 0.5, 1.0)]
    return HBarChart(title, width, height, left, top, plot_w, row_h, ticks, out_rows, legend)


# --- heatmap (task x condition, case x metric) ---------------------------------------------------------


@dataclass(frozen=True)
class HeatCell:
    x: float
    y: float
    fill: str
    text: str
    tooltip: str
    href: str | None
    text_colour: str


@dataclass(frozen=True)
class HeatInput:
    value: float | None  # on [0, 1]; None = no data
    text: str
    tooltip: str
    href: str | None = None


@dataclass(frozen=True)
class Heatmap:
    kind = "heatmap"
    title: str
    width: float
    height: float
    left: float
    top: float
    cell_w: float
    cell_h: float
    columns: list[Group]
    rows: list[Group]
    cells: list[HeatCell]
    legend: list[LegendItem]
    slanted: bool = False  # column labels at -45° (many or long column names)


def _heat_colour(v: float | None) -> str:
    """White-to-blue sequential scale on [0, 1]; grey for no data."""
    if v is None:
        return "#e0e0e0"
    v = min(max(v, 0.0), 1.0)
    lo, hi = (247, 251, 255), (8, 81, 156)
    r, g, b = (round(a + (c - a) * v) for a, c in zip(lo, hi, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    title: str, row_labels: Sequence[str], col_labels: Sequence[str], grid: Sequence[Sequence[HeatInput]]
) -> Heatmap | None:
    """``grid[row][col]``; values on [0, 1] coloured white (0) to dark blue (1); cells may link somewhere."""
    if not row_labels or not col_labels:
        return None
    longest_col = max(len(c) for c in col_labels)
    cell_text = max((len(item.text) for row in grid for item in row), default=4) * CHAR_W + 10
    # level column labels while they fit a cell of at most 140 px; else slanted, over cells as narrow as their text
    slanted = longest_col * CHAR_W + 10 > 140.0 or (len(col_labels) > 6 and longest_col * CHAR_W + 10 > cell_text)
    cell_w = max(44.0, cell_text) if slanted else max(64.0, cell_text, longest_col * CHAR_W + 10)
    cell_h = 22.0
    left = min(max(len(r) for r in row_labels) * CHAR_W + 12, 300.0)
    label_run = min(longest_col, HEAT_COL_LABEL) * CHAR_W * 0.71  # a label at -45°: as high as it is wide
    top = label_run + 16 if slanted else 44.0
    right = label_run if slanted else 0.0
    width = max(left + cell_w * len(col_labels) + 10 + right, left + LEGEND_STEP * 4 + 10)
    height = top + cell_h * len(row_labels) + 10
    cells: list[HeatCell] = []
    for ri, row in enumerate(grid):
        for ci, item in enumerate(row):
            dark = item.value is not None and item.value > 0.55
            cells.append(
                HeatCell(
                    x=left + ci * cell_w,
                    y=top + ri * cell_h,
                    fill=_heat_colour(item.value),
                    text=item.text,
                    tooltip=item.tooltip,
                    href=item.href,
                    text_colour="#fff" if dark else "#222",
                )
            )
    columns = [Group(x=left + (i + 0.5) * cell_w, label=c) for i, c in enumerate(col_labels)]
    rows = [Group(x=top + (i + 0.5) * cell_h, label=r) for i, r in enumerate(row_labels)]
    legend = [
        LegendItem("0%", _heat_colour(0.0)),
        LegendItem("50%", _heat_colour(0.5)),
        LegendItem("100%", _heat_colour(1.0)),
    ]
    legend.append(LegendItem("no data", _heat_colour(None)))
    return Heatmap(title, width, height, left, top, cell_w, cell_h, columns, rows, cells, legend, slanted)


Chart = BarChart | HBarChart | Heatmap | Forest


def render_chart(chart: Chart | None) -> Markup:
    """SVG markup of ``chart`` ('' for None)."""
    if chart is None:
        return Markup("")
    macro = getattr(template("charts.svg.j2").module, chart.kind)
    svg = Markup(macro(chart))
    if chart.width > PAGE_WIDTH:  # full size in a box that scrolls sideways, not shrunk to unreadable text
        return Markup('<div class="scroll">') + svg + Markup("</div>")
    return svg


@dataclass
class ChartSet:
    """Named charts of a page, rendered on demand by the page template."""

    charts: dict[str, Chart | None] = field(default_factory=dict)

    def svg(self, name: str) -> Markup:
        return render_chart(self.charts.get(name))
