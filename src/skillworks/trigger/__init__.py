"""Trigger evaluation (`skillworks trigger`): does the agent load the skill when it should and leave it alone
when it should not? Queries run as trials of a real harness or the builtin agent with only the skill under test
(plus chosen siblings and decoys) visible; per-query trigger rates, precision, recall, F1 and accuracy with
intervals, routing to competing skills."""

from skillworks.trigger.queries import TriggerQuery, load_queries, query_tasks, write_queries
from skillworks.trigger.report import TriggerReport, read_report, render_markdown, write_report_files
from skillworks.trigger.run import TriggerOptions, TriggerOutcome, run_trigger
from skillworks.trigger.scoring import (
    MIN_QUERIES_FOR_INTERVAL,
    QueryScore,
    RateOut,
    TriggerScores,
    f1_bootstrap,
    score_queries,
)

__all__ = [
    "MIN_QUERIES_FOR_INTERVAL",
    "QueryScore",
    "RateOut",
    "TriggerOptions",
    "TriggerOutcome",
    "TriggerQuery",
    "TriggerReport",
    "TriggerScores",
    "f1_bootstrap",
    "load_queries",
    "query_tasks",
    "read_report",
    "render_markdown",
    "run_trigger",
    "score_queries",
    "write_queries",
    "write_report_files",
]
