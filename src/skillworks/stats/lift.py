"""ACES Skill Lift: paired per-case deltas of a metric between a treatment condition (``with-skill``,
or a product target) and a baseline (``target-withheld``, or the baseline target).

A *case* is one task for one skill and one agent configuration. Per case and side, the metric is the
mean over the trials where it was scored (errored trials and trials without the metric are left out).
A delta is formed only where both sides scored; other cases are counted and listed as unpaired, never
imputed. From the paired deltas:

- lift: their mean; cell means per skill × agent (treatment, baseline, lift);
- its interval over paired cases (``normal_ci``): for a metric on [0, 1] the Δ method of
  :mod:`skillworks.stats.paired` (skew-corrected t over cases with a trial-noise floor, bounded to [−1, 1]), else
  a plain t-interval; None below ``MIN_TASKS_FOR_INTERVAL`` paired cases;
- cluster bootstrap percentile intervals, resampling whole skills and whole skill × agent cells with
  replacement (fixed seed); None when there are fewer than 2 clusters;
- the fraction of paired cases with a positive delta, and the cases with a negative one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skillworks.results import TrialResult
from skillworks.stats.intervals import Interval, z_for
from skillworks.stats.paired import DELTA_FLOOR, GRADED_FLOOR, MIN_TASKS_FOR_INTERVAL, paired_delta, t_quantile

if TYPE_CHECKING:
    import numpy as np

DEFAULT_TREATMENT = "with-skill"
DEFAULT_BASELINE = "target-withheld"
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True, order=True)
class CaseKey:
    skill: str
    agent: str
    task_id: str

    @property
    def label(self) -> str:
        return f"{self.skill} / {self.agent} / {self.task_id}"


@dataclass(frozen=True)
class SideScore:
    mean: float
    n: int
    mean_square: float
    trial_ids: tuple[str, ...]
    trajectories: tuple[str, ...]  # paths relative to the run dir


@dataclass(frozen=True)
class CaseLift:
    key: CaseKey
    treatment: SideScore
    baseline: SideScore

    @property
    def delta(self) -> float:
        return self.treatment.mean - self.baseline.mean


@dataclass(frozen=True)
class UnpairedCase:
    key: CaseKey
    missing: str  # "treatment" | "baseline"


@dataclass(frozen=True)
class CellLift:
    skill: str
    agent: str
    n_paired: int
    treatment_mean: float
    baseline_mean: float
    lift: float


@dataclass(frozen=True)
class MetricLift:
    metric: str
    treatment: str
    baseline: str
    n_paired: int
    lift: float | None
    treatment_mean: float | None
    baseline_mean: float | None
    normal_ci: Interval | None
    bootstrap_skills_ci: Interval | None
    bootstrap_cells_ci: Interval | None
    n_skills: int
    n_cells: int
    positive_fraction: float | None
    cases: list[CaseLift] = field(default_factory=list)
    unpaired: list[UnpairedCase] = field(default_factory=list)
    normal_ci_note: str | None = None
    """why there is no ``normal_ci`` (the small-n rule), when there is none"""
    cells: list[CellLift] = field(default_factory=list)
    confidence: float = 0.95

    @property
    def negative_cases(self) -> list[CaseLift]:
        return [c for c in self.cases if c.delta < 0]


def default_skill_of(task_id: str) -> str:
    """evals.json task ids are ``<skill>--<case>``; anything else belongs to one unnamed skill ``-``."""
    return task_id.split("--", 1)[0] if "--" in task_id else "-"


def normal_interval(deltas: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Normal interval of the mean along the last axis (vectorised: any leading axes are experiments)."""
    import numpy as np  # imported when needed: a run's start-up and small reports never load it

    d = np.asarray(deltas, dtype=float)
    n = d.shape[-1]
    if n < 2:
        raise ValueError("a normal interval needs at least 2 paired cases")
    mean = d.mean(axis=-1)
    half = z_for(confidence) * d.std(axis=-1, ddof=1) / math.sqrt(n)
    return mean - half, mean + half


