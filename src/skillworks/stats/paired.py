"""The Δ interval the reports show: paired over tasks, with trial-to-trial noise in it.

Method (``"paired-t with trial-noise floor"``), per agent configuration:

- ``d_i = with_i − without_i`` for every task scored on both sides (rates on [0, 1]).
- Variance of one task's difference: ``max(s²_between, κ · v̄_within)`` where ``s²_between`` is the sample
  variance of the observed ``d_i`` (ddof 1) and ``v̄_within`` is the mean over tasks of the within-task
  trial noise of a difference, ``p̃_w(1 − p̃_w)/m_w + p̃_o(1 − p̃_o)/m_o`` with ``m`` the trials behind a
  side's rate and ``p̃ = (m·p + c)/(m + 2c)`` (c pseudo-trials at 0 and c at 1, so that a side that
  passed every trial, or none, still carries noise). For graded rewards the same pseudo-trials are added
  to the rewards' own spread (their mean square is passed), since ``p(1 − p)`` overstates it.
  For Δ ``c = ½, κ = ¼`` (:data:`DELTA_FLOOR`); for graded scores ``c = 0.005, κ = ¾`` (:data:`GRADED_FLOOR`).
- Interval: ``mean(d) ± t_{n−1} · sqrt(var / n)`` with a skew correction, clipped to [−100, +100] pp: Hall's
  (1992) transformation of the t statistic (:func:`skew_corrected_t`) at the skewness
  ``γ = b · m₃ / var^{3/2}`` (``m₃`` the mean cubed deviation of the ``d_i``), weighted by the differences'
  sign balance ``b = |#(d_i > 0) − #(d_i < 0)| / #(d_i ≠ 0)`` (:func:`sign_balance`). Near a rate of 0 or 1
  the differences are one-sided and skewed (``d_i = 1 − without_i ≥ 0`` when the skill side passes
  everything) and the symmetric t misses on the long side; when the differences fall on both sides the
  sample skewness is mostly noise that moves with the mean's own error (one large ``d_i`` raises both),
  so the correction is weighed down toward 0 — under no effect the differences are symmetric about 0.
- The pass rate's interval over tasks (:func:`task_mean_interval`, ``"clustered Wilson, moderated
  variance"``) is a Wilson score interval at an effective sample size: the task rates' variance is
  moderated toward the trial-noise floor (``v = ((n − 1)·s² + d₀·κ·v̄)/(n − 1 + d₀)``, a prior of ``d₀``
  degrees of freedom at the floor, so it never vanishes and weighs less as tasks grow), the effective
  number of trials is ``n_eff = p̂(1 − p̂)/(v/n)`` capped at the trials behind it (all of them when
  ``p̂`` is 0 or 1), and the quantile is ``t`` with ``n − 1 + d₀`` df: asymmetric near 0 and 1, never
  zero-width; ``c = ½, κ = ½, d₀ = 4`` (:data:`RATE_FLOOR`).
- ``c`` and ``κ`` were chosen on one set of simulated runs (``benchmarks/interval_tuning.py``, seeds 1 and 2)
  and the coverage is reported on another (``benchmarks/interval_coverage.py --seed 20261211``).
- Small-n rule on the information in the run (``note`` says why there is no interval): below
  :data:`MIN_DIFFERING_TASKS` tasks whose difference is non-zero (and below :data:`MIN_TASKS_FOR_INTERVAL`
  paired tasks) no interval is given — the tasks that show no difference carry no evidence about the sign
  of Δ, and below 6 differing tasks no 95 % test can exclude 0 (``benchmarks/interval_coverage.py`` reports
  the share of runs with an interval and the coverage among them).

Why not the plain bootstrap over tasks (:func:`skillworks.stats.delta.task_bootstrap_delta`): it only
sees the observed per-task differences, so when they happen to be equal its interval has zero width,
and at 5 tasks × 3 trials it covers about 80 % of the time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillworks.stats.delta import PairedDelta

MIN_TASKS_FOR_INTERVAL = 5
"""Fewest paired tasks for which an interval is considered at all (raw-vs-compiled block, power)."""

MIN_DIFFERING_TASKS = 6
"""Fewest *informative* tasks for a Δ, g, ACES-lift or pass-rate interval: for Δ, g and the lift, tasks whose
two sides differ (a task that shows the same rate with and without the skill says nothing about the sign of
Δ, as a concordant pair in McNemar's test); for a pass rate, tasks that passed a trial and, separately, tasks
that failed one. 6 is the sign-flip resolution: an exact sign-flip test over ``k`` non-zero differences has
smallest two-sided p-value ``2/2^k``, under 0.05 only from ``k = 6``, so with fewer differing tasks no 95 %
test can exclude 0 and any interval is the floor's guess."""

PAIRED_T_METHOD = "paired-t with trial-noise floor, skew-corrected"
RATE_METHOD = "clustered Wilson, moderated variance"


@dataclass(frozen=True)
class NoiseFloor:
    """The trial-noise floor of a t-interval over tasks: ``κ · mean_i p̃_i(1 − p̃_i)/m_i`` with
    ``p̃ = (m·p + pseudo)/(m + 2·pseudo)``; ``pseudo`` is ``c`` and ``scale`` is ``κ`` of the module doc.
    ``prior_df`` 0: the variance is ``max(s², floor)``; above 0 (``d₀``): it is moderated toward the floor,
    ``((n − 1)·s² + d₀·floor)/(n − 1 + d₀)`` with ``n − 1 + d₀`` degrees of freedom."""

    pseudo: float
    scale: float
    prior_df: float = 0.0


DELTA_FLOOR = NoiseFloor(pseudo=0.5, scale=0.25)
"""The floor of the Δ interval (chosen on benchmarks/interval_tuning.py's seed set)."""
GRADED_FLOOR = NoiseFloor(pseudo=0.005, scale=0.75)
"""The floor of the Δ method when a side's scores are graded (not all 0 or 1), as for the ACES lift of a
metric on [0, 1]: such scores carry their own spread, so the floor is mostly that observed spread (``κ = ¾``)
and the pseudo-rewards nearly vanish (``c = 0.005``: beside one graded reward per case, where no spread is
observed, pseudo-rewards of 0 and 1 only stand in for it; chosen the same way)."""
RATE_FLOOR = NoiseFloor(pseudo=0.5, scale=0.5, prior_df=4.0)
"""The floor of the pass-rate interval over tasks (chosen the same way)."""

TaskSide = tuple[float | None, int] | tuple[float | None, int, float]
"""One side of one task: its rate on [0, 1] (None: no scored trial), the trials behind it and, for graded
rewards, the mean of the squared rewards (left out: the rewards are 0 or 1, so it equals the rate)."""


def too_few_tasks_note(n: int) -> str:
    return f"too few tasks for an interval — n={n}"


def too_few_differing_note(differing: int, n: int, unit: str = "tasks") -> str:
    """The small-n statement of the informative-unit rule (:data:`MIN_DIFFERING_TASKS`)."""
    return f"too few {unit} that differ for an interval — {differing} of {n} {unit} differ"


def differing_count(diffs: Sequence[float]) -> int:
    """How many paired differences are not 0 (the informative tasks of :data:`MIN_DIFFERING_TASKS`)."""
    return sum(1 for d in diffs if abs(d) > 1e-12)


def rate_interval_note(
    by_task: Mapping[str, TaskSide], *, min_tasks: int = MIN_TASKS_FOR_INTERVAL, min_informative: int | None = None
) -> str | None:
    """Why :func:`task_mean_interval` gives no interval for these tasks, or None when it gives one: fewer than
    ``min_tasks`` tasks with a rate, or fewer than :data:`MIN_DIFFERING_TASKS` tasks that passed a trial
    (or that failed one) — a run in which 18 of 20 tasks passed every trial says the rate is high, not how
    high."""
    need = MIN_DIFFERING_TASKS if min_informative is None else min_informative
    rates = [r for r, *_ in (unpack_side(v) for v in by_task.values()) if r is not None]
    n = len(rates)
    if n < max(min_tasks, 2):
        return too_few_tasks_note(n)
    passed = sum(1 for r in rates if r > 1e-12)
    failed = sum(1 for r in rates if r < 1.0 - 1e-12)
    if failed < need:
        return f"too few tasks that failed a trial for an interval — {failed} of {n} tasks did"
    if passed < need:
        return f"too few tasks that passed a trial for an interval — {passed} of {n} tasks did"
    return None


def shrunk_noise(rate: float, trials: int, pseudo: float, mean_square: float | None = None) -> float:
    """One side's trial noise ``ṽ/m``, never 0: ``ṽ`` is the variance of the side's ``m`` rewards with
    ``pseudo`` rewards of 0 and ``pseudo`` of 1 added. For 0/1 rewards (``mean_square`` None: it equals the
    rate) that is ``p̃(1 − p̃)`` with ``p̃ = (m·rate + pseudo)/(m + 2·pseudo)``; a graded reward's own
    spread (from ``mean_square``, the mean of the squared rewards) is used as it is."""
    m = max(trials, 1)
    square = rate if mean_square is None else mean_square
    p = (m * rate + pseudo) / (m + 2.0 * pseudo)
    second = (m * square + pseudo) / (m + 2.0 * pseudo)
    return max(second - p * p, 0.0) / m


def unpack_side(value: TaskSide) -> tuple[float | None, int, float | None]:
    """``(rate, trials, mean square or None)`` of a :data:`TaskSide` of either length."""
    return (value[0], value[1], value[2]) if len(value) == 3 else (value[0], value[1], None)


def t_quantile(confidence: float, df: float) -> float:
    from scipy.stats import t  # imported when needed: a run's start-up never loads scipy

    return float(t.ppf(0.5 + confidence / 2.0, df))


def paired_delta(
    with_by_task: Mapping[str, TaskSide],
    without_by_task: Mapping[str, TaskSide],
    *,
    confidence: float = 0.95,
    min_tasks: int = MIN_TASKS_FOR_INTERVAL,
    floor: NoiseFloor = DELTA_FLOOR,
    min_differing: int = MIN_DIFFERING_TASKS,
    unit: str = "tasks",
) -> PairedDelta:
    """Δ over the tasks scored on both sides with the paired-t interval described in the module doc.

    Deterministic (no resampling). ``ci_low_pp``/``ci_high_pp`` are None, with ``note`` saying why, when
    nothing is paired, fewer than ``min_tasks`` tasks are, or fewer than ``min_differing`` paired tasks
    show a non-zero difference (:data:`MIN_DIFFERING_TASKS`; ``unit`` names the tasks in that note).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    all_tasks = list(dict.fromkeys([*with_by_task, *without_by_task]))
    paired: list[str] = []
    unpaired: list[str] = []
    diffs: list[float] = []
    noise: list[float] = []
    for task in all_tasks:
        (a, ma, sa), (b, mb, sb) = (
            unpack_side(with_by_task.get(task, (None, 0))),
            unpack_side(without_by_task.get(task, (None, 0))),
        )
        if a is None or b is None:
            unpaired.append(task)
            continue
        paired.append(task)
        diffs.append(a - b)
        noise.append(shrunk_noise(a, ma, floor.pseudo, sa) + shrunk_noise(b, mb, floor.pseudo, sb))

    def result(mean: float | None, low: float | None, high: float | None, note: str | None) -> PairedDelta:
        return PairedDelta(
            paired_tasks=paired,
            unpaired_tasks=unpaired,
            delta_pp=None if mean is None else mean * 100.0,
            ci_low_pp=None if low is None else low * 100.0,
            ci_high_pp=None if high is None else high * 100.0,
            resamples=0,
            seed=0,
            confidence=confidence,
            per_task_pp={t: v * 100.0 for t, v in zip(paired, diffs, strict=True)},
            method=PAIRED_T_METHOD,
            note=note,
        )

    n = len(diffs)
    if n == 0:
        return result(None, None, None, "no task scored on both sides")
    mean = sum(diffs) / n
    if n < max(min_tasks, 2):
        return result(mean, None, None, too_few_tasks_note(n))
    differing = differing_count(diffs)
    if differing < max(min_differing, 2):
        return result(mean, None, None, too_few_differing_note(differing, n, unit))
    between = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    var = max(between, floor.scale * sum(noise) / n)
    gamma = sign_balance(diffs) * third_moment(diffs) / var**1.5
    low, high = skew_corrected_t(mean, math.sqrt(var / n), gamma, n, t_quantile(confidence, n - 1))
    return result(mean, max(-1.0, low), min(1.0, high), None)


def sign_balance(diffs: Sequence[float]) -> float:
    """``|#positive − #negative| / #non-zero`` of the paired differences (0 when none differs): how one-sided
    they are, the weight of the skew correction (:func:`skew_corrected_t`)."""
    pos = sum(1 for d in diffs if d > 1e-12)
    neg = sum(1 for d in diffs if d < -1e-12)
    return abs(pos - neg) / (pos + neg) if pos + neg else 0.0


def third_moment(values: Sequence[float]) -> float:
    """The mean cubed deviation from the mean (the skewness's numerator)."""
    n = len(values)
    mean = sum(values) / n
    return sum((v - mean) ** 3 for v in values) / n


def skew_corrected_t(mean: float, se: float, gamma: float, n: int, q: float) -> tuple[float, float]:
    """Hall's (1992) skewness-removing transformation of the t statistic ``U = (mean − μ)/se``:
    ``h(U) = U + a·U² + a²·U³/3 + b`` with ``a = γ/(3√n)``, ``b = γ/(6√n)`` (γ the skewness of one value),
    monotone in ``U`` and inverted in closed form, ``h⁻¹(y) = ((1 + 3a(y − b))^⅓ − 1)/a``; the interval is
    ``[mean − se·h⁻¹(q), mean − se·h⁻¹(−q)]``, the plain ``mean ± q·se`` at γ = 0. ``h`` is flat at its
    stationary point ``U = −1/a``, so ``h⁻¹`` is held there (``|h⁻¹| ≤ 1/|a|``) rather than run past it, which
    would only widen the long side further at a large sample skewness and few tasks. For right-skewed values
    (γ > 0, e.g. differences ``1 − without`` when the skill side passes everything) it reaches further up."""
    a, b = gamma / (3.0 * math.sqrt(n)), gamma / (6.0 * math.sqrt(n))

    def inverse(y: float) -> float:
        if abs(a) < 1e-9:
            return y - b
        x = max(0.0, 1.0 + 3.0 * a * (y - b))  # past h's stationary point U = −1/a it has no inverse slope
        return (x ** (1.0 / 3.0) - 1.0) / a

    return mean - se * inverse(q), mean - se * inverse(-q)


def task_mean_interval(
    by_task: Mapping[str, TaskSide],
    *,
    confidence: float = 0.95,
    min_tasks: int = MIN_TASKS_FOR_INTERVAL,
    floor: NoiseFloor = RATE_FLOOR,
) -> tuple[float, float] | None:
    """One side's task-macro rate (population mean rate): the clustered Wilson interval of the module doc
    (floor :data:`RATE_FLOOR`), inside [0, 1].

    None below ``min_tasks`` tasks with a rate or below :data:`MIN_DIFFERING_TASKS` tasks that passed a trial
    (or failed one); :func:`rate_interval_note` says which.
    """
    if rate_interval_note(by_task, min_tasks=min_tasks) is not None:
        return None
    sides = [unpack_side(v) for v in by_task.values()]
    pairs = [(r, m, sq) for r, m, sq in sides if r is not None]
    n = len(pairs)
    rates = [r for r, _, _ in pairs]
    noise = floor.scale * sum(shrunk_noise(r, m, floor.pseudo, sq) for r, m, sq in pairs) / n
    var, df = floored_variance(rates, noise, floor.prior_df)
    trials = float(sum(max(m, 1) for _, m, _ in pairs))
    return clustered_wilson(sum(rates) / n, var / n, trials, t_quantile(confidence, df))


def floored_variance(values: Sequence[float], floor: float, prior_df: float) -> tuple[float, float]:
    """``(variance, df)`` of one value over tasks: ``max(s², floor)`` with ``n − 1`` df when ``prior_df``
    is 0, else ``s²`` moderated toward ``floor`` with ``prior_df`` prior degrees of freedom."""
    n = len(values)
    between = _sample_var(values)
    if prior_df <= 0:
        return max(between, floor), float(n - 1)
    return ((n - 1) * between + prior_df * floor) / (n - 1 + prior_df), n - 1 + prior_df


def clustered_wilson(rate: float, var_mean: float, trials: float, z: float) -> tuple[float, float]:
    """Wilson score interval for a mean rate whose variance is ``var_mean``, at the effective sample size
    ``rate(1 − rate)/var_mean`` capped at ``trials`` (and ``trials`` itself at a rate of 0 or 1)."""
    spread = rate * (1.0 - rate)
    n_eff = trials if spread <= 0.0 or var_mean <= 0.0 else min(trials, max(1.0, spread / var_mean))
    z2 = z * z
    denom = 1.0 + z2 / n_eff
    centre = (rate + z2 / (2.0 * n_eff)) / denom
    half = (z / denom) * math.sqrt(spread / n_eff + z2 / (4.0 * n_eff * n_eff))
    return max(0.0, centre - half), min(1.0, centre + half)


def minimum_detectable_effect(
    tasks: int,
    trials: int,
    *,
    baseline_rate: float = 0.5,
    task_sd: float = 0.0,
    confidence: float = 0.95,
    power: float = 0.8,
) -> float | None:
    """Smallest true Δ (rate scale) the paired-t interval excludes 0 for with probability ``power``:
    ``(t_{1−α/2} + t_power) · sqrt(v / tasks)``, df = tasks − 1, with ``v = task_sd² + 2·p(1 − p)/trials``
    (the between-task spread of the true Δ plus both sides' trial noise at ``baseline_rate``). With the
    default ``task_sd = 0`` it is a lower bound: real tasks differ. None below ``MIN_TASKS_FOR_INTERVAL``."""
    from skillworks.stats.power import detectable_effect

    return detectable_effect(
        tasks, trials, task_sd**2, 2.0 * baseline_rate * (1.0 - baseline_rate), confidence=confidence, power=power
    )


@dataclass(frozen=True)
class TrialsDelta:
    """Mean paired difference of a raw (unbounded) per-trial quantity over tasks, with its interval."""

    paired_tasks: list[str]
    delta: float | None
    low: float | None
    high: float | None
    note: str | None
    """why there is no interval, when there is none"""


def trials_paired_delta(
    with_by_task: Mapping[str, Sequence[float]],
    without_by_task: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    min_tasks: int = MIN_TASKS_FOR_INTERVAL,
) -> TrialsDelta:
    """The Δ method for a quantity with no fixed range (tokens, calls, seconds), from every trial's value:
    ``d_i`` = difference of the task's two trial means; variance ``max(s²_d, mean_i(s²_w,i/m_w,i + s²_o,i/m_o,i))``
    with ``s²`` a side's sample variance over its trials (ddof 1; 0 for a single trial, which carries no
    estimate of its own spread); ``mean(d) ± t_{n−1} · sqrt(var / n)``. So a run whose tasks all show the same
    difference of means still gets the width its trials' spread gives. None below ``min_tasks`` paired tasks."""
    paired = [t for t in with_by_task if with_by_task[t] and without_by_task.get(t)]
    diffs: list[float] = []
    noise: list[float] = []
    for t in paired:
        a, b = list(with_by_task[t]), list(without_by_task[t])
        diffs.append(sum(a) / len(a) - sum(b) / len(b))
        noise.append(_sample_var(a) / len(a) + _sample_var(b) / len(b))
    n = len(diffs)
    if n == 0:
        return TrialsDelta(paired, None, None, None, "no task scored on both sides")
    mean = sum(diffs) / n
    if n < max(min_tasks, 2):
        return TrialsDelta(paired, mean, None, None, too_few_tasks_note(n))
    var = max(_sample_var(diffs), sum(noise) / n)
    half = t_quantile(confidence, n - 1) * math.sqrt(var / n)
    return TrialsDelta(paired, mean, mean - half, mean + half, None)


def _sample_var(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1)
