"""The Δ interval the reports show (paired-t with a trial-noise floor) and its small-n rule."""

from __future__ import annotations

import pytest

from skillworks.stats import (
    MIN_TASKS_FOR_INTERVAL,
    paired_delta,
    rate_interval_note,
    task_bootstrap_delta,
    task_mean_interval,
)


def _sides(rate: float, trials: int, n: int) -> dict[str, tuple[float | None, int]]:
    return {f"t{i}": (rate, trials) for i in range(n)}


def test_issue_example_is_not_a_zero_width_interval() -> None:
    """4 tasks x 2 trials, `none` passes 1 of 2 on every task, `curated` both: the task-only bootstrap
    says [+50, +50]; the reported method gives no interval at 4 tasks (too few, and fewer than 6 that
    differ), and with 6 such tasks a wide one."""
    boot = task_bootstrap_delta(
        {t: r for t, (r, _) in _sides(1.0, 2, 4).items()}, {t: r for t, (r, _) in _sides(0.5, 2, 4).items()}
    )
    assert (boot.ci_low_pp, boot.ci_high_pp) == (50.0, 50.0)  # what the issue measured
    d = paired_delta(_sides(1.0, 2, 4), _sides(0.5, 2, 4))
    assert d.delta_pp == pytest.approx(50.0)
    assert d.ci_low_pp is None and d.note == "too few tasks for an interval — n=4"
    # the thresholds lowered: still no interval, as only 4 tasks differ
    d4 = paired_delta(_sides(1.0, 2, 4), _sides(0.5, 2, 4), min_tasks=4)
    assert d4.ci_low_pp is None and d4.note == "too few tasks that differ for an interval — 4 of 4 tasks differ"
    # 6 tasks like them: trial noise alone widens it
    d6 = paired_delta(_sides(1.0, 2, 6), _sides(0.5, 2, 6))
    assert d6.ci_low_pp is not None and d6.ci_high_pp is not None
    assert d6.ci_high_pp - d6.ci_low_pp > 40.0
    assert d6.ci_low_pp < 50.0 < d6.ci_high_pp


def test_pinned_values_and_clipping() -> None:
    w = {"a": (1.0, 3), "b": (2 / 3, 3), "c": (1.0, 3), "d": (1 / 3, 3), "e": (1.0, 3), "f": (1.0, 3), "g": (0.0, 3)}
    wo = {"a": (0.0, 3), "b": (1 / 3, 3), "c": (1 / 3, 3), "d": (0.0, 3), "e": (2 / 3, 3), "f": (0.0, 3), "g": (0.0, 3)}
    d = paired_delta(w, wo)
    diffs = [1, 1 / 3, 2 / 3, 1 / 3, 1 / 3, 1, 0]  # 6 of 7 differ
    mean = sum(diffs) / 7
    assert d.delta_pp == pytest.approx(mean * 100)
    # between-task variance of the diffs (0.1481) beats the trial-noise floor; t_6(.975) = 2.4469; the six
    # non-zero differences are all positive (sign balance 1), so the full skew correction applies: Hall's
    # interval [mean - se h^-1(q), mean - se h^-1(-q)], h^-1(y) = ((1 + 3a(y - b))^(1/3) - 1) / a with
    # a = g / (3 sqrt 7), b = g / (6 sqrt 7), g = m3 / var^1.5
    var = sum((x - mean) ** 2 for x in diffs) / 6
    g = sum((x - mean) ** 3 for x in diffs) / 7 / var**1.5
    a, b, se, q = g / (3 * 7**0.5), g / (6 * 7**0.5), (var / 7) ** 0.5, 2.446912
    low, high = (mean - se * ((1 + 3 * a * (y - b)) ** (1 / 3) - 1) / a for y in (q, -q))
    assert d.ci_low_pp == pytest.approx(low * 100, abs=1e-3)
    assert d.ci_high_pp == pytest.approx(high * 100, abs=1e-3)
    assert g > 0 and high - mean > mean - low  # right-skewed differences: the interval reaches further up
    three = paired_delta({k: w[k] for k in "abcde"}, {k: wo[k] for k in "abcde"})
    assert three.ci_low_pp is None and three.note == "too few tasks that differ for an interval — 5 of 5 tasks differ"
    everything = paired_delta(_sides(1.0, 1, 6), _sides(0.0, 1, 6))
    assert everything.ci_high_pp == 100.0 and everything.ci_low_pp is not None and everything.ci_low_pp < 100.0


