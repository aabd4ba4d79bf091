"""Simulated runs for the interval benchmarks (``interval_coverage.py`` reports, ``interval_tuning.py`` tunes).

Model: tasks drawn from a population with task-level heterogeneity (a task's baseline rate
p0 ~ Beta(mu*K, (1-mu)*K), K = 4; its with-skill rate p1 = min(1, p0 + effect)), trials per task and
condition. A trial's reward is Bernoulli(p) (``graded=False``) or, for a graded metric such as an ACES
score, Beta(p*G, (1-p)*G) with G = 4 (mean p, on [0, 1]). Estimands: the population mean Δ = E[p1 - p0]
and the population mean pass rate E[p1] (from 2e6 population draws); for the SkillsBench-style Wilson
interval over tasks x trials, the mean p1 of the run's own tasks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from skillworks.stats.gain import MIN_HEADROOM
from skillworks.stats.paired import MIN_DIFFERING_TASKS, MIN_TASKS_FOR_INTERVAL, NoiseFloor, t_quantile

BASELINES = (0.05, 0.5, 0.95)
EFFECTS = (0.0, 0.10, 0.20, 0.40)
TRIALS = (1, 2, 3, 5)
K = 4.0
G = 4.0
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Cell:
    mu: float
    effect: float
    tasks: int
    trials: int
    true_delta: float
    true_rate: float
    with_: np.ndarray  # (replicates, tasks) per-task mean reward, with the skill
    without: np.ndarray  # the same without
    with_true: np.ndarray  # (replicates, tasks) the tasks' true p1
    with_sq: np.ndarray  # per-task mean squared reward, with the skill (= with_ for 0/1 rewards)
    without_sq: np.ndarray
    true_gain: float = 0.0  # E[p1 - p0] / (1 - E[p0]): the population's normalised gain


def _population(rng: np.random.Generator, mu: float, size: int, effect: float) -> tuple[np.ndarray, np.ndarray]:
    p0 = rng.beta(mu * K, (1.0 - mu) * K, size=size)
    return p0, np.minimum(1.0, p0 + effect)


def _trial_means(rng: np.random.Generator, p: np.ndarray, m: int, graded: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per task: the mean reward over ``m`` trials and the mean squared reward."""
    if not graded:
        mean = rng.binomial(m, p) / m
        return mean, mean
    a = np.clip(p * G, 1e-9, None)[..., None]
    b = np.clip((1.0 - p) * G, 1e-9, None)[..., None]
    x = rng.beta(a, b, size=(*p.shape, m))
    return x.mean(axis=-1), (x * x).mean(axis=-1)


def cells(seed: int, replicates: int, tasks: tuple[int, ...], *, graded: bool = False) -> Iterator[Cell]:
    """Every (baseline, effect, tasks, trials) cell of the grid, simulated from ``seed``."""
    rng = np.random.default_rng(seed)
    for mu in BASELINES:
        for effect in EFFECTS:
            p0_pop, p1_pop = _population(rng, mu, 2_000_000, effect)
            true_delta, true_rate = float((p1_pop - p0_pop).mean()), float(p1_pop.mean())
            true_gain = true_delta / (1.0 - float(p0_pop.mean()))
            for n in tasks:
                for m in TRIALS:
                    p0, p1 = _population(rng, mu, replicates * n, effect)
                    wo, wo_sq = _trial_means(rng, p0, m, graded)
                    w, w_sq = _trial_means(rng, p1, m, graded)
                    shape = (replicates, n)
                    yield Cell(
                        mu,
                        effect,
                        n,
                        m,
                        true_delta,
                        true_rate,
                        w.reshape(shape),
                        wo.reshape(shape),
                        p1.reshape(shape),
                        w_sq.reshape(shape),
                        wo_sq.reshape(shape),
                        true_gain,
                    )


def shrunk_noise(rate: np.ndarray, square: np.ndarray, m: int, pseudo: float) -> np.ndarray:
    """Vectorised ``skillworks.stats.paired.shrunk_noise``."""
    p = (m * rate + pseudo) / (m + 2.0 * pseudo)
    second = (m * square + pseudo) / (m + 2.0 * pseudo)
    return np.maximum(second - p * p, 0.0) / m


