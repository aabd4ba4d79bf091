"""The evolve report as a self-contained HTML page (evolve_report.html): the tables of evolve_report.md,
each family's learning curve (cumulative completion by position, one line per condition) and its library
growth (#skills after each step), as inline SVG."""

from __future__ import annotations

from html import escape

from skillworks.evolve.driver import CONDITIONS
from skillworks.evolve.report import EvolveSummary, FamilyRow, render_evolve_markdown

_COLOURS = {"evolved": "#1b7837", "vanilla": "#762a83", "history": "#e08214", "#skills": "#2166ac"}
_W, _H, _PAD = 420, 200, 36


def _line_chart(title: str, series: dict[str, list[float | None]], y_max: float, y_label: str) -> str:
    n = max((len(v) for v in series.values()), default=0)
    if n == 0:
        return ""
    x = lambda i: _PAD + (i * (_W - 2 * _PAD) / max(1, n - 1))  # noqa: E731
    y = lambda v: _H - _PAD - (v / y_max if y_max else 0) * (_H - 2 * _PAD)  # noqa: E731
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img" aria-label="{escape(title)}">',
        f'<text x="{_W / 2}" y="14" text-anchor="middle" font-size="12">{escape(title)}</text>',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#999"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#999"/>',
        f'<text x="4" y="{_PAD}" font-size="10">{y_max:g}</text><text x="4" y="{_H - _PAD}" font-size="10">0</text>',
        f'<text x="{_W / 2}" y="{_H - 8}" text-anchor="middle" font-size="10">task position (1..{n}); y: '
        f"{escape(y_label)}</text>",
    ]
    for k, (name, values) in enumerate(series.items()):
        points = [f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None]
        colour = _COLOURS.get(name, "#333")
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/>')
        parts.append(
            f'<text x="{_W - _PAD + 2}" y="{_PAD + 12 * k}" font-size="10" fill="{colour}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _cumulative(values: list[float | None]) -> list[float | None]:
    out: list[float | None] = []
    total = 0.0
    for i, v in enumerate(values, start=1):
        total += v or 0.0
        out.append(total / i * 100.0)
    return out


def family_charts(f: FamilyRow) -> str:
    curve = {
        c: _cumulative([p.get(c) if isinstance(p.get(c), int | float) else None for p in f.curve])  # type: ignore[misc]
        for c in CONDITIONS
    }
    growth: dict[str, list[float | None]] = {"#skills": [float(h.skills) for h in f.history]}
    top = max([1.0, *(v for v in growth["#skills"] if v is not None)])
    return _line_chart(f"Learning curve: {f.family}", curve, 100.0, "cumulative completion %") + _line_chart(
        f"Library growth: {f.family}", growth, top, "#skills after the step"
    )


def _table(lines: list[str]) -> str:
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if not set(ln) <= set("|- :")]
    if not rows:
        return ""
    head = "".join(f"<th>{escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table><tr>{head}</tr>{body}</table>"


def render_evolve_html(summary: EvolveSummary) -> str:
    """The Markdown report's sections as HTML, each family's charts after its learning-curve table."""
    md = render_evolve_markdown(summary).splitlines()
    out: list[str] = []
    i = 0
    families = {f.family: f for f in summary.families}
    while i < len(md):
        line = md[i]
        if line.startswith("|"):
            block = []
            while i < len(md) and md[i].startswith("|"):
                block.append(md[i])
                i += 1
            out.append(_table(block))
            continue
        if line.startswith("#"):
            level = min(3, len(line) - len(line.lstrip("#")))
            text = line.lstrip("#").strip()
            out.append(f"<h{level}>{escape(text)}</h{level}>")
            if text.startswith("Learning curve: ") and text[16:] in families:
                out.append(f'<div class="charts">{family_charts(families[text[16:]])}</div>')
        elif line.startswith("- "):
            out.append(f"<p>• {escape(line[2:])}</p>")
        elif line.strip():
            out.append(f"<p>{escape(line)}</p>")
        i += 1
    style = "body{font-family:sans-serif;max-width:1100px;margin:1em auto}td,th{border:1px solid #ccc;padding:2px 6px}"
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>evolve report {escape(summary.run_id)}</title>'
        f"<style>{style} table{{border-collapse:collapse}}</style></head><body>"
        '<p><a href="report.html">the paired run report (report.html)</a></p>' + "\n".join(out) + "</body></html>\n"
    )
