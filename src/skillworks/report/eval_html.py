"""The eval report as one self-contained HTML page (``eval_report.html``): a Skill Lift forest plot per
comparison with 95% intervals, case x metric heatmaps for both sides, negative-lift cases with their
trajectories side by side, the weights used, and why unscored trials are unscored."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from skillworks.report.charts import HeatInput, heatmap, render_chart
from skillworks.report.eval_report import CaseScore, Comparison, EvalSummary, MetricRow
from skillworks.report.forest import ForestInput, forest_plot
from skillworks.report.jinja_env import template
from skillworks.report.model import SCRIPTED_NOTE
from skillworks.report.trial_pages import TrialPages, href


def fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def lift_label(row: MetricRow) -> str:
    """e.g. ``+0.222 (95% CI [+0.101, +0.343], 9 paired cases)`` or ``… inconclusive (n=3)``."""
    if row.lift is None:
        return f"no lift (no case scored on both sides; {row.n_unpaired} unpaired)"
    if row.ci_normal is None:
        return f"{row.lift:+.3f} ({row.ci_note or f'too few cases for an interval — n={row.n_paired}'})"
    low, high = row.ci_normal
    text = f"{row.lift:+.3f} (95% CI [{low:+.3f}, {high:+.3f}], {row.n_paired} paired cases)"
    if low <= 0 <= high:
        text += f" inconclusive (n={row.n_paired})"
    return text


def _case_label(c: CaseScore, multi_agent: bool) -> str:
    return f"{c.task_id} · {c.agent}" if multi_agent else c.task_id


def _charts(c: Comparison, s: EvalSummary, page_of: Mapping[str, Path], out_dir: Path) -> dict[str, str]:
    rows = [*c.metrics, *([c.reward] if c.reward else []), *c.graders]
    forest = forest_plot(
        f"{c.kind} per metric, {c.treatment} vs {c.baseline}, with 95% CI over paired cases",
        [
            ForestInput(
                label=r.metric,
                estimate=r.lift,
                low=r.ci_normal[0] if r.ci_normal else None,
                high=r.ci_normal[1] if r.ci_normal else None,
                value_label=lift_label(r),
            )
            for r in rows
        ],
        axis_label="lift = treatment − baseline (metric units); 0 = no effect",
        min_span=0.1,  # no max_span: the axis extends to every interval end, none is cut off
        fmt=lambda v: f"{v:+.3f}",
    )
    multi = len(s.agents) > 1
    metrics = list(dict.fromkeys(x.metric for x in c.case_scores))
    cases = list(dict.fromkeys((x.skill, x.agent, x.task_id) for x in c.case_scores))
    by_key = {(x.skill, x.agent, x.task_id, x.metric): x for x in c.case_scores}
    out: dict[str, str] = {"forest": render_chart(forest)}
    for side, name in ((c.treatment, "treatment"), (c.baseline, "baseline")):
        grid = []
        for case in cases:
            row = []
            for m in metrics:
                x = by_key.get((*case, m))
                value = None if x is None else (x.treatment if name == "treatment" else x.baseline)
                trials = [] if x is None else (x.treatment_trials if name == "treatment" else x.baseline_trials)
                page = next((page_of[t] for t in trials if t in page_of), None)
                row.append(
                    HeatInput(
                        value=value,
                        text=fmt(value) if value is not None else "–",
                        tooltip=f"{case[2]} / {m} / {side}: {fmt(value)} over {len(trials)} trial(s)",
                        href=href(page, out_dir) if page is not None else None,
                    )
                )
            grid.append(row)
        labels = [_case_label(by_key[(*k, metrics[0])], multi) if (*k, metrics[0]) in by_key else k[2] for k in cases]
        out[name] = render_chart(heatmap(f"Case x metric, {side} (mean over scored trials)", labels, metrics, grid))
    return out


def render_eval_html(s: EvalSummary, out_dir: Path | None = None, pages: Mapping[str, TrialPages] | None = None) -> str:
    """The eval report page; with ``out_dir`` and the runs' trial ``pages``, cases link to their trials."""
    page_of: dict[str, Path] = {}
    pair_of: dict[str, Path] = {}
    for run_pages in (pages or {}).values():
        for tid, p in run_pages.trials.items():
            page_of.setdefault(tid, p)
        for tid, p in run_pages.pairs.items():
            pair_of.setdefault(tid, p)
    base = out_dir or Path(".")
    links = {t: href(p, base) for t, p in page_of.items()} if out_dir else {}
    pair_links = {t: href(p, base) for t, p in pair_of.items()} if out_dir else {}
    charts = {i: _charts(c, s, page_of if out_dir else {}, base) for i, c in enumerate(s.comparisons)}
    scripted = "scripted" in s.providers or any("scripted provider" in n for n in s.notes)
    return template("eval_report.html.j2").render(
        s=s,
        charts=charts,
        links=links,
        pair_links=pair_links,
        fmt=fmt,
        lift_label=lift_label,
        scripted=scripted,
        scripted_note=SCRIPTED_NOTE,
    )
