"""The campaign section of a report: retried attempts, trials a spend cap kept from running (whole pairs,
left out of the frame), why the last session stopped, and the spend over every attempt."""

from __future__ import annotations

from collections.abc import Sequence

from skillworks.experiment.campaign import PairKey, read_campaign
from skillworks.report.loading import RunData
from skillworks.report.model import CampaignOut
from skillworks.stats.rates import latest_attempts
from skillworks.stats.tables import cost_is_known


def excluded_pairs(runs: Sequence[RunData]) -> dict[str, set[PairKey]]:
    """Per run id: the pairs (task, agent, trial index) a spend cap kept from running."""
    return {run.run_id: {row.pair for row in read_campaign(run.run_dir).not_run} for run in runs}


def campaign_section(runs: Sequence[RunData]) -> CampaignOut | None:
    """None for runs that never retried, capped or stopped (the common case)."""
    stopped: list[str] = []
    not_run: list[str] = []
    superseded = 0
    cost_all = cost_superseded = 0.0
    tokens_all = attempts = unknown_all = 0
    for run in runs:
        record = read_campaign(run.run_dir)
        if record.stopped:
            stopped.append(f"{run.run_id}: {record.stopped}")
        not_run += [row.trial_id for row in record.not_run]
        latest = {id(r) for r in latest_attempts(run.results)}
        for r in run.results:
            if "regraded_from_attempt" in r.paths:  # a regrade re-reports its attempt's usage: counted once
                if id(r) not in latest:
                    superseded += 1
                continue
            cost_all += r.usage.cost_usd
            attempts += 1
            unknown_all += not cost_is_known(r)
            tokens_all += r.usage.input_tokens + r.usage.output_tokens
            if id(r) not in latest:
                superseded += 1
                cost_superseded += r.usage.cost_usd
    if not (stopped or not_run or superseded):
        return None
    return CampaignOut(
        retried=superseded,
        not_run=len(not_run),
        not_run_trials=not_run,
        stopped=stopped,
        cost_usd_all_attempts=round(cost_all, 10),
        tokens_all_attempts=tokens_all,
        cost_usd_superseded=round(cost_superseded, 10),
        attempts=attempts,
        cost_unknown_attempts=unknown_all,
    )
