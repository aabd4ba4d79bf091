"""Confidence intervals for rates: Wald (as SkillsBench publishes) and Wilson score.

Both take a rate ``p`` in [0, 1] and a sample size ``n``. For a task-macro pass rate skillworks uses
``n = number of tasks x planned trials per task`` (every planned trial of the fixed frame is one
observation), which is how SkillsBench states its Wald intervals. Wilson is reported beside it because
Wald collapses to a zero-width interval at 0 % and 100 % and under-covers for small ``n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist


@dataclass(frozen=True)
class Interval:
    """A two-sided interval on the rate scale [0, 1]."""

    low: float
    high: float


def z_for(confidence: float = 0.95) -> float:
    """Two-sided standard-normal quantile, e.g. 1.95996398454005 for 95 %."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)  # stdlib: no scipy import on the run path


def _check(p: float, n: int) -> None:
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"rate must be in [0, 1], got {p}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")


def wald_interval(p: float, n: int, confidence: float = 0.95) -> Interval | None:
    """Wald interval ``p ± z·sqrt(p(1-p)/n)``, clipped to [0, 1]. None when ``n == 0``."""
    _check(p, n)
    if n == 0:
        return None
    half = z_for(confidence) * math.sqrt(p * (1.0 - p) / n)
    return Interval(max(0.0, p - half), min(1.0, p + half))


def wilson_interval(p: float, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson score interval. None when ``n == 0``. Exactly 0 (1) at the lower (upper) end for p = 0 (1)."""
    _check(p, n)
    if n == 0:
        return None
    z = z_for(confidence)
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return Interval(low, high)
