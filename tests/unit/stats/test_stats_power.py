"""Planning from a pilot: variance components, detectable effect and tasks needed, on fixed inputs."""

from __future__ import annotations

import pytest

from skillworks.stats import minimum_detectable_effect
from skillworks.stats.power import detectable_effect, tasks_needed, variance_components


def test_variance_components_by_hand() -> None:
    w = {"a": [1.0, 1.0, 0.0], "b": [1.0, 1.0, 1.0], "c": [0.0, 1.0, 0.0]}
    o = {"a": [0.0, 0.0, 1.0], "b": [1.0, 0.0, 0.0], "c": [0.0, 0.0, 0.0]}
    vc = variance_components(w, o)
    assert vc is not None and vc.tasks == 3 and vc.trials == 3 and vc.within_from_trials
    assert vc.delta == pytest.approx(4 / 9)  # diffs 1/3, 2/3, 1/3
    assert vc.within == pytest.approx(4 / 9)  # mean of (1/3 + 1/3, 0 + 1/3, 1/3 + 0)
    assert vc.between == 0.0  # s²_d = 1/27 is below the trial noise 4/27: no between-task spread left
    # tasks whose true Δ differs: between-task variance shows
    spread = variance_components(
        {"a": [1.0, 1.0], "b": [1.0, 1.0], "c": [0.0, 0.0], "d": [1.0, 1.0]},
        {"a": [0.0, 0.0], "b": [1.0, 1.0], "c": [0.0, 0.0], "d": [0.0, 0.0]},
    )
    assert spread is not None and spread.within == 0.0
    assert spread.between == pytest.approx(1 / 3)  # diffs 1, 0, 0, 1
    assert variance_components({"a": [1.0]}, {"a": [0.0], "b": [1.0]}) is None  # one paired task


def test_one_trial_per_task_uses_the_binary_bound() -> None:
    vc = variance_components({t: [1.0 if t in "ab" else 0.0] for t in "abcd"}, {t: [0.0] for t in "abcd"})
    assert vc is not None and not vc.within_from_trials
    assert vc.within == pytest.approx(0.25)  # p̄_w = 0.5, p̄_o = 0
    assert vc.between == pytest.approx(max(0.0, 1 / 3 - 0.25))  # s²_d of (1, 1, 0, 0) minus the trial noise


def test_tasks_needed_is_the_smallest_design_that_detects() -> None:
    between, within = 0.01, 0.5
    for trials in (1, 3, 5):
        n = tasks_needed(0.2, trials, between, within)
        assert n is not None and n >= 5
        assert (detectable_effect(n, trials, between, within) or 1) <= 0.2
        if n > 5:
            assert (detectable_effect(n - 1, trials, between, within) or 0) > 0.2
    assert (tasks_needed(0.2, 1, between, within) or 0) > (tasks_needed(0.2, 5, between, within) or 0)
    assert tasks_needed(1e-6, 1, between, within) is None  # beyond MAX_TASKS
    assert detectable_effect(4, 3, between, within) is None  # below the small-n rule
    # the dry-run's MDE is this formula at between = task_sd², within = 2 p (1 - p)
    assert minimum_detectable_effect(20, 3, task_sd=0.3) == pytest.approx(detectable_effect(20, 3, 0.09, 0.5))
    with pytest.raises(ValueError, match="effect"):
        tasks_needed(0.0, 3, between, within)