def _lift_interval(cases: Sequence[CaseLift], confidence: float) -> Interval | str:
    """The lift's interval over paired cases, None below ``MIN_TASKS_FOR_INTERVAL`` of them (the small-n
    rule of :mod:`skillworks.stats.paired`). When every side's score lies in [0, 1] it is the Δ method,
    :func:`skillworks.stats.paired.paired_delta` (skew-corrected t over cases with the trial-noise floor, the
    trials of a side being its scored trials), so it is bounded to [−1, 1] and never zero-width — with the 0/1 floor
    :data:`~skillworks.stats.paired.DELTA_FLOOR` when every score is 0 or 1, else the graded one
    (:data:`~skillworks.stats.paired.GRADED_FLOOR`); for a metric off that range a plain t-interval
    (df = cases − 1). Otherwise the reason there is none: below ``MIN_TASKS_FOR_INTERVAL`` paired cases, or
    (metric on [0, 1]) below :data:`~skillworks.stats.paired.MIN_DIFFERING_TASKS` cases whose two sides differ."""
    n = len(cases)
    if n < max(MIN_TASKS_FOR_INTERVAL, 2):
        return f"too few cases for an interval — n={n}"
    sides = [c.treatment.mean for c in cases] + [c.baseline.mean for c in cases]
    if all(0.0 <= v <= 1.0 for v in sides):
        keys = [str(i) for i in range(n)]
        binary = all(abs(side.mean_square - side.mean) < 1e-12 for c in cases for side in (c.treatment, c.baseline))
        found = paired_delta(
            {k: (c.treatment.mean, c.treatment.n, c.treatment.mean_square) for k, c in zip(keys, cases, strict=True)},
            {k: (c.baseline.mean, c.baseline.n, c.baseline.mean_square) for k, c in zip(keys, cases, strict=True)},
            confidence=confidence,
            floor=DELTA_FLOOR if binary else GRADED_FLOOR,
            unit="cases",
        )
        if found.ci_low_pp is None or found.ci_high_pp is None:
            return found.note or f"too few cases for an interval — n={n}"
        return Interval(found.ci_low_pp / 100.0, found.ci_high_pp / 100.0)
    deltas = [c.delta for c in cases]
    mean = sum(deltas) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / (n - 1))
    half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
    return Interval(mean - half, mean + half)


def cluster_bootstrap(
    deltas: Sequence[float],
    clusters: Sequence[str],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval | None:
    """Percentile interval of the pooled mean delta, resampling whole clusters with replacement."""
    import numpy as np  # imported when needed: a run's start-up and small reports never load it

    labels = sorted(set(clusters))
    if len(labels) < 2:
        return None
    index = {label: i for i, label in enumerate(labels)}
    sums = np.zeros(len(labels))
    counts = np.zeros(len(labels))
    for value, label in zip(deltas, clusters, strict=True):
        sums[index[label]] += value
        counts[index[label]] += 1
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(labels), size=(resamples, len(labels)))
    stats = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return Interval(float(low), float(high))


ValueOf = Callable[[TrialResult], float | None]


def metric_value(metric: str) -> ValueOf:
    """The value of `metric` in a result's metrics (None when not scored); ``reward`` is the verifier's."""
    if metric == "reward":
        return lambda r: r.reward
    return lambda r: r.metrics.get(metric)


def _side_scores(
    results: Iterable[TrialResult], value: ValueOf, condition: str, skill_of: Callable[[str], str]
) -> dict[CaseKey, SideScore]:
    values: dict[CaseKey, list[tuple[TrialResult, float]]] = {}
    for r in results:
        if r.condition != condition or r.outcome == "error" or r.error is not None:
            continue
        v = value(r)
        if v is None:
            continue
        values.setdefault(CaseKey(skill_of(r.task_id), r.agent, r.task_id), []).append((r, v))
    out: dict[CaseKey, SideScore] = {}
    for key, pairs in values.items():
        pairs.sort(key=lambda p: p[0].trial_index)
        rows = [p[0] for p in pairs]
        out[key] = SideScore(
            mean=sum(p[1] for p in pairs) / len(pairs),
            n=len(rows),
            mean_square=sum(p[1] * p[1] for p in pairs) / len(pairs),
            trial_ids=tuple(r.trial_id for r in rows),
            trajectories=tuple(r.paths.get("trajectory", r.paths.get("trial_dir", "")) for r in rows),
        )
    return out


