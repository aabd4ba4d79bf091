"""Run the six metrics on one trial and combine them into the overall score."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillworks.grading.metrics.context import OVERALL, Judge, MetricContext, MetricResult, overall_score
from skillworks.grading.metrics.goal import goal_accuracy_metric
from skillworks.grading.metrics.judged import accuracy_metric, behavior_check_metric, goal_accuracy_llm_metric
from skillworks.grading.metrics.security import security_metric
from skillworks.grading.metrics.skill_use_metrics import skill_efficiency_metric, skill_execution_metric


@dataclass
class MetricsReport:
    results: list[MetricResult]
    weights: dict[str, float] = field(default_factory=dict)

    @property
    def scores(self) -> dict[str, float]:
        """Available scores by metric name (unscored metrics left out)."""
        return {r.name: r.score for r in self.results if r.score is not None}

    @property
    def overall(self) -> float | None:
        return overall_score(self.scores, self.weights)

    def metrics(self) -> dict[str, float]:
        """What goes into TrialResult.metrics: every available score plus `overall`."""
        out = dict(self.scores)
        overall = self.overall
        if overall is not None:
            out[OVERALL] = overall
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "scores": {r.name: r.score for r in self.results},
            "overall": self.overall,
            "weights": self.weights,
            "details": {r.name: r.details for r in self.results},
        }


async def grade_trial(
    ctx: MetricContext, judge: Judge | None, weights: dict[str, float] | None = None
) -> MetricsReport:
    results = [
        security_metric(ctx),
        skill_execution_metric(ctx),
        skill_efficiency_metric(ctx),
    ]
    if judge is None:
        results.append(MetricResult("accuracy", None, {"reason": "no judge model configured"}))
    else:
        results.append(await accuracy_metric(ctx, judge))
    if ctx.goal_mode == "llm":
        if judge is None:
            results.append(MetricResult("goal_accuracy", None, {"reason": "goal mode llm: no judge model configured"}))
        else:
            results.append(await goal_accuracy_llm_metric(ctx, judge))
    else:
        results.append(goal_accuracy_metric(ctx))
    if judge is None:
        results.append(MetricResult("behavior_check", None, {"reason": "no judge model configured"}))
    else:
        results.append(await behavior_check_metric(ctx, judge))
    return MetricsReport(results, dict(weights or {}))
