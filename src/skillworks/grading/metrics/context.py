"""What every ACES metric sees about one trial, and the result a metric returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skillworks.skills.package import SkillPackage
from skillworks.tasks.model import Task
from skillworks.trajectory.models import Trajectory

METRIC_NAMES = ("security", "skill_execution", "skill_efficiency", "accuracy", "goal_accuracy", "behavior_check")
OVERALL = "overall"


@dataclass(frozen=True)
class MetricContext:
    task: Task
    trajectory: Trajectory
    condition: str
    staged: tuple[SkillPackage, ...]  # skills the condition made visible
    skills_dir: str | None  # where they are, inside the sandbox
    workdir: str  # the workspace path inside the sandbox
    home: str = "/home/agent"
    target: str | None = None  # the skill under evaluation
    support: tuple[str, ...] = ()
    decoys: tuple[str, ...] = ()
    trial_dir: Path | None = None
    judge_sees_trajectory: bool = True  # the accuracy judge reads the trajectory digest, not only the answer
    goal_mode: str = "match"  # goal accuracy: "match" (deterministic) or "llm" (the judge compares)

    @property
    def expected_skill(self) -> str | None:
        ev = self.task.evaluation
        if ev is not None and ev.expected_skill:
            return ev.expected_skill
        return self.target

    @property
    def relevant_skills(self) -> frozenset[str]:
        """Skills whose use is on-task: the expected skill (and the target) plus the support skills."""
        names = set(self.support)
        for name in (self.expected_skill, self.target):
            if name:
                names.add(name)
        return frozenset(names)


@dataclass
class MetricResult:
    """A score in [0, 1], or None when the metric does not apply (it is then not 'scored')."""

    name: str
    score: float | None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.score is not None:
            if not 0.0 <= self.score <= 1.0:
                raise ValueError(f"metric {self.name}: score {self.score} is outside [0, 1]")
            self.score = float(self.score)


class Judge(Protocol):
    """An LLM judge: one chat completion (OpenAI chat messages in, assistant text out)."""

    async def complete(self, messages: list[dict[str, str]]) -> str: ...


def overall_score(scores: dict[str, float], weights: dict[str, float] | None = None) -> float | None:
    """Mean of the available metric scores, or their weighted mean when `weights` are given (metrics
    without a weight count 1; a weight of 0 leaves a metric out). None when nothing is available."""
    weights = weights or {}
    total = weight_sum = 0.0
    for name, value in scores.items():
        w = weights.get(name, 1.0)
        total += w * value
        weight_sum += w
    return total / weight_sum if weight_sum > 0 else None
