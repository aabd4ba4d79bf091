"""A short Markdown summary of a run for a pull-request comment (``skillworks report --format pr-comment``):
the pass rate per condition with its interval and errors, the skill effect with its paired CI (and
"inconclusive" when it crosses 0), the eval Skill Lift when the run is an eval run, and the worst tasks.
GitHub renders it as is; it stays far below GitHub's 65,536-character comment limit. Every name and
message from the run (task, condition, agent and run ids, error messages) goes through
`markdown_text`, so a hostile task name can neither format, link, mention nor break the tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from skillworks.report.error_groups import group_errors
from skillworks.report.formatting import gain_text, interval_pp, pct, pp, rate_interval, ungraded_only
from skillworks.report.markdown_text import md_code, md_text
from skillworks.report.model import SCRIPTED_NOTE, DeltaRow, PassRateRow, Summary
from skillworks.report.run_charts import column_order, delta_estimate

_Row = TypeVar("_Row", PassRateRow, DeltaRow)
MAX_TASK_ROWS = 15
MAX_ERROR_GROUPS = 20  # kinds of error listed (the largest first)
MAX_ERROR_TRIALS = 10  # collapsed trial-id items per kind
MARKER = "<!-- skillworks-report -->"  # lets a CI step find and update its own comment


def _by_agent(rows: Sequence[_Row]) -> list[_Row]:
    """Rows grouped by agent (they come condition by condition), conditions in their order."""
    agents = list(dict.fromkeys(r.agent for r in rows))
    return sorted(rows, key=lambda r: agents.index(r.agent))


def render_pr_comment(summary: Summary, eval_lines: list[str] | None = None) -> str:
    s = summary
    lines = [MARKER, f"### skillworks: {md_text(', '.join(s.run_ids))}", ""]
    if s.scripted_provider:
        lines += [f"> **Warning:** {SCRIPTED_NOTE}.", ""]
    c = s.counts
    lines += [
        f"{len(s.tasks)} task(s) × {len(s.conditions)} condition(s) × {len(s.agents)} agent(s) × "
        f"{s.trials_per_task} trial(s): {c.scored}/{c.planned} scored, {c.errored} errored, {c.missing} missing"
        + (f", {c.ungraded} ungraded (no verifier)" if c.ungraded else "")
        + ".",
        "",
        "| Condition | Agent | Pass rate | 95% CI (over tasks) | Errors |",
        "|---|---|---:|---|---:|",
    ]
    lines += [
        f"| {md_text(r.condition)} | {md_text(r.agent)} | "
        + ("— (ungraded) | — |" if ungraded_only(r) else f"{pct(r.rate)} | {rate_interval(r)} |")
        + f" {r.errored}/{r.planned} |"
        for r in _by_agent(s.pass_rates)
    ]
    if s.deltas:
        lines += [
            "",
            f"**Skill effect vs {md_code(s.deltas[0].baseline)}** (paired over tasks, trial noise included)",
            "",
        ]
        lines += ["| Condition | Agent | Δ (pp) | 95% CI | Verdict | g |", "|---|---|---:|---|---|---|"]
        for d in _by_agent(s.deltas):
            est, low, high, n = delta_estimate(d)
            if low is None or high is None:
                verdict = d.ci_note or f"no interval (n={n})"
            elif low > 0:
                verdict = "better"
            elif high < 0:
                verdict = "worse"
            else:
                verdict = f"inconclusive (n={n})"
            lines.append(
                f"| {md_text(d.condition)} | {md_text(d.agent)} | {pp(est)} | {interval_pp(low, high)} | {verdict} "
                f"| {gain_text(d.g, d.g_ci_low, d.g_ci_high, d.g_ci_note)} |"
            )
    if eval_lines:
        lines += ["", "**Skill Lift**", "", *[f"- {md_text(x)}" for x in eval_lines]]
    if s.per_task and len(s.conditions) > 1:
        spread = sorted(
            s.per_task, key=lambda t: max(x.rate for x in t.cells) - min(x.rate for x in t.cells), reverse=True
        )
        shown = spread[:MAX_TASK_ROWS]
        order = column_order(s)  # an agent's conditions side by side
        cols = [(s.per_task[0].cells[i].condition, s.per_task[0].cells[i].agent) for i in order]
        multi = len(s.agents) > 1
        head = [f"{cd} / {ag}" if multi else cd for cd, ag in cols]
        lines += [
            "",
            f"<details><summary>Per task (the {len(shown)} of {len(s.per_task)} with the largest spread)</summary>",
            "",
        ]
        lines += ["| Task | " + " | ".join(md_text(h) for h in head) + " |", "|---|" + "---:|" * len(cols)]
        lines += [
            f"| {md_text(t.task_id)} | " + " | ".join(pct(t.cells[i].rate, 0) for i in order) + " |" for t in shown
        ]
        lines += ["", "</details>"]
    if s.errors:
        groups = group_errors(s.errors)
        lines += [
            "",
            f"<details><summary>{len(s.errors)} errored trial(s), {len(groups)} kind(s) of error</summary>",
            "",
        ]
        lines += [
            f"- ×{g.count} {md_text(g.phase or '?')} / {md_text(g.category or '?')}"
            + (" (retried)" if g.superseded else "")
            + f": {md_text(g.message[:200])} — "
            + ", ".join(md_code(i) for i in g.items[:MAX_ERROR_TRIALS])
            + (f", … +{len(g.items) - MAX_ERROR_TRIALS} more" if len(g.items) > MAX_ERROR_TRIALS else "")
            for g in groups[:MAX_ERROR_GROUPS]
        ]
        if len(groups) > MAX_ERROR_GROUPS:
            lines.append(f"- … {len(groups) - MAX_ERROR_GROUPS} more kind(s): see report.md")
        lines += ["", "</details>"]
    lines += ["", "Full report: `report.html` in the run directory (self-contained; open it from the CI artifact)."]
    return "\n".join(lines) + "\n"
