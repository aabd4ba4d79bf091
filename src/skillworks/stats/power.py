"""Planning from a pilot run: the variance of a task's Δ split into between-task and within-task (trial)
parts, the minimum detectable Δ of a design, and the tasks a given Δ needs per trial count.

Model: a task's observed difference ``d_i = with_i − without_i`` over ``m`` trials per side has variance
``σ²_b + σ²_w / m``: ``σ²_b`` is how much the true Δ differs between tasks, ``σ²_w`` the trial-to-trial
variance of one trial's reward, with and without the skill added. From a pilot (one-way ANOVA, method of
moments): ``σ²_w`` = mean over tasks of the two sides' within-task sample variances (ddof 1; tasks with
at least 2 scored trials on both sides), ``σ²_b = max(0, s²_d − mean_i(v_w,i/m_w,i + v_o,i/m_o,i))``. With one
trial per task the two cannot be told apart: ``σ²_w`` is then the 0/1 bound ``p̄_w(1 − p̄_w) + p̄_o(1 − p̄_o)``
(largest for 0/1 rewards) and ``σ²_b`` the rest, which says so (``within_from_trials`` False).

A design of ``T`` tasks × ``M`` trials detects Δ with probability ``power`` when
``Δ ≥ (t_{1−α/2, T−1} + t_{power, T−1}) · sqrt((σ²_b + σ²_w / M) / T)`` — the paired-t of
:mod:`skillworks.stats.paired` without its floor (a lower bound on what it needs at few tasks).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillworks.stats.paired import MIN_DIFFERING_TASKS, MIN_TASKS_FOR_INTERVAL

FEWEST_TASKS = max(MIN_TASKS_FOR_INTERVAL, MIN_DIFFERING_TASKS)
"""Fewest tasks for which a Δ interval can be reported at all (the small-n rule needs 6 that differ)."""

MAX_TASKS = 100_000
"""The largest design :func:`tasks_needed` searches."""


@dataclass(frozen=True)
class VarianceComponents:
    """A pilot's variance of a task's Δ, on the rate scale (squared)."""

    tasks: int
    """tasks with a scored trial on both sides"""
    trials: float
    """mean scored trials per task and side"""
    delta: float
    """observed mean Δ over those tasks"""
    between: float
    """σ²_b: variance of the true Δ across tasks"""
    within: float
    """σ²_w: trial variance of one trial's reward, both sides added"""
    within_from_trials: bool
    """False when no task had 2 trials on both sides (σ²_w is the 0/1 bound)"""


def _var(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1)


def variance_components(
    with_by_task: Mapping[str, Sequence[float]], without_by_task: Mapping[str, Sequence[float]]
) -> VarianceComponents | None:
    """Split a pilot's Δ variance (see the module doc). Each mapping gives a task's scored rewards on one
    side. None when fewer than 2 tasks have a scored reward on both sides."""
    paired = [t for t in with_by_task if with_by_task[t] and without_by_task.get(t)]
    if len(paired) < 2:
        return None
    w = [list(with_by_task[t]) for t in paired]
    o = [list(without_by_task[t]) for t in paired]
    diffs = [sum(a) / len(a) - sum(b) / len(b) for a, b in zip(w, o, strict=True)]
    trials = sum(len(a) + len(b) for a, b in zip(w, o, strict=True)) / (2 * len(paired))
    both = [(a, b) for a, b in zip(w, o, strict=True) if len(a) >= 2 and len(b) >= 2]
    if both:
        within = sum(_var(a) + _var(b) for a, b in both) / len(both)
        noise = sum(_var(a) / len(a) + _var(b) / len(b) for a, b in both) / len(both)
    else:
        pw = sum(sum(a) for a in w) / sum(len(a) for a in w)
        po = sum(sum(b) for b in o) / sum(len(b) for b in o)
        within = pw * (1 - pw) + po * (1 - po)
        noise = sum(pw * (1 - pw) / len(a) + po * (1 - po) / len(b) for a, b in zip(w, o, strict=True)) / len(paired)
    return VarianceComponents(
        tasks=len(paired),
        trials=trials,
        delta=sum(diffs) / len(diffs),
        between=max(0.0, _var(diffs) - noise),
        within=within,
        within_from_trials=bool(both),
    )


def _critical(tasks: int, confidence: float, power: float) -> float:
    from scipy.stats import t  # imported when needed: a run's start-up never loads scipy

    return float(t.ppf(0.5 + confidence / 2.0, tasks - 1)) + float(t.ppf(power, tasks - 1))


def detectable_effect(
    tasks: int, trials: int, between: float, within: float, *, confidence: float = 0.95, power: float = 0.8
) -> float | None:
    """Minimum detectable Δ (rate scale) of ``tasks`` × ``trials``; None below :data:`FEWEST_TASKS`
    tasks (no Δ interval is reported there) or with no trial."""
    if not 0.0 < confidence < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"confidence and power must be in (0, 1), got {confidence} and {power}")
    if tasks < FEWEST_TASKS or trials < 1:
        return None
    return _critical(tasks, confidence, power) * math.sqrt((between + within / trials) / tasks)


def tasks_needed(
    effect: float, trials: int, between: float, within: float, *, confidence: float = 0.95, power: float = 0.8
) -> int | None:
    """Fewest tasks (at least :data:`FEWEST_TASKS`) whose design with ``trials`` per task and side
    detects ``effect`` (rate scale, > 0); None when even ``MAX_TASKS`` do not."""
    if effect <= 0:
        raise ValueError(f"effect must be > 0, got {effect}")

    def enough(n: int) -> bool:
        found = detectable_effect(n, trials, between, within, confidence=confidence, power=power)
        return found is not None and found <= effect

    low = FEWEST_TASKS
    if not enough(MAX_TASKS):
        return None
    high = MAX_TASKS
    while low < high:  # the detectable effect falls with the tasks: bisect
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid + 1
    return low
