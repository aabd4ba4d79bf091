"""Trigger scores from trial results: per query the trigger rate over its trials, overall precision, recall,
F1 and accuracy over queries, and routing (which competing skill took a query instead).

- A trial *triggered* when the skill under test is in its `skill_use.invoked` (a successful load through a
  skill tool or a read of SKILL.md whose content reached the agent; a failed load or a mention is not).
- An errored trial is not scored (an infrastructure error is neither a trigger nor a miss) and is counted.
- A query's verdict is "triggers" when its trigger rate over scored trials is at least ``threshold``
  (0.5, as skill-creator's run_eval); a query with no scored trial has no verdict and is left out.
- Intervals: Wilson (skillworks.stats) for every rate (per-query trigger rate over trials; accuracy, precision
  and recall over queries); F1 by a percentile bootstrap over queries (fixed seed). Below
  ``MIN_QUERIES_FOR_INTERVAL`` queries with a verdict no overall interval is given: "too few queries for an
  interval — n=…".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from skillworks.results import TrialResult
from skillworks.stats import wilson_interval
from skillworks.stats.rates import is_scored
from skillworks.trigger.queries import TriggerQuery

MIN_QUERIES_FOR_INTERVAL = 10
F1_RESAMPLES = 2000
DEFAULT_THRESHOLD = 0.5


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RateOut(_Model):
    value: float | None = Field(description="the estimate (None when its denominator is 0)")
    n: int = Field(description="its denominator")
    ci: tuple[float, float] | None = Field(default=None, description="95% interval, when n allows one")
    note: str | None = Field(default=None, description="why there is no interval")


class TrialRef(_Model):
    trial_id: str
    triggered: bool | None = Field(description="None: the trial errored (not scored)")
    loaded: list[str] = Field(default_factory=list, description="staged skills the agent loaded")
    failed: list[str] = Field(default_factory=list, description="skills a load of which failed")
    cost_usd: float | None = None


class QueryScore(_Model):
    id: str
    query: str
    should_trigger: bool
    note: str | None = None
    trials: int = Field(description="trials planned")
    scored: int
    errored: int
    triggered: int
    rate: RateOut
    verdict: bool | None = Field(description="rate >= threshold; None when no trial was scored")
    correct: bool | None
    routed_to: dict[str, int] = Field(
        default_factory=dict, description="competing skills loaded in trials where the target was not"
    )
    trial_refs: list[TrialRef] = Field(default_factory=list)


class Confusion(_Model):
    tp: int
    fp: int
    tn: int
    fn: int


class TriggerScores(_Model):
    threshold: float
    queries: list[QueryScore]
    confusion: Confusion
    precision: RateOut
    recall: RateOut
    f1: RateOut
    accuracy: RateOut
    positive_trigger_rate: RateOut = Field(description="share of trials of should-trigger queries that triggered")
    negative_trigger_rate: RateOut = Field(description="share of trials of should-not queries that triggered")
    unscored_queries: list[str] = Field(default_factory=list)
    routing: dict[str, int] = Field(default_factory=dict, description="competing skill -> queries it took")
    min_queries_for_interval: int = MIN_QUERIES_FOR_INTERVAL


def _too_few(n: int) -> str:
    return f"too few queries for an interval — n={n}"


def _rate(k: int, n: int, *, queries: bool) -> RateOut:
    if n == 0:
        return RateOut(value=None, n=0, note="no observation")
    value = k / n
    if queries and n < MIN_QUERIES_FOR_INTERVAL:
        return RateOut(value=value, n=n, note=_too_few(n))
    ci = wilson_interval(value, n)
    return RateOut(value=value, n=n, ci=(ci.low, ci.high) if ci else None)


def _f1(tp: int, fp: int, fn: int) -> float | None:
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else None


def f1_bootstrap(
    truth: Sequence[bool], predicted: Sequence[bool], resamples: int = F1_RESAMPLES, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile 95% interval of F1 over queries resampled with replacement (None below the threshold)."""
    n = len(truth)
    if n < MIN_QUERIES_FOR_INTERVAL:
        return None
    t = np.asarray(truth, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    tp = (t[idx] & p[idx]).sum(axis=1)
    fp = (~t[idx] & p[idx]).sum(axis=1)
    fn = (t[idx] & ~p[idx]).sum(axis=1)
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), np.nan)
    f1 = f1[~np.isnan(f1)]
    if f1.size == 0:
        return None
    low, high = np.percentile(f1, [2.5, 97.5])
    return float(low), float(high)


