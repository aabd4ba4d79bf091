"""The Agent protocol: what runs in a trial between staging the skills and verifying."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from skillworks.results import SkillUse, TrialError, Usage
from skillworks.sandbox.base import Sandbox
from skillworks.skills.package import SkillPackage
from skillworks.skills.staging import HarnessSkill
from skillworks.tasks.model import Task


@dataclass
class AgentContext:
    task: Task
    sandbox: Sandbox
    trial_dir: Path = field(metadata={"doc": "host: runs/<run>/trials/<trial>"})
    agent_log_dir: Path = field(metadata={"doc": "host: <trial_dir>/agent, the harness's native logs"})
    condition: str
    skills: list[SkillPackage]
    skills_dir: str | None
    timeout_sec: float
    seed: int
    model: str | None = None
    gateway_url: str | None = field(default=None, metadata={"doc": "base URL the agent sees inside the sandbox"})
    gateway_socket: Path | None = field(default=None, metadata={"doc": "host unix socket of this trial's gateway"})
    tools: list[dict[str, Any]] = field(
        default_factory=list, metadata={"doc": "runtimes from the condition's skill source (e.g. an MCP server)"}
    )


@dataclass
class AgentOutcome:
    exit_code: int | None = None
    timed_out: bool = False
    error: TrialError | None = None
    trajectory_path: Path | None = None  # ATIF written by the agent or its converter
    usage: Usage | None = None  # as the harness reported it (the gateway's numbers are the record)
    skill_use: SkillUse | None = None
    final_message: str | None = None
    # skills the harness brought itself (see StagingRecord.harness_skills): none by default; None when a
    # harness could not tell (its own listing was not found)
    harness_skills: list[HarnessSkill] | None = field(default_factory=list)


@runtime_checkable
class Agent(Protocol):
    """An agent the trial runner can run. Some hooks are optional (looked up with getattr, so small test
    or plugin agents need not define them):

    - ``async preflight() -> None``: called once before any trial; raise a UserError when the agent
      cannot run here (e.g. a harness CLI that is not installed).
    - ``sandbox_binds() -> list[tuple[Path, str]]``: host paths to mount read-only into every sandbox
      (e.g. the cached install of a harness CLI).
    - ``check_tools(kinds) -> None``: called once before any trial with the kinds of tools the run's conditions
      give (e.g. ``compiled-skills``); raise a UserError when the agent cannot take one.
    - ``tool_binds(tools) -> list[tuple[Path, str]]``: host paths to mount read-only into a trial's sandbox for
      the tools its condition gives (e.g. the interpreter that serves compiled skills there).
    """

    name: str

    @property
    def version(self) -> str: ...

    def skills_dir(self, home: str, workdir: str) -> str | None:
        """Where this agent's harness discovers skills inside the sandbox (None: it cannot use skills)."""
        ...

    @property
    def needs_model(self) -> bool: ...

    async def run(self, ctx: AgentContext) -> AgentOutcome: ...
