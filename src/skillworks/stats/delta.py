"""Δ (percentage points), normalised gain and the paired bootstrap over tasks.

- ``Δ = with − without`` in percentage points (rates are on [0, 1]; Δ is ×100).
- ``g = (with − without) / (1 − without)``: the share of the baseline's headroom the skill recovered.
  Undefined (None) when the baseline is already 100 %. Over several configurations g is averaged per
  configuration (mean of the per-configuration g's, undefined ones left out and counted), as
  SkillsBench does.
- Paired bootstrap: resample *tasks* with replacement; only tasks scored on both sides are paired,
  the rest are counted and listed, never imputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_RESAMPLES = 10_000


def delta_pp(with_rate: float, without_rate: float) -> float:
    """Δ in percentage points."""
    return (with_rate - without_rate) * 100.0


def normalised_gain(with_rate: float, without_rate: float) -> float | None:
    """``(with − without) / (1 − without)``; None when ``without`` is 100 % (no headroom)."""
    headroom = 1.0 - without_rate
    if headroom <= 1e-12:
        return None
    return (with_rate - without_rate) / headroom


@dataclass(frozen=True)
class MeanOfDefined:
    mean: float | None
    n_defined: int
    n_undefined: int


def mean_of_defined(values: Sequence[float | None]) -> MeanOfDefined:
    """Mean of the values that are not None (per-configuration averaging of g or Δ)."""
    import numpy as np  # imported when needed: a run's start-up and small reports never load it

    defined = [v for v in values if v is not None]
    return MeanOfDefined(
        mean=float(np.mean(defined)) if defined else None,
        n_defined=len(defined),
        n_undefined=len(values) - len(defined),
    )


@dataclass(frozen=True)
class PairedDelta:
    """Δ over the tasks scored on both sides, with a percentile bootstrap interval (pp)."""

    paired_tasks: list[str]
    unpaired_tasks: list[str]
    delta_pp: float | None
    """mean over paired tasks of (with − without), ×100; None when nothing is paired"""
    ci_low_pp: float | None
    ci_high_pp: float | None
    resamples: int
    seed: int
    confidence: float
    per_task_pp: dict[str, float] = field(default_factory=dict)
    method: str = "task bootstrap"
    """how the interval was formed: "task bootstrap" (tasks resampled, trial noise ignored) or the
    paired-t of :mod:`skillworks.stats.paired`"""
    note: str | None = None
    """why there is no interval, when there is none"""


def task_bootstrap_delta(
    with_by_task: Mapping[str, float | None],
    without_by_task: Mapping[str, float | None],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedDelta:
    """Paired bootstrap over tasks for Δ (task-only: the trials behind each task's rate are not resampled,
    so it under-covers at small n; the reports use :func:`skillworks.stats.paired.paired_delta`).

    Each mapping gives a task's rate on one side, or None when that side has no scored trial for it.
    A task is paired when both sides have a number. Tasks are resampled with replacement
    (``numpy.random.default_rng(seed)``), the mean paired difference taken per resample, and the
    interval is the percentile interval of those means. Same inputs and seed -> same interval.
    """
    import numpy as np  # imported when needed: a run's start-up and small reports never load it

    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    all_tasks = list(dict.fromkeys([*with_by_task, *without_by_task]))
    paired: list[str] = []
    unpaired: list[str] = []
    diffs: list[float] = []
    for task in all_tasks:
        a, b = with_by_task.get(task), without_by_task.get(task)
        if a is None or b is None:
            unpaired.append(task)
        else:
            paired.append(task)
            diffs.append(a - b)
    if not diffs:
        return PairedDelta(paired, unpaired, None, None, None, resamples, seed, confidence)

    d = np.asarray(diffs, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=float)
    chunk = max(1, 2_000_000 // len(d))  # bound memory for large task sets
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, len(d), size=(stop - start, len(d)))
        means[start:stop] = d[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return PairedDelta(
        paired_tasks=paired,
        unpaired_tasks=unpaired,
        delta_pp=float(d.mean() * 100.0),
        ci_low_pp=float(low * 100.0),
        ci_high_pp=float(high * 100.0),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        per_task_pp={t: v * 100.0 for t, v in zip(paired, diffs, strict=True)},
    )


paired_bootstrap_delta = task_bootstrap_delta
"""The former name of :func:`task_bootstrap_delta` (kept for callers that reproduce published tables)."""
