"""`render_html`: the run report as one self-contained HTML page (inline CSS and SVG charts; no script and
no external asset). Per-task cells link to the trial pages written by `trial_pages` when those exist."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from skillworks.report import formatting
from skillworks.report.charts import render_chart
from skillworks.report.error_groups import group_errors
from skillworks.report.jinja_env import template
from skillworks.report.model import SCRIPTED_NOTE, Summary
from skillworks.report.run_charts import column_order, delta_label, run_charts
from skillworks.report.trial_pages import TrialPages, resolved_href

_TEMPLATE = "report.html.j2"


@dataclass(frozen=True)
class TrialAnchor:
    label: str
    outcome: str
    href: str
    pair_href: str | None


def _anchors(
    summary: Summary, out_dir: Path | None, pages: Mapping[str, TrialPages]
) -> dict[tuple[str, str, str], list[TrialAnchor]]:
    out: dict[tuple[str, str, str], list[TrialAnchor]] = {}
    if out_dir is None:
        return out
    base = out_dir.resolve()  # the pages' paths are resolved already: one resolve, not one per link
    for row in summary.per_task:
        for cell in row.cells:
            anchors = []
            for t in cell.trials:
                run_pages = pages.get(t.run_id)
                page = run_pages.trials.get(t.trial_id) if run_pages else None
                if page is None:
                    continue
                pair = run_pages.pairs.get(t.trial_id) if run_pages else None
                label = f"t{t.trial_index}" if len(summary.run_ids) == 1 else f"{t.run_id}:t{t.trial_index}"
                pair_href = resolved_href(pair, base) if pair else None
                anchors.append(TrialAnchor(label, t.outcome, resolved_href(page, base), pair_href))
            out[(row.task_id, cell.condition, cell.agent)] = anchors
    return out


def render_html(summary: Summary, out_dir: Path | None = None, pages: Mapping[str, TrialPages] | None = None) -> str:
    """The report page; with ``out_dir`` (where it will be written) and the runs' trial ``pages`` (by run
    id), every per-task cell links to its trials and their side-by-side pages."""
    f = SimpleNamespace(
        pct=formatting.pct,
        pp=formatting.pp,
        num=formatting.num,
        interval=formatting.interval,
        interval_pp=formatting.interval_pp,
        gain_ci=formatting.gain_ci,
        cost_text=formatting.cost_text,
        counts=formatting.counts,
        agent_label=formatting.agent_label,
        one_line=formatting.one_line,
        delta_label=delta_label,
        ungraded_only=formatting.ungraded_only,
    )
    anchors = _anchors(summary, out_dir, pages or {})

    def cell_href(task: str, condition: str, agent: str) -> str | None:
        found = anchors.get((task, condition, agent))
        return found[0].href if found else None

    charts = run_charts(summary, cell_href)
    return template(_TEMPLATE).render(
        s=summary,
        f=f,
        scripted_note=SCRIPTED_NOTE,
        multi_agent=len(summary.agents) > 1,
        chart=lambda name: render_chart(charts.get(name)),
        anchors=anchors,
        columns=column_order(summary),
        times={(t.condition, t.agent): t for t in summary.phase_times},
        evolve_report=out_dir is not None and (out_dir / "evolve_report.html").is_file(),
        error_groups=group_errors(summary.errors),
    )
