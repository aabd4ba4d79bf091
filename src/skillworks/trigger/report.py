"""The trigger report: ``trigger.json`` (schema `TriggerReport`), ``trigger.md`` and a self-contained
``trigger.html`` (jinja2, inline CSS, no CDN) whose per-query table links each trial to its trajectory page."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from skillworks.report.jinja_env import template
from skillworks.report.model import SCRIPTED_NOTE
from skillworks.report.trial_pages import trial_page
from skillworks.trigger.scoring import RateOut, TriggerScores

if TYPE_CHECKING:
    from skillworks.trigger.run import TriggerOptions, TriggerOutcome

SCHEMA = "skillworks.trigger-report/1"
FILES = {"json": "trigger.json", "md": "trigger.md", "html": "trigger.html"}


class TriggerReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: str = Field(default=SCHEMA, alias="schema")
    run_id: str
    skill: str
    description: str
    agent: str
    model: str | None
    providers: list[str]
    trials_per_query: int
    planned: int
    recorded: int
    errored: int
    cost_usd: float = Field(description="cost of the recorded trials (the solver's model calls)")
    max_cost_usd: float | None
    stopped_by_cost: bool
    siblings: list[str]
    decoys: list[str]
    scores: TriggerScores


def build_report(outcome: TriggerOutcome, options: TriggerOptions, description: str, skill: str) -> TriggerReport:
    results = outcome.results
    return TriggerReport(
        run_id=outcome.run_dir.name,
        skill=skill,
        description=description,
        agent=options.agent,
        model=options.model,
        providers=sorted({r.provider for r in results if r.provider}),
        trials_per_query=options.trials,
        planned=outcome.planned,
        recorded=len(results),
        errored=sum(1 for r in results if r.outcome == "error" or r.error is not None),
        cost_usd=round(outcome.cost_usd, 6),
        max_cost_usd=options.max_cost_usd,
        stopped_by_cost=outcome.stopped_by_cost,
        siblings=_names(outcome, "siblings"),
        decoys=_names(outcome, "decoys"),
        scores=outcome.scores,
    )


def _names(outcome: TriggerOutcome, key: str) -> list[str]:
    try:
        spec = json.loads((outcome.run_dir / "experiment.json").read_text())
        return list(spec["extra"]["trigger"][key])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def pct(r: RateOut | float | None) -> str:
    value = r.value if isinstance(r, RateOut) else r
    return "–" if value is None else f"{100 * value:.1f}%"


def rate_label(r: RateOut) -> str:
    """e.g. ``83.3% [55.2%, 95.3%] (n=12)`` or ``66.7% (too few queries for an interval — n=3)``."""
    if r.value is None:
        return f"– ({r.note or 'n=0'})"
    if r.ci is not None:
        return f"{pct(r)} [{100 * r.ci[0]:.1f}%, {100 * r.ci[1]:.1f}%] (n={r.n})"
    return f"{pct(r)} ({r.note or f'n={r.n}'})"


def render_markdown(report: TriggerReport) -> str:
    s = report.scores
    lines = [
        f"# Trigger evaluation: {report.skill}",
        "",
        f"Agent {report.agent}, model {report.model or '–'}; {report.trials_per_query} trial(s) per query; "
        f"recorded {report.recorded}/{report.planned}, errored {report.errored}; cost ${report.cost_usd:.4f}"
        + (" (stopped at the cost cap)" if report.stopped_by_cost else "")
        + ".",
        "",
    ]
    if "scripted" in report.providers:
        lines += [f"> Warning: {SCRIPTED_NOTE}.", ""]
    lines += [
        f"- Precision: {rate_label(s.precision)}",
        f"- Recall: {rate_label(s.recall)}",
        f"- F1: {rate_label(s.f1)}",
        f"- Accuracy: {rate_label(s.accuracy)}",
        f"- Confusion (queries): TP {s.confusion.tp}, FP {s.confusion.fp}, TN {s.confusion.tn}, FN {s.confusion.fn}",
        f"- Trigger rate, should-trigger trials: {rate_label(s.positive_trigger_rate)}",
        f"- Trigger rate, should-not trials: {rate_label(s.negative_trigger_rate)}",
        "",
        "| Query | Should | Triggered | Rate (95% CI) | Verdict | Routed to |",
        "|---|---|---|---|---|---|",
    ]
    for q in s.queries:
        verdict = "–" if q.correct is None else ("ok" if q.correct else "WRONG")
        routed = ", ".join(f"{k} ×{v}" for k, v in q.routed_to.items()) or "–"
        text = q.query.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {q.id}: {text[:80]} | {'yes' if q.should_trigger else 'no'} | {q.triggered}/{q.scored} | "
            f"{rate_label(q.rate)} | {verdict} | {routed} |"
        )
    if s.routing:
        lines += ["", "Routing (queries a competing skill took instead): "
                  + ", ".join(f"{k} ×{v}" for k, v in s.routing.items())]  # fmt: skip
    return "\n".join(lines) + "\n"


def render_html(report: TriggerReport, run_dir: Path) -> str:
    links: dict[str, str] = {}
    for q in report.scores.queries:
        for t in q.trial_refs:
            page = trial_page(run_dir, t.trial_id)
            if page.is_file():
                links[t.trial_id] = os.path.relpath(page, run_dir).replace(os.sep, "/")
    return template("trigger_report.html.j2").render(
        r=report,
        s=report.scores,
        links=links,
        pct=pct,
        rate_label=rate_label,
        scripted="scripted" in report.providers,
        scripted_note=SCRIPTED_NOTE,
        run_report="report.html",
    )


def write_trigger_reports(outcome: TriggerOutcome, options: TriggerOptions) -> dict[str, Path]:
    spec = json.loads((outcome.run_dir / "experiment.json").read_text())
    info = spec["extra"]["trigger"]
    report = build_report(outcome, options, str(info["description"]), str(info["skill"]))
    return write_report_files(report, outcome.run_dir)


def write_report_files(report: TriggerReport, run_dir: Path) -> dict[str, Path]:
    out = {
        "json": run_dir / FILES["json"],
        "md": run_dir / FILES["md"],
        "html": run_dir / FILES["html"],
    }
    out["json"].write_text(report.model_dump_json(indent=2, by_alias=True) + "\n")
    out["md"].write_text(render_markdown(report))
    out["html"].write_text(render_html(report, run_dir))
    return out


def read_report(path: Path) -> TriggerReport:
    return TriggerReport.model_validate_json(path.read_text())
