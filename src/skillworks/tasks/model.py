"""The one Task model, whatever the source format (task.md, Harbor dir, evals.json case)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks._tempdirs import temp_prefix
from skillworks.skills.package import SkillPackage

NetworkMode = Literal["no-network", "public", "allowlist"]
SourceFormat = Literal["task.md", "harbor", "evals.json"]
VerifierIsolation = Literal["fresh", "shared"]

DEFAULT_WORKDIR = "/app"


class NetworkPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: NetworkMode = "no-network"
    allowed_hosts: tuple[str, ...] = ()


class Resources(BaseModel):
    model_config = ConfigDict(frozen=True)

    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None


class Environment(BaseModel):
    """Where the agent works. Either a Dockerfile context or plain files copied into the workspace."""

    model_config = ConfigDict(frozen=True)

    dir: Path | None = Field(default=None, description="host directory with the environment files")
    dockerfile: Path | None = Field(default=None, description="the Dockerfile, when the task needs an image")
    workdir: str = Field(default=DEFAULT_WORKDIR, description="workspace path inside the sandbox")
    resources: Resources = Resources()
    network: NetworkPolicy = NetworkPolicy()
    build_timeout_sec: float = 600.0

    @property
    def needs_image(self) -> bool:
        return self.dockerfile is not None


class ScriptDir(BaseModel):
    """A verifier or oracle: a host directory uploaded to `mount` and run via `entrypoint`."""

    model_config = ConfigDict(frozen=True)

    dir: Path
    mount: str = Field(description="path inside the sandbox, e.g. /tests or /solution")
    entrypoint: str = Field(description="script inside `dir` to run, e.g. test.sh or solve.sh")
    timeout_sec: float = 600.0
    env: dict[str, str] = Field(default_factory=dict)

    @contextlib.contextmanager
    def upload_source(self) -> Iterator[Path]:
        """The directory to upload: `dir` itself, or, when it holds symlinks (checked at load to stay
        inside the task), a temporary copy with the links followed, so the sandbox gets files and not
        links that dangle there."""
        has_links = any(p.is_symlink() for p in self.dir.rglob("*"))
        if not has_links:
            yield self.dir
            return
        with tempfile.TemporaryDirectory(prefix=temp_prefix("upload")) as tmp:
            copy = Path(tmp) / self.dir.name
            shutil.copytree(self.dir, copy, symlinks=False)
            yield copy


class EvalExpectations(BaseModel):
    """What an evals.json case expects, for the ACES metrics (only on tasks loaded from evals.json)."""

    model_config = ConfigDict(frozen=True)

    dialect: Literal["aces", "skill-creator"]
    case_id: str = Field(description="the case's id as written in evals.json")
    skill: str = Field(description="name of the skill whose evals.json holds the case")
    expected_skill: str | None = Field(default=None, description="skill the agent should activate")
    expected_script: str | None = Field(default=None, description="script (path in the skill) it should run")
    ground_truth: Any = Field(default=None, description="reference answer (string, number, list or object)")
    expected_output: str | None = Field(default=None, description="skill-creator: description of success")
    expected_behavior: tuple[str, ...] = Field(default=(), description="ordered assertions about the trajectory")
    files: tuple[str, ...] = Field(default=(), description="input files, relative to the skill root")
    weights: dict[str, float] = Field(default_factory=dict, description="metric weights for the overall score")
    judge_notes: str | None = Field(default=None, description="author guidance for the LLM judges (EVAL.md)")


class Task(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    root: Path
    source_format: SourceFormat
    instruction: str
    environment: Environment = Environment()
    verifier: ScriptDir | None = None
    oracle: ScriptDir | None = None
    skills: tuple[SkillPackage, ...] = Field(default=(), description="the task's curated skills")
    agent_timeout_sec: float = 900.0
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str = Field(description="sha256 over every file of the task directory")
    name: str | None = Field(default=None, description="declared package name (task.name), if any")
    schema_version: str | None = Field(default=None, description="declared schema_version / version")
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="format keys skillworks keeps but does not run (document keys, unknown Harbor keys)",
    )
    evaluation: EvalExpectations | None = Field(
        default=None, description="evals.json expectations graded by the ACES metrics (no verifier needed)"
    )
    verifier_isolation: VerifierIsolation = Field(
        default="fresh", description="where the verifier runs: a fresh sandbox (default) or the agent's (shared)"
    )
    verifier_inputs: tuple[str, ...] = Field(
        default=(), description="paths outside the workdir copied from the agent's sandbox into the verifier's"
    )

    @property
    def verifier_outputs(self) -> tuple[str, ...]:
        """What the fresh verifier sandbox gets of the agent's: the workdir, then the declared inputs."""
        inside = [p for p in self.verifier_inputs if not _within(p, self.environment.workdir)]
        return (self.environment.workdir, *inside)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