def skew_corrected_t(
    mean: np.ndarray, se: np.ndarray, gamma: np.ndarray, n: int, q: float
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ``skillworks.stats.paired.skew_corrected_t`` (Hall's transformation of the t statistic)."""
    a, b = gamma / (3.0 * np.sqrt(n)), gamma / (6.0 * np.sqrt(n))
    small = np.abs(a) < 1e-9
    safe = np.where(small, 1.0, a)

    def inverse(y: float) -> np.ndarray:
        return np.where(small, y - b, (np.cbrt(np.maximum(0.0, 1.0 + 3.0 * safe * (y - b))) - 1.0) / safe)

    return mean - se * inverse(q), mean - se * inverse(-q)


def sign_balance(d: np.ndarray) -> np.ndarray:
    """Vectorised ``skillworks.stats.paired.sign_balance`` over the rows."""
    pos, neg = (d > 1e-12).sum(axis=1), (d < -1e-12).sum(axis=1)
    return np.abs(pos - neg) / np.maximum(pos + neg, 1)


def third_moment(x: np.ndarray) -> np.ndarray:
    return ((x - x.mean(axis=1, keepdims=True)) ** 3).mean(axis=1)


def floored_t(x: np.ndarray, noise: np.ndarray, scale: float, low_clip: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ``paired_delta`` over replicates (rows): the skew-corrected t over the columns with variance
    ``max(sample variance, scale * mean noise)``."""
    n = x.shape[1]
    mean = x.mean(axis=1)
    var = np.maximum(x.var(axis=1, ddof=1), scale * noise.mean(axis=1))
    safe = np.where(var > 0, var, 1.0)
    gamma = np.where(var > 0, sign_balance(x) * third_moment(x) / safe**1.5, 0.0)
    low, high = skew_corrected_t(mean, np.sqrt(var / n), gamma, n, t_quantile(CONFIDENCE, n - 1))
    return np.maximum(low_clip, low), np.minimum(1.0, high)


def delta_interval(cell: Cell, floor: NoiseFloor) -> tuple[np.ndarray, np.ndarray]:
    m = cell.trials
    noise = shrunk_noise(cell.with_, cell.with_sq, m, floor.pseudo)
    noise = noise + shrunk_noise(cell.without, cell.without_sq, m, floor.pseudo)
    return floored_t(cell.with_ - cell.without, noise, floor.scale, -1.0)


def rate_interval(cell: Cell, floor: NoiseFloor) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ``task_mean_interval``: Wilson at the effective sample size of the moderated variance."""
    n, m = cell.tasks, cell.trials
    noise = floor.scale * shrunk_noise(cell.with_, cell.with_sq, m, floor.pseudo).mean(axis=1)
    s2 = cell.with_.var(axis=1, ddof=1)
    if floor.prior_df <= 0:
        var, df = np.maximum(s2, noise), n - 1.0
    else:
        var, df = ((n - 1) * s2 + floor.prior_df * noise) / (n - 1 + floor.prior_df), n - 1 + floor.prior_df
    p = cell.with_.mean(axis=1)
    spread = p * (1.0 - p)
    var_mean = var / n
    safe = np.where(var_mean > 0, var_mean, 1.0)
    n_eff = np.where((spread > 0) & (var_mean > 0), np.clip(spread / safe, 1.0, n * m), float(n * m))
    z = t_quantile(CONFIDENCE, df)
    denom = 1.0 + z * z / n_eff
    centre = (p + z * z / (2.0 * n_eff)) / denom
    half = (z / denom) * np.sqrt(spread / n_eff + z * z / (4.0 * n_eff * n_eff))
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def gain_interval(cell: Cell, floor: NoiseFloor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised ``skillworks.stats.gain_interval``: (low, high, has an interval) per replicate."""
    n, m = cell.tasks, cell.trials
    mean_w, mean_o = cell.with_.mean(axis=1), cell.without.mean(axis=1)
    headroom = 1.0 - mean_o
    ok = headroom >= MIN_HEADROOM
    safe = np.where(ok, headroom, 1.0)
    g = (mean_w - mean_o) / safe
    resid = cell.with_ - cell.without - g[:, None] * (1.0 - cell.without)
    s2 = (resid * resid).sum(axis=1) / (n - 1)
    noise = shrunk_noise(cell.with_, cell.with_sq, m, floor.pseudo) + (1.0 - g[:, None]) ** 2 * shrunk_noise(
        cell.without, cell.without_sq, m, floor.pseudo
    )
    v = np.maximum(s2, floor.scale * noise.mean(axis=1))
    v_safe = np.where(v > 0, v, 1.0)
    gamma = np.where(v > 0, sign_balance(cell.with_ - cell.without) * third_moment(resid) / v_safe**1.5, 0.0)
    se = np.sqrt(v / n) / safe
    low, high = skew_corrected_t(g, se, gamma, n, t_quantile(CONFIDENCE, n - 1))
    return np.maximum(-mean_o / safe, low), np.minimum(1.0, high), ok


REPORTED_SHARE = 50.0
"""A cell counts as reported when the tool gives an interval in at least this share (%) of its runs; the
others print "no interval" (most of their runs say "too few tasks that differ")."""


def delta_has(cell: Cell) -> np.ndarray:
    """Per replicate: does ``paired_delta`` (and the ACES lift) give an interval — at least
    ``MIN_TASKS_FOR_INTERVAL`` tasks and ``MIN_DIFFERING_TASKS`` of them with a non-zero difference."""
    differing = (np.abs(cell.with_ - cell.without) > 1e-12).sum(axis=1)
    return (differing >= MIN_DIFFERING_TASKS) & (cell.tasks >= MIN_TASKS_FOR_INTERVAL)


def rate_has(cell: Cell) -> np.ndarray:
    """Per replicate: does ``task_mean_interval`` give an interval — ``MIN_DIFFERING_TASKS`` tasks that passed
    a trial and as many that failed one."""
    passed, failed = (cell.with_ > 1e-12).sum(axis=1), (cell.with_ < 1.0 - 1e-12).sum(axis=1)
    return (passed >= MIN_DIFFERING_TASKS) & (failed >= MIN_DIFFERING_TASKS) & (cell.tasks >= MIN_TASKS_FOR_INTERVAL)


def conditional(low: np.ndarray, high: np.ndarray, truth: float, has: np.ndarray) -> tuple[float, float]:
    """(coverage among the runs with an interval, share of runs with one), in %; coverage NaN when the share
    is under :data:`REPORTED_SHARE`."""
    share = float(has.mean() * 100.0)
    if share < REPORTED_SHARE:
        return float("nan"), share
    return coverage(low[has], high[has], truth), share


def coverage(low: np.ndarray, high: np.ndarray, truth: float | np.ndarray) -> float:
    return float(((low <= truth) & (truth <= high)).mean() * 100.0)