def skill_lift(
    results: Iterable[TrialResult],
    metric: str,
    *,
    treatment: str = DEFAULT_TREATMENT,
    baseline: str = DEFAULT_BASELINE,
    skill_of: Callable[[str], str] | Mapping[str, str] | None = None,
    frame: Iterable[CaseKey] | None = None,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> MetricLift:
    """Skill Lift of one metric (a key of `TrialResult.metrics`, or ``reward`` for the verifier's reward).
    `frame`, when given, lists every planned case, so that a case with no
    scored trial on either side is listed as unpaired too."""
    import numpy as np  # imported when needed: a run's start-up and small reports never load it

    rows = list(results)
    if skill_of is None:
        of: Callable[[str], str] = default_skill_of
    elif isinstance(skill_of, Mapping):
        mapping = skill_of
        of = lambda t: mapping.get(t, default_skill_of(t))  # noqa: E731
    else:
        of = skill_of
    value = metric_value(metric)
    treated = _side_scores(rows, value, treatment, of)
    base = _side_scores(rows, value, baseline, of)
    keys = sorted(set(treated) | set(base) | set(frame or ()))
    cases = [CaseLift(k, treated[k], base[k]) for k in keys if k in treated and k in base]
    unpaired = [
        UnpairedCase(k, "treatment" if k not in treated else "baseline")
        for k in keys
        if not (k in treated and k in base)
    ]
    deltas = np.array([c.delta for c in cases], dtype=float)
    n = len(cases)
    found = _lift_interval(cases, confidence)
    normal = None if isinstance(found, str) else found
    cells: dict[tuple[str, str], list[CaseLift]] = {}
    for c in cases:
        cells.setdefault((c.key.skill, c.key.agent), []).append(c)
    cell_rows = [
        CellLift(
            skill=skill,
            agent=agent,
            n_paired=len(items),
            treatment_mean=sum(c.treatment.mean for c in items) / len(items),
            baseline_mean=sum(c.baseline.mean for c in items) / len(items),
            lift=sum(c.delta for c in items) / len(items),
        )
        for (skill, agent), items in sorted(cells.items())
    ]
    return MetricLift(
        metric=metric,
        treatment=treatment,
        baseline=baseline,
        n_paired=n,
        lift=float(deltas.mean()) if n else None,
        treatment_mean=sum(c.treatment.mean for c in cases) / n if n else None,
        baseline_mean=sum(c.baseline.mean for c in cases) / n if n else None,
        normal_ci=normal,
        normal_ci_note=found if isinstance(found, str) else None,
        bootstrap_skills_ci=cluster_bootstrap(
            deltas.tolist(), [c.key.skill for c in cases], resamples=resamples, seed=seed, confidence=confidence
        )
        if n
        else None,
        bootstrap_cells_ci=cluster_bootstrap(
            deltas.tolist(),
            [f"{c.key.skill}\x00{c.key.agent}" for c in cases],
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )
        if n
        else None,
        n_skills=len({c.key.skill for c in cases}),
        n_cells=len(cells),
        positive_fraction=sum(1 for c in cases if c.delta > 0) / n if n else None,
        cases=cases,
        unpaired=unpaired,
        cells=cell_rows,
        confidence=confidence,
    )


def metric_names(results: Iterable[TrialResult]) -> list[str]:
    """Every metric recorded in `results`, in first-seen order."""
    names: dict[str, None] = {}
    for r in results:
        for name in r.metrics:
            names.setdefault(name, None)
    return list(names)
