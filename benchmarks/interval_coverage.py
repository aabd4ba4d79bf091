"""Coverage and width of the intervals the reports show, at the sizes skill authors run (prints figures).

    .venv/bin/python benchmarks/interval_coverage.py [REPLICATES]

Model: tasks drawn from a population with task-level heterogeneity (a task's baseline rate
p0 ~ Beta(mu*K, (1-mu)*K), K = 4; its with-skill rate p1 = min(1, p0 + effect)), Bernoulli trials per task
and condition. Estimands: the population mean Δ = E[p1 - p0] and the population mean pass rate E[p1]
(computed from 2e6 population draws). Grid: tasks {1,3,5,10,20,50,100} x trials {1,2,3,5} x baseline mean
mu {0.05, 0.5, 0.95} x effect {0, 10, 20, 40} pp; REPLICATES simulated runs per cell (default 2000).

Printed per cell: coverage (%) and mean width (pp) of
- Δ: ``skillworks.stats.paired_delta`` (paired-t with a trial-noise floor), "no interval" below
  ``MIN_TASKS_FOR_INTERVAL`` paired tasks by design; beside it the task-only bootstrap's coverage
  (``task_bootstrap_delta``, 400 resamples, first 300 replicates) for comparison;
- the with-skill pass rate: ``task_mean_interval`` (the reports' pass-rate interval) and Wilson over
  n = tasks x trials (the SkillsBench-style interval, shown beside it in report.md).
Then the minimum and maximum coverage over the reported cells, per interval.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from skillworks.stats import MIN_TASKS_FOR_INTERVAL, paired_delta, task_bootstrap_delta, task_mean_interval
from skillworks.stats.intervals import z_for
from skillworks.stats.paired import t_quantile

TASKS = (1, 3, 5, 10, 20, 50, 100)
TRIALS = (1, 2, 3, 5)
BASELINES = (0.05, 0.5, 0.95)
EFFECTS = (0.0, 0.10, 0.20, 0.40)
K = 4.0
CONFIDENCE = 0.95


def _population(rng: np.random.Generator, mu: float, size: int, effect: float) -> tuple[np.ndarray, np.ndarray]:
    p0 = rng.beta(mu * K, (1.0 - mu) * K, size=size)
    return p0, np.minimum(1.0, p0 + effect)


def _floor(rate: np.ndarray, m: int) -> np.ndarray:
    p = (m * rate + 0.5) / (m + 1.0)  # the same shrinkage as skillworks.stats.paired
    return p * (1.0 - p) / m


def _t_interval(x: np.ndarray, noise: np.ndarray, n: int, low_clip: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised paired_delta / task_mean_interval over replicates (rows); checked against them below."""
    mean = x.mean(axis=1)
    var = np.maximum(x.var(axis=1, ddof=1), noise.mean(axis=1))
    half = t_quantile(CONFIDENCE, n - 1) * np.sqrt(var / n)
    return np.maximum(low_clip, mean - half), np.minimum(1.0, mean + half)


def _wilson(p: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    z = z_for(CONFIDENCE)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = (z / denom) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.where(p == 0, 0.0, np.maximum(0, centre - half)), np.where(p == 1, 1.0, np.minimum(1, centre + half))


def _check_vectorised(rng: np.random.Generator) -> None:
    w, wo = rng.binomial(3, 0.6, size=(1, 7)) / 3, rng.binomial(3, 0.4, size=(1, 7)) / 3
    lo, hi = _t_interval(w - wo, _floor(w, 3) + _floor(wo, 3), 7, -1.0)
    ref = paired_delta({str(i): (w[0, i], 3) for i in range(7)}, {str(i): (wo[0, i], 3) for i in range(7)})
    assert abs(lo[0] * 100 - (ref.ci_low_pp or 0)) < 1e-9 and abs(hi[0] * 100 - (ref.ci_high_pp or 0)) < 1e-9
    rlo, rhi = task_mean_interval({str(i): (w[0, i], 3) for i in range(7)}) or (0, 0)
    lo, hi = _t_interval(w, _floor(w, 3), 7, 0.0)
    assert abs(lo[0] - rlo) < 1e-12 and abs(hi[0] - rhi) < 1e-12


def main() -> int:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = np.random.default_rng(20261201)
    _check_vectorised(rng)
    started = time.perf_counter()
    print(
        f"{reps} runs per cell; Δ = paired-t with trial-noise floor (no interval below {MIN_TASKS_FOR_INTERVAL} "
        "tasks); boot = task-only bootstrap; rate = task-mean t; wilson = Wilson over tasks x trials"
    )
    print(
        f"{'base':>5} {'eff':>4} {'tasks':>5} {'tr':>3} | {'Δ cov':>6} {'Δ wid':>6} {'boot':>5} | "
        f"{'rate':>5} {'r wid':>6} {'wils':>5}"
    )
    reported: dict[str, list[float]] = {"Δ": [], "rate": [], "wilson": [], "boot": []}
    for mu in BASELINES:
        for effect in EFFECTS:
            p0_pop, p1_pop = _population(rng, mu, 2_000_000, effect)
            true_delta, true_rate = float((p1_pop - p0_pop).mean()), float(p1_pop.mean())
            for n in TASKS:
                for m in TRIALS:
                    p0, p1 = _population(rng, mu, reps * n, effect)
                    wo = rng.binomial(m, p0).reshape(reps, n) / m
                    w = rng.binomial(m, p1).reshape(reps, n) / m
                    if n < MIN_TASKS_FOR_INTERVAL:
                        print(f"{mu:>5.2f} {effect * 100:>4.0f} {n:>5} {m:>3} | no interval (too few tasks)")
                        continue
                    lo, hi = _t_interval(w - wo, _floor(w, m) + _floor(wo, m), n, -1.0)
                    cov_d = float(((lo <= true_delta) & (true_delta <= hi)).mean() * 100)
                    rlo, rhi = _t_interval(w, _floor(w, m), n, 0.0)
                    cov_r = float(((rlo <= true_rate) & (true_rate <= rhi)).mean() * 100)
                    wlo, whi = _wilson(w.mean(axis=1), n * m)
                    cov_w = float(((wlo <= true_rate) & (true_rate <= whi)).mean() * 100)
                    hits = 0
                    boot_reps = min(reps, 300)
                    for i in range(boot_reps):
                        b = task_bootstrap_delta(
                            {str(j): w[i, j] for j in range(n)},
                            {str(j): wo[i, j] for j in range(n)},
                            resamples=400,
                            seed=i,
                        )
                        hits += (b.ci_low_pp or 0) <= true_delta * 100 <= (b.ci_high_pp or 0)
                    cov_b = hits / boot_reps * 100
                    for key, v in (("Δ", cov_d), ("rate", cov_r), ("wilson", cov_w), ("boot", cov_b)):
                        reported[key].append(v)
                    print(
                        f"{mu:>5.2f} {effect * 100:>4.0f} {n:>5} {m:>3} | {cov_d:>6.1f} {(hi - lo).mean() * 100:>6.1f} "
                        f"{cov_b:>5.1f} | {cov_r:>5.1f} {(rhi - rlo).mean() * 100:>6.1f} {cov_w:>5.1f}"
                    )
    for key, v in reported.items():
        print(
            f"{key}: coverage over {len(v)} reported cells min {min(v):.1f}% max {max(v):.1f}% "
            f"mean {sum(v) / len(v):.1f}%"
        )
    print(f"elapsed {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
