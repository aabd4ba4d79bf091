"""Trigger scores: per-query rates over trials, the confusion over queries, Wilson and bootstrap intervals,
the too-few rule, errored trials left out, routing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from skillworks.results import SkillUse, TrialError, TrialResult, Usage, outcome_for
from skillworks.trigger import MIN_QUERIES_FOR_INTERVAL, TriggerQuery, f1_bootstrap, score_queries

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _result(qid: str, k: int, loaded: list[str], *, error: bool = False, failed: Sequence[str] = ()) -> TrialResult:
    err = TrialError(category="sandbox_error", message="boom", phase="setup") if error else None
    reward = None if error else float("target" in loaded)
    return TrialResult(
        trial_id=f"trigger-{qid}__with-skill__a1__t{k}",
        run_id="r1",
        task_id=f"trigger-{qid}",
        condition="with-skill",
        agent="a1",
        trial_index=k,
        seed=k,
        attempt=1,
        reward=reward,
        outcome=outcome_for(reward, err),
        error=err,
        usage=Usage(cost_usd=0.01, calls=1, source="gateway"),
        skill_use=SkillUse(invoked=loaded, failed=list(failed)),
        started_at=T0,
        finished_at=T0,
    )


def _q(i: int, should: bool) -> TriggerQuery:
    return TriggerQuery(id=f"q{i}", query=f"query {i}", should_trigger=should)


def test_rates_verdicts_confusion_and_routing() -> None:
    queries = [_q(1, True), _q(2, True), _q(3, False), _q(4, False)]
    results = [
        _result("q1", 0, ["target"]), _result("q1", 1, ["target"]), _result("q1", 2, []),
        _result("q2", 0, ["rival"]), _result("q2", 1, [], failed=["target"]),
        _result("q2", 2, [], error=True),
        _result("q3", 0, ["target"]), _result("q3", 1, ["target", "rival"]),
        _result("q4", 0, []), _result("q4", 1, []),
    ]  # fmt: skip
    s = score_queries(queries, results, "target", ["rival"], trials=3)
    q1, q2, q3, q4 = s.queries
    assert (q1.triggered, q1.scored, q1.verdict, q1.correct) == (2, 3, True, True)
    assert q1.rate.ci is not None and q1.rate.ci[0] < 2 / 3 < q1.rate.ci[1]  # Wilson over the trials
    assert (q2.triggered, q2.scored, q2.errored, q2.verdict) == (0, 2, 1, False)  # a failed load is no trigger
    assert q2.routed_to == {"rival": 1} and s.routing == {"rival": 1}
    assert q3.verdict is True and q3.correct is False and q3.routed_to == {}  # target loaded: not routed
    assert q4.correct is True
    assert (s.confusion.tp, s.confusion.fp, s.confusion.tn, s.confusion.fn) == (1, 1, 1, 1)
    assert s.precision.value == 0.5 and s.recall.value == 0.5 and s.f1.value == 0.5 and s.accuracy.value == 0.5
    # four queries: no overall interval, said so
    for r in (s.precision, s.recall, s.f1, s.accuracy):
        assert r.ci is None and r.note is not None and r.note.startswith("too few queries for an interval — n=")
    assert s.positive_trigger_rate.value == pytest.approx(2 / 5) and s.negative_trigger_rate.value == 0.5


def test_a_query_without_a_scored_trial_has_no_verdict() -> None:
    s = score_queries([_q(1, True)], [_result("q1", 0, [], error=True)], "target", [], trials=1)
    assert s.queries[0].verdict is None and s.unscored_queries == ["q1"] and s.accuracy.value is None


def test_intervals_above_the_threshold() -> None:
    n = MIN_QUERIES_FOR_INTERVAL + 2
    queries = [_q(i, i % 2 == 0) for i in range(n)]
    # every should-trigger query triggers, one should-not query also does
    results = [_result(f"q{i}", 0, ["target"] if i % 2 == 0 or i == 1 else []) for i in range(n)]
    s = score_queries(queries, results, "target", [], trials=1)
    assert s.accuracy.ci is not None and s.accuracy.ci[0] < s.accuracy.value < s.accuracy.ci[1]  # type: ignore[operator]
    assert s.f1.value == pytest.approx(2 * 6 / (2 * 6 + 1))
    assert s.f1.ci is not None and s.f1.ci[0] <= s.f1.value <= s.f1.ci[1] and s.f1.ci[1] <= 1.0
    assert s.recall.ci is None  # six positive queries: too few for its own interval
    assert s.recall.note == "too few queries for an interval — n=6"


def test_f1_bootstrap_is_deterministic_and_honours_the_threshold() -> None:
    truth = [True, False] * 10
    pred = [True, True, False, False] * 5
    assert f1_bootstrap(truth, pred, seed=3) == f1_bootstrap(truth, pred, seed=3)
    low, high = f1_bootstrap(truth, pred) or (0.0, 0.0)
    assert 0.0 <= low < 0.5 < high <= 1.0
    assert f1_bootstrap(truth[:4], pred[:4]) is None
