"""skillworks.report: a run directory (or several) -> `Summary` -> summary.json, report.md and a
self-contained report.html. Reports are pure functions of the run directories."""

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
from skillworks.report.write import FILE_NAMES, FORMATS, is_eval_run, read_summary, write_reports, write_summary_files

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
