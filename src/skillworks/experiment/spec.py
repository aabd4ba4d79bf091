"""The experiment spec written to experiment.json: what was asked for and what was actually used."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from skillworks.tasks.model import Task


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    model: str | None = None
    api_base: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    version: str | None = Field(default=None, description="resolved at run start (lock)")

    @property
    def provider(self) -> str | None:
        if self.model is None:
            return None
        return self.model.split("/", 1)[0] if "/" in self.model else "openai"

    @property
    def label(self) -> str:
        """Unique, filesystem-safe name of this agent configuration in a run."""
        if "label" in self.options:
            return str(self.options["label"])
        if self.model is None:
            return self.name
        tail = self.model.rsplit("/", 1)[-1]
        tail = re.sub(r"\.(ya?ml|json)$", "", tail)
        return f"{self.name}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', tail)}"


class TaskRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    path: str
    format: str
    content_hash: str
    skills: list[str] = Field(default_factory=list, description="'name@hash12' of the task's curated skills")


def task_ref(task: Task) -> TaskRef:
    """The spec's record of a loaded task: id, path, format, content hash and curated skills."""
    return TaskRef(
        id=task.id,
        path=str(task.root),
        format=task.source_format,
        content_hash=task.content_hash,
        skills=[f"{s.name}@{s.short_hash}" for s in task.skills],
    )


class SkillRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    path: str
    package_hash: str


class ExperimentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: datetime
    skillworks_version: str
    tasks: list[TaskRef]
    conditions: list[str]
    agents: list[AgentConfig]
    trials: int
    seed: int
    concurrency: int
    env: str = "local"
    env_options: dict[str, Any] = Field(default_factory=dict)
    target_skill: SkillRef | None = None
    support_skills: list[SkillRef] = Field(default_factory=list)
    decoy_skills: list[SkillRef] = Field(default_factory=list)
    sibling_skills: list[SkillRef] = Field(
        default_factory=list, description="the target's sibling skills (an ACES group workspace)"
    )
    baseline_policy: str | None = Field(default=None, description="what the baseline condition withholds")
    warnings: list[str] = Field(
        default_factory=list, description="said loudly at run start and in reports, e.g. sandbox limits not enforced"
    )
    extra: dict[str, Any] = Field(default_factory=dict)
