"""The charts of the run report, laid out from a `Summary` (drawn by `charts.render_chart`)."""

from __future__ import annotations

from collections.abc import Callable

from skillworks.report.charts import (
    BarValue,
    Chart,
    HBarInput,
    HeatInput,
    Interval,
    grouped_bar_chart,
    hbar_chart,
    heatmap,
)
from skillworks.report.forest import ForestInput, forest_plot
from skillworks.report.formatting import interval_pp, pct, pp, ungraded_only
from skillworks.report.model import DeltaRow, Summary

CellHref = Callable[[str, str, str], str | None]  # (task, condition, agent) -> link of the cell or None


def _label(condition: str, agent: str | None, multi_agent: bool) -> str:
    if not multi_agent:
        return condition
    return f"{condition} / {agent if agent is not None else 'all agents'}"


def delta_estimate(d: DeltaRow) -> tuple[float | None, float | None, float | None, int]:
    """(Δ, CI low, CI high, n) in pp: the fixed-frame Δ with its paired bootstrap CI over tasks; for a
    summary written before that CI existed, the scored-only paired Δ and its CI."""
    if d.ci_method is not None or (d.ci_low_pp is not None and d.ci_high_pp is not None):
        return d.delta_pp, d.ci_low_pp, d.ci_high_pp, d.paired.n_paired + len(d.paired.unpaired_tasks)
    p = d.paired
    return p.delta_pp, p.ci_low_pp, p.ci_high_pp, p.n_paired


def delta_label(d: DeltaRow) -> str:
    est, low, high, n = delta_estimate(d)
    if est is None:
        return f"Δ undefined ({d.ci_note or 'no task scored on both sides'})"
    if low is None or high is None:
        return f"Δ {pp(est)} pp, {d.ci_note or d.paired.ci_note or 'no interval'}"
    text = f"Δ {pp(est)} pp, 95% CI {interval_pp(low, high)}"
    if low is not None and high is not None and low <= 0 <= high:
        text += f" inconclusive (n={n})"
    return text


def column_order(s: Summary) -> list[int]:
    """Indexes of the per-task cells with an agent's conditions side by side (they come condition by
    condition), for the heatmap and the per-task table."""
    if not s.per_task:
        return []
    cells = s.per_task[0].cells
    agents = {a: i for i, a in enumerate(dict.fromkeys(c.agent for c in cells))}
    return sorted(range(len(cells)), key=lambda i: (agents[cells[i].agent], i))


def run_charts(s: Summary, cell_href: CellHref) -> dict[str, Chart | None]:
    multi = len(s.agents) > 1
    charts: dict[str, Chart | None] = {}
    charts["pass_rates"] = grouped_bar_chart(
        "Pass rate per condition and agent (fixed frame) with Wilson 95% intervals",
        [
            BarValue(
                group=r.agent,
                series=r.condition,
                value=r.rate,
                interval=Interval(r.wilson.low, r.wilson.high) if r.wilson else None,
            )
            for r in s.pass_rates
            if not ungraded_only(r)  # no verifier: no pass rate to draw (the eval report has its Skill Lift)
        ],
    )
    if s.per_task:
        order = column_order(s)
        cols = [(s.per_task[0].cells[i].condition, s.per_task[0].cells[i].agent) for i in order]
        grid = []
        for t in s.per_task:
            row = []
            for c in (t.cells[i] for i in order):
                bad = c.errored + c.missing
                text = pct(c.rate, 0) + (f" ({bad}!)" if bad else "")
                row.append(
                    HeatInput(
                        value=c.rate if c.planned else None,
                        text=text,
                        tooltip=f"{t.task_id} / {_label(c.condition, c.agent, multi)}: {pct(c.rate)} "
                        f"({c.scored} scored, {c.errored} errored, {c.missing} missing of {c.planned})",
                        href=cell_href(t.task_id, c.condition, c.agent),
                    )
                )
            grid.append(row)
        charts["per_task"] = heatmap(
            "Mean reward per task and condition (click a cell for its trials)",
            [t.task_id for t in s.per_task],
            [_label(c, a, multi) for c, a in cols],
            grid,
        )
    # one forest plot, a row per agent and condition (grouped by agent), so that agents compare on one axis
    agents = list(dict.fromkeys(d.agent for d in s.deltas))
    rows = sorted(s.deltas, key=lambda d: agents.index(d.agent))
    one_condition = len({d.condition for d in rows}) == 1

    def forest_label(d: DeltaRow) -> str:
        if not multi:
            return f"{d.condition} vs {d.baseline}"
        return d.agent if one_condition else f"{d.agent} · {d.condition}"

    charts["forest"] = forest_plot(
        "Skill effect: Δ with its paired bootstrap 95% CI over tasks"
        + (f" ({rows[0].condition} vs {rows[0].baseline}, per agent)" if multi and one_condition and rows else ""),
        [
            ForestInput(
                label=forest_label(d),
                estimate=delta_estimate(d)[0],
                low=delta_estimate(d)[1],
                high=delta_estimate(d)[2],
                value_label=delta_label(d),
            )
            for d in rows
        ],
        axis_label="Δ = with − without (percentage points); 0 = no effect",
        min_span=10.0,
        max_span=100.0,  # a Δ of rates stays within ±100 pp; a wider (Wald) end is an arrow with its value
        fmt=lambda v: f"{v:+.1f} pp",
    )
    charts["failure_modes"] = hbar_chart(
        "Failure modes per condition (trials)",
        [
            HBarInput(
                _label(m.condition, m.agent, multi),
                {
                    "timeout": m.timeout,
                    "execution error": m.execution_error,
                    "no output": m.no_output,
                    "verification failed": m.verification_failed,
                    "unclassified": m.unclassified,
                },
            )
            for m in s.failure_modes
        ],
        fmt=lambda v: f"{v:.0f}",
    )
    charts["skill_invocation"] = hbar_chart(
        "Skill invocation rate (share of scored trials that invoked a skill)",
        [
            HBarInput(
                _label(i.condition, i.agent, multi),
                {"invoked": i.rate or 0.0},
                value_label=f"{pct(i.rate, 0)} ({i.invoked_trials}/{i.trials})",
            )
            for i in s.skill_invocation
        ],
        fmt=lambda v: pct(v, 0),
        max_value=1.0,
    )
    charts["tokens"] = hbar_chart(
        "Mean tokens per trial",
        [
            HBarInput(
                _label(u.condition, u.agent, multi),
                {
                    "input (uncached)": max((u.input_tokens_mean or 0) - (u.cached_tokens_mean or 0), 0.0),
                    "cached input": u.cached_tokens_mean or 0.0,
                    "output": u.output_tokens_mean or 0.0,
                },
            )
            for u in s.usage
        ],
        fmt=lambda v: f"{v:,.0f}",
    )
    charts["cost"] = hbar_chart(  # a cell whose every price is unknown has no bar (not a $0 one)
        "Mean cost per trial (USD)",
        [
            HBarInput(_label(u.condition, u.agent, multi), {"cost": u.cost_usd_mean or 0.0})
            for u in s.usage
            if not (u.cost_unknown and u.cost_unknown >= u.trials)
        ],
        fmt=lambda v: f"${v:.4f}",
    )
    charts["time"] = hbar_chart(
        "Mean seconds per trial by phase",
        [
            HBarInput(
                _label(t.condition, t.agent, multi),
                {"setup": t.setup_sec or 0.0, "agent": t.agent_sec or 0.0, "verify": t.verify_sec or 0.0},
            )
            for t in s.phase_times
        ],
        fmt=lambda v: f"{v:.1f} s",
    )
    return charts
