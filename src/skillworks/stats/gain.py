"""The interval of the normalised gain ``g = Δ / (1 − without)`` over tasks (the reports' g, a ratio of
task-macro means).

Method (``"ratio-t with trial-noise floor, skew-corrected"``): over the paired tasks, ``h_i = 1 − without_i`` and
``e_i = d_i − g·h_i`` (the residual of the ratio; its mean is 0). ``var(g) ≈ v / (n · mean(h)²)`` with
``v = max(s²_e, κ · mean_i(ṽ_w,i + (1 − g)² · ṽ_o,i))`` — the sample variance of the residuals, floored by
the trials' noise as in :mod:`skillworks.stats.paired` (``e_i = with_i − (1 − g)·without_i − g``, so the
two sides' noise enters with weights 1 and ``(1 − g)²``; floor :data:`GAIN_FLOOR`, chosen on seed 1 by
``benchmarks/interval_tuning.py`` like the Δ's). Interval
``g ± t_{n−1} · sqrt(var(g))`` with the Δ's skew correction (:func:`~skillworks.stats.paired.skew_corrected_t`
at the residuals' skewness ``m₃(e)/v^{3/2}``, weighted by the sign balance of the ``d_i``), clipped to
``[−mean(without)/mean(h), 1]`` (the range g can take). None below
:data:`MIN_TASKS_FOR_INTERVAL` paired tasks or below :data:`MIN_DIFFERING_TASKS` tasks whose two sides
differ (the small-n rule of the Δ), or when the baseline's mean headroom is under
:data:`MIN_HEADROOM` (g is then a ratio of two small numbers and no interval holds its coverage).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from skillworks.stats.paired import (
    MIN_DIFFERING_TASKS,
    MIN_TASKS_FOR_INTERVAL,
    NoiseFloor,
    TaskSide,
    differing_count,
    shrunk_noise,
    sign_balance,
    skew_corrected_t,
    t_quantile,
    third_moment,
    too_few_differing_note,
    unpack_side,
)

GAIN_FLOOR = NoiseFloor(pseudo=1.0, scale=0.25)
"""The floor of the g interval (chosen on benchmarks/interval_tuning.py's seed set)."""

MIN_HEADROOM = 0.1
"""Smallest mean baseline headroom ``1 − without`` (rate scale) for which a g interval is given."""


def gain_interval(
    with_by_task: Mapping[str, TaskSide],
    without_by_task: Mapping[str, TaskSide],
    *,
    confidence: float = 0.95,
    min_tasks: int = MIN_TASKS_FOR_INTERVAL,
    floor: NoiseFloor = GAIN_FLOOR,
    min_differing: int = MIN_DIFFERING_TASKS,
) -> tuple[float, float] | str:
    """``(low, high)`` of g over the tasks scored on both sides, or the reason there is none."""
    rows = []
    for task in with_by_task:
        w, o = unpack_side(with_by_task[task]), unpack_side(without_by_task.get(task, (None, 0)))
        if w[0] is not None and o[0] is not None:
            rows.append((w, o))
    n = len(rows)
    if n < max(min_tasks, 2):
        return f"too few tasks for an interval — n={n}"
    diffs = [(w[0] or 0.0) - (o[0] or 0.0) for w, o in rows]
    differing = differing_count(diffs)
    if differing < max(min_differing, 2):
        return too_few_differing_note(differing, n)
    mean_w = sum(w[0] or 0.0 for w, _ in rows) / n
    mean_o = sum(o[0] or 0.0 for _, o in rows) / n
    headroom = 1.0 - mean_o
    if headroom < MIN_HEADROOM:
        return f"no interval: the baseline leaves {headroom * 100:.1f}% headroom (g is unstable below 10%)"
    g = (mean_w - mean_o) / headroom
    resid = [(w[0] or 0.0) - (o[0] or 0.0) - g * (1.0 - (o[0] or 0.0)) for w, o in rows]
    s2 = sum(r * r for r in resid) / (n - 1)
    noise = (
        sum(
            shrunk_noise(w[0] or 0.0, w[1], floor.pseudo, w[2])
            + (1.0 - g) ** 2 * shrunk_noise(o[0] or 0.0, o[1], floor.pseudo, o[2])
            for w, o in rows
        )
        / n
    )
    v = max(s2, floor.scale * noise)
    gamma = sign_balance(diffs) * third_moment(resid) / v**1.5
    se = math.sqrt(v / n) / headroom
    low, high = skew_corrected_t(g, se, gamma, n, t_quantile(confidence, n - 1))
    return max(-mean_o / headroom, low), min(1.0, high)