def score_queries(
    queries: Sequence[TriggerQuery],
    results: Sequence[TrialResult],
    target: str,
    competitors: Sequence[str],
    trials: int,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
) -> TriggerScores:
    """Scores of one trigger run (`results`: its latest attempt per trial)."""
    by_task: dict[str, list[TrialResult]] = {}
    for r in results:
        by_task.setdefault(r.task_id, []).append(r)
    rivals = set(competitors)
    scores: list[QueryScore] = []
    routing: Counter[str] = Counter()
    pos = [0, 0]
    neg = [0, 0]
    for q in queries:
        rows = sorted(by_task.get(q.task_id, []), key=lambda r: r.trial_index)
        refs: list[TrialRef] = []
        routed: Counter[str] = Counter()
        triggered = scored = 0
        for r in rows:
            ok = is_scored(r)
            hit = target in r.skill_use.invoked
            loaded = [n for n in r.skill_use.invoked if n == target or n in rivals]
            refs.append(
                TrialRef(
                    trial_id=r.trial_id,
                    triggered=hit if ok else None,
                    loaded=loaded,
                    failed=list(r.skill_use.failed),
                    cost_usd=r.usage.cost_usd,
                )
            )
            if not ok:
                continue
            scored += 1
            triggered += hit
            if not hit:
                routed.update(n for n in set(loaded) if n in rivals)
        rate = _rate(triggered, scored, queries=False)
        verdict = None if scored == 0 else triggered / scored >= threshold
        counts = pos if q.should_trigger else neg
        counts[0] += triggered
        counts[1] += scored
        if verdict is False or (verdict is None and routed):
            routing.update(set(routed))
        scores.append(
            QueryScore(
                id=q.id,
                query=q.query,
                should_trigger=q.should_trigger,
                note=q.note,
                trials=trials,
                scored=scored,
                errored=len(rows) - scored,
                triggered=triggered,
                rate=rate,
                verdict=verdict,
                correct=None if verdict is None else verdict == q.should_trigger,
                routed_to=dict(sorted(routed.items())),
                trial_refs=refs,
            )
        )
    judged = [s for s in scores if s.verdict is not None]
    tp = sum(1 for s in judged if s.should_trigger and s.verdict)
    fp = sum(1 for s in judged if not s.should_trigger and s.verdict)
    tn = sum(1 for s in judged if not s.should_trigger and not s.verdict)
    fn = sum(1 for s in judged if s.should_trigger and not s.verdict)
    f1 = _f1(tp, fp, fn)
    n = len(judged)
    f1_ci = f1_bootstrap([s.should_trigger for s in judged], [bool(s.verdict) for s in judged], seed=seed)
    f1_out = RateOut(
        value=f1,
        n=n,
        ci=f1_ci if f1 is not None else None,
        note=_too_few(n) if n < MIN_QUERIES_FOR_INTERVAL else (None if f1_ci else "no interval (F1 undefined)"),
    )
    if f1 is None:
        f1_out = RateOut(value=None, n=n, note="F1 undefined: no positive query and no trigger")
    return TriggerScores(
        threshold=threshold,
        queries=scores,
        confusion=Confusion(tp=tp, fp=fp, tn=tn, fn=fn),
        precision=_rate(tp, tp + fp, queries=True),
        recall=_rate(tp, tp + fn, queries=True),
        f1=f1_out,
        accuracy=_rate(tp + tn, n, queries=True),
        positive_trigger_rate=_rate(pos[0], pos[1], queries=False),
        negative_trigger_rate=_rate(neg[0], neg[1], queries=False),
        unscored_queries=[s.id for s in scores if s.verdict is None],
        routing=dict(sorted(routing.items())),
    )
