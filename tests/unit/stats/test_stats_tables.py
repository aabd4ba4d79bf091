"""Outcome, failure-mode, skill-invocation and usage tables."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skillworks.results import TrialResult
from skillworks.stats import failure_mode_counts, outcome_counts, skill_invocation, usage_totals

Trial = Callable[..., TrialResult]


def _curated(trial: Trial) -> list[TrialResult]:
    return [
        trial("t1", "curated", 0, 1.0, invoked=["skill-a"], cost=0.02, input_tokens=1000),
        trial("t1", "curated", 1, 1.0, invoked=["skill-a", "skill-b"], cost=0.02, input_tokens=1000),
        trial("t1", "curated", 2, 1.0, cost=0.02, input_tokens=1000),
        trial("t2", "curated", 0, 1.0, invoked=["skill-a"], cost=0.02, input_tokens=1000),
        trial("t2", "curated", 1, 0.5, cost=0.02, input_tokens=1000),
        trial("t2", "curated", 2, None, error=True, invoked=["skill-a"]),
    ]


def test_skill_invocation_rate_and_resolution(trial: Trial) -> None:
    si = skill_invocation(_curated(trial))
    assert si.trials == 5 and si.errored_excluded == 1
    assert si.invoked_trials == 3
    assert si.rate == pytest.approx(0.6)
    assert si.invoked.mean_reward == pytest.approx(1.0)
    assert si.invoked.solved_rate == pytest.approx(1.0)
    assert si.not_invoked.mean_reward == pytest.approx(0.75)
    assert si.not_invoked.solved_rate == pytest.approx(0.5)
    assert si.skills == {"skill-a": 3, "skill-b": 1}


def test_skill_invocation_empty() -> None:
    si = skill_invocation([])
    assert si.rate is None and si.invoked.mean_reward is None


def test_usage_sums_and_means(trial: Trial) -> None:
    u = usage_totals(_curated(trial))
    assert u.trials == 6
    assert u.input_tokens == 5000
    assert u.cost_usd == pytest.approx(0.10)
    assert u.cost_usd_mean == pytest.approx(0.10 / 6)
    assert u.calls == 6
    assert u.usage_sources == {"gateway": 6}
    assert u.providers == {"unknown": 6}


def test_outcomes_and_failure_modes(trial: Trial) -> None:
    results = _curated(trial)
    oc = outcome_counts(results, planned=8)
    assert (oc.solved, oc.partial, oc.failed, oc.error, oc.missing) == (4, 1, 0, 1, 2)
    results[4] = results[4].model_copy(update={"failure_mode": "verification_failed"})
    fm = failure_mode_counts(results)
    assert fm.verification_failed == 1
    assert fm.unclassified == 1  # the errored trial has no failure mode
    assert fm.timeout == 0


def test_silent_bypass_counts_staged_trials_that_loaded_no_skill(trial: Trial) -> None:
    """Issue 28: a condition staged skills, the agent loaded none of them (scored trials only)."""
    rows = [r.model_copy(update={"skills_staged": ["skill-a@0123456789ab"]}) for r in _curated(trial)]
    rows.append(trial("t3", "curated", 0, 1.0))  # nothing staged: not a bypass
    si = skill_invocation(rows)
    assert (si.staged_trials, si.bypass_trials) == (5, 2)  # t1/2 and t2/1; the errored t2/2 is left out
    assert si.bypass_rate == pytest.approx(0.4)
    assert skill_invocation([trial("t1", "none", 0, 1.0)]).bypass_rate is None