def test_skew_correction_is_weighed_by_the_sign_balance() -> None:
    from skillworks.stats.paired import sign_balance, skew_corrected_t

    assert sign_balance([0.5, -0.5, 1.0, 0.0]) == pytest.approx(1 / 3)
    assert sign_balance([0.0, 0.0]) == 0.0 and sign_balance([0.2, 0.1]) == 1.0
    assert skew_corrected_t(0.1, 0.05, 0.0, 10, 2.0) == pytest.approx((0.0, 0.2))  # no skew: the plain t
    low, high = skew_corrected_t(0.1, 0.05, 1.0, 10, 2.0)
    assert high - 0.1 > 0.1 - low > 0
    # balanced signs: the same skewed-looking differences get the plain t (no correction)
    w = {f"t{i}": (r, 1) for i, r in enumerate((1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0))}
    wo = {f"t{i}": (r, 1) for i, r in enumerate((0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0))}
    d = paired_delta(w, wo)  # differences +1 x4, -1 x3, 0: balance 1/7, a small correction only
    diffs = [1, 1, 1, -1, 1, -1, -1, 0]
    mean = sum(diffs) / 8
    half = 2.364624 * (sum((x - mean) ** 2 for x in diffs) / 7 / 8) ** 0.5
    assert d.ci_low_pp is not None and d.ci_high_pp is not None
    assert abs((d.ci_high_pp - mean * 100) - half * 100) < 2.0 and abs((mean * 100 - d.ci_low_pp) - half * 100) < 2.0


def test_identical_summaries_carry_no_interval_and_equal_differences_carry_trial_noise() -> None:
    d = paired_delta(_sides(0.0, 5, 10), _sides(0.0, 5, 10))
    assert d.delta_pp == 0.0 and d.ci_low_pp is None
    assert d.note == "too few tasks that differ for an interval — 0 of 10 tasks differ"
    same = paired_delta(_sides(0.6, 5, 10), _sides(0.4, 5, 10))  # every task +20 pp: not zero-width
    assert same.ci_low_pp is not None and same.ci_high_pp is not None
    assert same.ci_low_pp < 20.0 - 5 and same.ci_high_pp > 20.0 + 5


def test_unpaired_tasks_are_listed_not_imputed() -> None:
    w = {**_sides(1.0, 2, 6), "x": (None, 0)}
    d = paired_delta(w, {**_sides(0.5, 2, 6), "x": (0.5, 2)})
    assert d.unpaired_tasks == ["x"] and len(d.paired_tasks) == 6
    none = paired_delta({"x": (None, 0)}, {"x": (1.0, 2)})
    assert none.delta_pp is None and none.note == "no task scored on both sides"


def test_pass_rate_interval_has_the_same_rule() -> None:
    assert task_mean_interval(_sides(0.5, 3, MIN_TASKS_FOR_INTERVAL - 1)) is None
    # all passed: no interval, with the reason (not [1, 1], not a guess)
    assert task_mean_interval(_sides(1.0, 3, 10)) is None
    assert (
        rate_interval_note(_sides(1.0, 3, 10))
        == "too few tasks that failed a trial for an interval — 0 of 10 tasks did"
    )
    # 6 tasks failed a trial, 10 passed one: an interval, asymmetric near 1
    sides = {**_sides(1.0, 3, 4), **{f"u{i}": (2 / 3, 3) for i in range(6)}}
    low, high = task_mean_interval(sides) or (0.0, 0.0)
    assert rate_interval_note(sides) is None and low < 0.8 < high < 1.0
    with pytest.raises(ValueError, match="confidence"):
        paired_delta({}, {}, confidence=1.5)


def test_minimum_detectable_effect_on_fixed_inputs() -> None:
    from skillworks.stats import minimum_detectable_effect

    # 20 tasks x 3 trials at 50 %: (t_19(.975) + t_19(.8)) * sqrt(2 * .25 / 3 / 20)
    assert minimum_detectable_effect(20, 3) == pytest.approx((2.093024 + 0.860951) * (0.5 / 3 / 20) ** 0.5, rel=1e-5)
    assert minimum_detectable_effect(4, 5) is None  # below the small-n rule
    assert (minimum_detectable_effect(20, 3, task_sd=0.3) or 0) > (minimum_detectable_effect(20, 3) or 1)
    assert (minimum_detectable_effect(100, 5) or 1) < (minimum_detectable_effect(10, 5) or 0)
