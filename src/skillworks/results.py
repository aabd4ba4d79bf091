"""TrialResult and its parts: one line of results.jsonl. A leaf module every package may import.

A TrialResult keeps three things apart: *reward* (what the verifier said), *outcome* (solved,
partial, failed, error) and *error* (what broke and where). An infrastructure error is never a 0.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from skillworks._printable import strip_ansi

# "ungraded": the task has no verifier (an evals.json case graded by metrics) and nothing broke
Outcome = Literal["solved", "partial", "failed", "error", "ungraded"]
Phase = Literal["setup", "staging", "agent", "verify", "internal"]
# "sandbox_broken": the agent left the sandbox unable to grade it (e.g. exhausted its processes or
# made /logs unusable): the agent's failure, not an infrastructure error (see README, Security);
# "token_budget": the trial used more tokens than its budget (--max-trial-tokens): ended unverified, reward 0
# "reward_file_refused": a reward file was a link, a FIFO or another special file, past its size cap, or
# reward.txt and reward.json disagreed (what only a process of the agent's leaves; reward 0)
FailureMode = Literal[
    "timeout",
    "execution_error",
    "no_output",
    "verification_failed",
    "sandbox_broken",
    "token_budget",
    "reward_file_refused",
]
UsageSource = Literal["gateway", "harness", "none"]


class TrialError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: str = Field(description="e.g. sandbox_error, staging_error, agent_timeout, verifier_error, rate_limit")
    message: str
    phase: Phase

    @field_validator("message")
    @classmethod
    def _no_colour_codes(cls, value: str) -> str:
        # an error raised through Ray or a coloured CLI carries terminal colour codes: not part of the message
        return strip_ansi(value)


class Timings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    setup_sec: float = 0.0
    agent_sec: float = 0.0
    verify_sec: float = 0.0
    total_sec: float = 0.0


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    source: UsageSource = "none"
    cost_source: str | None = Field(default=None, description="provider | litellm_price_table | script | none")
    origin: str | None = Field(
        default=None,
        description="where the counts were read when not from the gateway, e.g. 'harbor agent_result' or "
        "'atif steps, one count per API call'",
    )


class SkillUse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    listed: list[str] = Field(default_factory=list, description="skills the agent was shown")
    read: list[str] = Field(default_factory=list, description="skills whose SKILL.md the agent read")
    invoked: list[str] = Field(default_factory=list, description="skills invoked through a skill tool or read")
    scripts_run: list[str] = Field(default_factory=list, description="'<skill>/<script path>' run by the agent")
    harness_provided: list[str] = Field(
        default_factory=list,
        description="skills the harness itself showed the agent (bundled with the CLI, not staged): see skills.json",
    )
    failed: list[str] = Field(
        default_factory=list,
        description="skills a load of which failed (an error or no result); not counted as invoked",
    )


class SkillSourceInfo(BaseModel):
    """What a condition's skill source did for a trial (self-generated, compiled, evolved conditions):
    its own usage, kept apart from the solver's, and its record (ids, hashes, artefact paths)."""

    model_config = ConfigDict(extra="forbid")

    usage: Usage | None = None
    record: dict[str, Any] = Field(default_factory=dict)


ImageSource = Literal["built", "pulled", "cached"]


class ImageInfo(BaseModel):
    """Where a container trial's image came from: built on the node, pulled from --image-registry, or
    already there (cached); with what the registry did when one was given."""

    model_config = ConfigDict(extra="forbid")

    tag: str = Field(description="the local, content-keyed tag, e.g. skillworks/env:<hash16>")
    source: ImageSource
    seconds: float = Field(default=0.0, description="time spent pulling or building (and pushing)")
    registry: str | None = Field(default=None, description="the --image-registry, when one was given")
    pushed: bool | None = Field(default=None, description="pushed to the registry (None: no push attempted)")
    registry_error: str | None = Field(
        default=None, description="why the pull or push failed (the trial built or kept the local image)"
    )


class TestResult(BaseModel):
    """One test of the verifier's CTRF report."""

    model_config = ConfigDict(extra="forbid")

    name: str
    status: str
    duration_ms: float | None = None
    message: str | None = None


class TrialResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trial_id: str
    run_id: str
    task_id: str
    condition: str
    agent: str
    model: str | None = None
    provider: str | None = Field(default=None, description="model provider, e.g. anthropic, scripted")
    trial_index: int
    seed: int
    attempt: int = 1
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    outcome: Outcome
    failure_mode: FailureMode | None = None
    failure_detail: str | None = Field(
        default=None, description="what the agent broke (failure_mode sandbox_broken, reward_file_refused)"
    )
    error: TrialError | None = None
    timings: Timings = Timings()
    usage: Usage = Usage()
    skill_use: SkillUse = SkillUse()
    skills_staged: list[str] = Field(default_factory=list, description="'name@hash12' of every staged skill")
    skill_source: SkillSourceInfo | None = Field(
        default=None, description="set when the condition's skills were produced for the trial (not selected)"
    )
    image: ImageInfo | None = Field(default=None, description="container backend: the trial's image")
    verifier_isolation: Literal["fresh", "shared"] | None = Field(
        default=None,
        description="where the verifier ran: a fresh sandbox with the agent's outputs copied in, or the agent's own "
        "(the task's verifier.isolation: shared); None when no verifier ran",
    )
    outputs_not_copied: list[str] = Field(
        default_factory=list, description="fresh verification: paths the agent changed outside the copied outputs"
    )
    outputs_skipped: list[str] = Field(
        default_factory=list, description="fresh verification: entries of the outputs the copy left out, and why"
    )
    metrics: dict[str, float] = Field(default_factory=dict)
    tests: list[TestResult] = Field(default_factory=list)
    paths: dict[str, str] = Field(default_factory=dict, description="artifact paths relative to the run dir")
    started_at: datetime
    finished_at: datetime


def reward_problem(value: object) -> str | None:
    """Why `value` is not a valid reward (a finite number in [0, 1]), or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"reward {value!r} is not a number"
    if math.isnan(value) or math.isinf(value):
        return f"reward {value!r} is not finite"
    if not 0.0 <= value <= 1.0:
        return f"reward {value!r} is outside [0, 1]"
    return None


def outcome_for(reward: float | None, error: TrialError | None) -> Outcome:
    """Outcome from the verifier's reward: 1 solved, (0,1) partial, 0 failed; no reward is an error."""
    if error is not None or reward is None:
        return "error"
    if reward >= 1.0:
        return "solved"
    if reward > 0.0:
        return "partial"
    return "failed"
