"""The headline of a run in a few plain lines (the end of `skillworks run`, `make demo`): per agent and
condition the pass rate with its interval and errors, each condition's Δ versus its baseline, and the
errors grouped by kind (`error_groups`: 20 identical errors are one line ``×20``)."""

from __future__ import annotations

from skillworks.report.error_groups import error_group_lines
from skillworks.report.formatting import gain_text, interval_pp, pct, pp, rate_interval, ungraded_only
from skillworks.report.model import SCRIPTED_NOTE, PassRateRow, Summary


def headline_lines(summary: Summary) -> list[str]:
    """Plain text lines (no markup), each under 80 columns for the usual condition names."""
    lines: list[str] = []
    if summary.scripted_provider:
        lines.append(f"NOTE: {SCRIPTED_NOTE}")
    deltas = {(d.agent, d.condition): d for d in summary.deltas}
    width = max((len(r.condition) for r in summary.pass_rates), default=0)
    by_agent: dict[str, list[PassRateRow]] = {}
    for r in summary.pass_rates:  # rows come condition by condition: gather each agent's rows
        by_agent.setdefault(r.agent, []).append(r)
    for agent, rows in by_agent.items():
        lines.append(f"{agent}:")
        for row in rows:
            rate = (
                f"pass rate {'—':>6}  (no verifier)"
                if ungraded_only(row)
                else f"pass rate {pct(row.rate):>6}  "
                + ("95% CI " if row.task_interval is not None or row.task_interval_note is None else "")
                + rate_interval(row)
            )
            lines.append(
                f"  {row.condition:<{width}}  {rate}"
                f"  errors {row.errored}/{row.planned}" + (f", ungraded {row.ungraded}" if row.ungraded else "")
            )
            delta = deltas.get((agent, row.condition))
            if delta is not None:
                paired = delta.paired
                g = "undefined" if delta.g is None else f"{delta.g:.2f}"
                lo, hi = delta.ci_low_pp, delta.ci_high_pp
                crosses = lo is not None and hi is not None and lo <= 0 <= hi
                if delta.delta_pp is None:
                    lines.append(f"    {delta.ci_note or 'no Δ'}")
                    continue
                lines.append(
                    f"    Δ vs {delta.baseline} {pp(delta.delta_pp)} pp, "
                    + (f"95% CI {interval_pp(lo, hi)}" if delta.ci_note is None else delta.ci_note)
                    + (f" inconclusive (n={row.n_tasks})" if crosses else "")
                    + f", g {g}"
                )
                if delta.g is not None and (delta.g_ci_low is not None or delta.g_ci_note != delta.ci_note):
                    lines.append(f"    g {gain_text(delta.g, delta.g_ci_low, delta.g_ci_high, delta.g_ci_note)}")
                lines.append(
                    f"    scored-only: Δ {pp(paired.delta_pp)} pp over {paired.n_paired} paired tasks"
                    + (
                        f", 95% CI {interval_pp(paired.ci_low_pp, paired.ci_high_pp)}"
                        if paired.ci_note is None
                        else f", no interval (n={paired.n_paired})"
                    )
                )
    return lines + error_group_lines(summary.errors)
