"""skillworks.report: a run directory (or several) -> `Summary` -> summary.json, report.md and a
self-contained report.html. Reports are pure functions of the run directories. Names are imported on first use
(`write_reports` at the end of a run loads what writing needs, not the ACES eval reports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillworks._lazy import lazy_exports

if TYPE_CHECKING:
    from skillworks.report.eval_report import (
        EvalSummary,
        build_eval_summary,
        read_eval_summary,
        render_eval_markdown,
        write_decoy_stress_report,
        write_eval_report,
    )
    from skillworks.report.html import render_html
    from skillworks.report.loading import AgentConfig, RunData, load_run, read_results
    from skillworks.report.markdown import render_markdown, render_pass_rate_table
    from skillworks.report.model import SCRIPTED_NOTE, Summary
    from skillworks.report.summary import build_summary
    from skillworks.report.trial_pages import TrialPages, write_trial_pages
    from skillworks.report.write import (
        FILE_NAMES,
        FORMATS,
        is_eval_run,
        read_summary,
        write_reports,
        write_summary_files,
    )

_LAZY = {
    "render_html": "skillworks.report.html",
    "AgentConfig": "skillworks.report.loading",
    "RunData": "skillworks.report.loading",
    "load_run": "skillworks.report.loading",
    "read_results": "skillworks.report.loading",
    "render_markdown": "skillworks.report.markdown",
    "render_pass_rate_table": "skillworks.report.markdown",
    "SCRIPTED_NOTE": "skillworks.report.model",
    "Summary": "skillworks.report.model",
    "build_summary": "skillworks.report.summary",
    "TrialPages": "skillworks.report.trial_pages",
    "write_trial_pages": "skillworks.report.trial_pages",
    "FILE_NAMES": "skillworks.report.write",
    "FORMATS": "skillworks.report.write",
    "is_eval_run": "skillworks.report.write",
    "read_summary": "skillworks.report.write",
    "write_reports": "skillworks.report.write",
    "write_summary_files": "skillworks.report.write",
}

__all__ = [
    "FILE_NAMES",
    "FORMATS",
    "SCRIPTED_NOTE",
    "AgentConfig",
    "EvalSummary",
    "RunData",
    "Summary",
    "TrialPages",
    "build_eval_summary",
    "build_summary",
    "is_eval_run",
    "load_run",
    "read_eval_summary",
    "read_results",
    "read_summary",
    "render_eval_markdown",
    "render_html",
    "render_markdown",
    "render_pass_rate_table",
    "write_decoy_stress_report",
    "write_eval_report",
    "write_reports",
    "write_summary_files",
    "write_trial_pages",
]


__getattr__ = lazy_exports(__name__, _LAZY, globals())
