"""The raw-vs-compiled block's intervals carry each task's trial-to-trial spread (constructed results,
provider "scripted": not a model evaluation)."""

from __future__ import annotations

from typing import Any

import pytest

from skillworks.report.compiled import compiled_comparisons
from skillworks.results import Timings


def _results(fx: Any, tasks: int) -> list[Any]:
    out = []
    for i in range(tasks):
        for cond, base in (("curated", 10.0), ("compiled", 10.5)):
            for k, jitter in enumerate((-1.0, 1.0)):  # every task: compiled 0.5 s slower, trials ±1 s apart
                r = fx.trial(f"t{i}", cond, k, 1.0)
                out.append(r.model_copy(update={"timings": Timings(agent_sec=base + jitter, total_sec=base + jitter)}))
    return out


def test_agent_wall_interval_is_not_zero_width(fx: Any) -> None:
    (block,) = compiled_comparisons(_results(fx, 6))
    wall = next(m for m in block.metrics if m.metric == "agent_sec")
    assert wall.delta == pytest.approx(0.5)
    assert wall.ci_low is not None and wall.ci_high is not None and wall.ci_note is None
    assert wall.ci_low < 0.0 < 1.0 < wall.ci_high  # each side's two trials are 2 s apart: ±1.1 s, not [0.5, 0.5]
    reward = next(m for m in block.metrics if m.metric == "reward")
    # every task passed on both sides: no task differs, so no pass-rate Δ interval (the small-n rule), said so
    assert reward.delta == 0.0 and reward.ci_low is None
    assert reward.ci_note == "too few tasks that differ for an interval — 0 of 6 tasks differ"


def test_too_few_tasks_give_no_interval_with_the_reason(fx: Any) -> None:
    (block,) = compiled_comparisons(_results(fx, 3))
    wall = next(m for m in block.metrics if m.metric == "agent_sec")
    assert wall.ci_low is None and wall.ci_note == "too few tasks for an interval — n=3"
