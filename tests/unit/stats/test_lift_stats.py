"""Skill Lift on hand-computed cases."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from skillworks.results import TrialError, TrialResult
from skillworks.stats.lift import CaseKey, cluster_bootstrap, normal_interval, skill_lift

Z95 = 1.959963984540054


def _r(task: str, cond: str, value: float | None, k: int = 0, agent: str = "a", error: bool = False) -> TrialResult:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return TrialResult(
        trial_id=f"{task}__{cond}__{agent}__t{k}",
        run_id="r",
        task_id=task,
        condition=cond,
        agent=agent,
        trial_index=k,
        seed=0,
        outcome="error" if error else "ungraded",
        error=TrialError(category="sandbox_error", message="x", phase="setup") if error else None,
        metrics={} if value is None else {"overall": value},
        paths={"trajectory": f"trials/{task}__{cond}__{agent}__t{k}/trajectory.json"},
        started_at=now,
        finished_at=now,
    )


W, B = "with-skill", "target-withheld"


def test_paired_lift_by_hand() -> None:
    results = [
        _r("s--a", W, 1.0),
        _r("s--a", B, 0.5),
        _r("s--b", W, 0.0, k=0),
        _r("s--b", W, 1.0, k=1),  # mean 0.5 over two trials
        _r("s--b", B, 0.5),
        _r("s--c", W, 0.0),
        _r("s--c", B, 1.0),
        _r("s--d", W, 1.0),  # baseline missing: unpaired
        _r("s--e", W, 0.7),
        _r("s--e", B, 0.2, error=True),  # errored baseline: not scored, so unpaired
    ]
    lift = skill_lift(results, "overall")
    # deltas 0.5, 0, -1
    assert lift.n_paired == 3
    assert lift.lift == pytest.approx(-1 / 6)
    assert lift.treatment_mean == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert lift.baseline_mean == pytest.approx(2 / 3)  # (0.5 + 0.5 + 1) / 3
    assert lift.normal_ci is None  # 3 paired cases: below the small-n rule, no interval
    assert lift.positive_fraction == pytest.approx(1 / 3)
    assert [c.key.task_id for c in lift.negative_cases] == ["s--c"]
    neg = lift.negative_cases[0]
    assert neg.treatment.trajectories == ("trials/s--c__with-skill__a__t0/trajectory.json",)
    assert neg.baseline.trajectories == ("trials/s--c__target-withheld__a__t0/trajectory.json",)
    assert {(u.key.task_id, u.missing) for u in lift.unpaired} == {("s--d", "baseline"), ("s--e", "baseline")}
    assert len(lift.cells) == 1 and lift.cells[0].lift == pytest.approx(-1 / 6)
    # one skill, one cell: a cluster bootstrap has nothing to resample
    assert lift.bootstrap_skills_ci is None and lift.bootstrap_cells_ci is None


def test_frame_lists_cases_with_no_scores() -> None:
    results = [_r("s--a", W, 1.0), _r("s--a", B, 0.0)]
    frame = [CaseKey("s", "a", "s--a"), CaseKey("s", "a", "s--z")]
    lift = skill_lift(results, "overall", frame=frame)
    assert lift.n_paired == 1 and lift.normal_ci is None  # n < 5: no interval
    assert [u.key.task_id for u in lift.unpaired] == ["s--z"]


def test_cells_and_cluster_bootstrap_over_skills() -> None:
    results = []
    # skill p: lift 1 on two cases; skill q: lift 0 on two cases; two agents on skill q
    for t in ("p--1", "p--2"):
        results += [_r(t, W, 1.0), _r(t, B, 0.0)]
    for t in ("q--1", "q--2"):
        for agent in ("a", "b"):
            results += [_r(t, W, 0.5, agent=agent), _r(t, B, 0.5, agent=agent)]
    lift = skill_lift(results, "overall", resamples=4000, seed=1)
    assert lift.n_paired == 6 and lift.lift == pytest.approx(2 / 6)
    assert [(c.skill, c.agent, c.lift) for c in lift.cells] == [("p", "a", 1.0), ("q", "a", 0.0), ("q", "b", 0.0)]
    ci = lift.bootstrap_skills_ci
    assert ci is not None
    # resampling 2 skills: pooled means are 0 (q,q), 1 (p,p) or 2/6 (p,q): percentiles hit the extremes
    assert ci.low == pytest.approx(0.0) and ci.high == pytest.approx(1.0)
    assert lift.n_skills == 2 and lift.n_cells == 3
    again = skill_lift(results, "overall", resamples=4000, seed=1)
    assert again.bootstrap_cells_ci == lift.bootstrap_cells_ci  # fixed seed: reproducible


def test_cluster_bootstrap_identical_clusters_has_zero_width() -> None:
    ci = cluster_bootstrap([0.2, 0.2, 0.2, 0.2], ["a", "a", "b", "b"], resamples=500)
    assert ci is not None and ci.low == pytest.approx(0.2) and ci.high == pytest.approx(0.2)
    assert cluster_bootstrap([0.1, 0.3], ["a", "a"]) is None


def test_normal_interval_is_vectorised() -> None:
    d = np.array([[0.5, 0.0, -1.0], [1.0, 1.0, 1.0]])
    low, high = normal_interval(d)
    assert low[0] == pytest.approx(-1 / 6 - Z95 * math.sqrt(7) / 6)
    assert low[1] == pytest.approx(1.0) and high[1] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        normal_interval(np.array([0.3]))


def test_product_conditions_are_just_other_names() -> None:
    results = [_r("s--a", "product-x", 0.9), _r("s--a", "product-base", 0.4)]
    lift = skill_lift(results, "overall", treatment="product-x", baseline="product-base")
    assert lift.lift == pytest.approx(0.5) and lift.treatment == "product-x"


def test_lift_interval_is_a_skew_corrected_t_interval_bounded_to_the_metric_range() -> None:
    # seven cases: treatment 1 everywhere, baseline 0 on six and 1 on one: lift mean 6/7
    results = [_r(f"s--{c}", W, 1.0) for c in "abcdefg"]
    results += [_r(f"s--{c}", B, 0.0 if c != "g" else 1.0) for c in "abcdefg"]
    lift = skill_lift(results, "overall")
    assert lift.n_paired == 7 and lift.lift == pytest.approx(6 / 7)
    assert lift.normal_ci is not None
    # variance of (1,1,1,1,1,1,0) = 1/7 (above the trial-noise floor), t_6 = 2.447; the six differences are all
    # positive (sign balance 1) and left-skewed: skewness m3 / var^1.5 with m3 = (6 (1/7)^3 + (-6/7)^3) / 7.
    # Hall's inverse at q: (1 + 3a(q - b))^(1/3) - 1) / a, a = g/(3 sqrt 7), b = g/(6 sqrt 7); here the cube
    # root's argument is below 0, so it is held at h's stationary point, -1/a: the lower end reaches down
    # 3 sqrt(7)/|g| standard errors (the long side of a left skew); the upper end is clipped to 1
    m3 = (6 * (1 / 7) ** 3 + (-6 / 7) ** 3) / 7
    g = m3 / (1 / 7) ** 1.5
    a, b = g / (3 * math.sqrt(7)), g / (6 * math.sqrt(7))
    assert 1 + 3 * a * (2.4469119 - b) < 0
    assert lift.normal_ci.high == 1.0
    assert lift.normal_ci.low == pytest.approx(6 / 7 - math.sqrt(1 / 7 / 7) * (-1 / a), abs=1e-6)
    assert lift.normal_ci.low < 6 / 7 - 2.4469119 * math.sqrt(1 / 7 / 7)  # wider below than the plain t
    # five such cases differ: too few for an interval, said so
    few = skill_lift([r for r in results if r.task_id[-1] in "abcdeg"], "overall")
    assert few.normal_ci is None
    assert few.normal_ci_note == "too few cases that differ for an interval — 5 of 6 cases differ"
