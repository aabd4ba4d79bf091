"""What one model call may ask for: the run's limits, applied to a request before it is forwarded.

An agent (or a skill script it runs) chooses its own ``max_tokens`` / ``max_completion_tokens`` /
``max_output_tokens`` / ``maxOutputTokens`` and its reasoning effort (``reasoning_effort``, Responses
``reasoning.effort``, Anthropic ``output_config.effort`` or ``thinking.budget_tokens``, Gemini
``thinkingBudget``). Every wire format parses those into ``ModelRequest.max_tokens`` and
``ModelRequest.reasoning_effort``; the gateway lowers them to the run's limits here, so whatever the
harness asks for, the provider never gets more, and each lowered value is recorded on the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks.gateway.internal import ModelRequest

# Reasoning effort levels, least first (OpenAI's names, and Anthropic's `max` above them: LiteLLM gives
# each a thinking budget, from 128 tokens for minimal to 16384 for max)
EFFORT_LEVELS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
PLAN_KEY = "call_limits"  # where a run's plan (ExperimentSpec.extra) keeps them


class Clamp(BaseModel):
    """One value of a request the gateway lowered before forwarding it (recorded in gateway.jsonl)."""

    model_config = ConfigDict(extra="forbid")

    field: Literal["max_tokens", "reasoning_effort"]
    asked: int | str | None = Field(description="what the client asked for (None: it set no limit)")
    sent: int | str = Field(description="what the provider got")
    limit: str = Field(description="the run's limit that decided it, e.g. --max-output-tokens")


@dataclass(frozen=True)
class CallLimits:
    """The most one model call may ask for. ``None``: no limit of that kind."""

    max_output_tokens: int | None = None
    max_reasoning_effort: str | None = None

    def __post_init__(self) -> None:
        if self.max_output_tokens is not None and self.max_output_tokens < 1:
            raise ValueError(f"max_output_tokens must be >= 1, got {self.max_output_tokens}")
        if self.max_reasoning_effort is not None and effort_rank(self.max_reasoning_effort) is None:
            raise ValueError(
                f"unknown reasoning effort {self.max_reasoning_effort!r} (one of {', '.join(EFFORT_LEVELS)})"
            )

    def to_plan(self) -> dict[str, Any]:
        return {"max_output_tokens": self.max_output_tokens, "max_reasoning_effort": self.max_reasoning_effort}

    @classmethod
    def from_plan(cls, extra: Mapping[str, Any]) -> CallLimits:
        """The limits a run's plan (``ExperimentSpec.extra``) holds; none when it holds none."""
        raw = extra.get(PLAN_KEY)
        if not isinstance(raw, Mapping):
            return cls()
        return cls(raw.get("max_output_tokens"), raw.get("max_reasoning_effort"))


def effort_rank(effort: str) -> int | None:
    """The position of an effort level (higher asks for more reasoning); None for a name we do not know."""
    name = effort.lower()
    return EFFORT_LEVELS.index(name) if name in EFFORT_LEVELS else None


def clamp_request(request: ModelRequest, limits: CallLimits, tokens_left: int | None = None) -> list[Clamp]:
    """Lower `request` in place to `limits` (and its output to the trial's `tokens_left` of its token budget,
    its estimated prompt already taken off); return what was lowered. A request that sets no output limit
    gets the limit; an effort level this gateway does not know is taken as above the limit."""
    clamps: list[Clamp] = []
    given = [(limits.max_output_tokens, "--max-output-tokens"), (tokens_left, "--max-trial-tokens")]
    caps = [(max(1, cap), flag) for cap, flag in given if cap is not None]
    if caps:
        cap, flag = min(caps, key=lambda c: c[0])
        if request.max_tokens is None or request.max_tokens > cap:
            clamps.append(Clamp(field="max_tokens", asked=request.max_tokens, sent=cap, limit=flag))
            request.max_tokens = cap
    top = limits.max_reasoning_effort
    asked = request.reasoning_effort
    if top is not None and asked is not None:
        rank = effort_rank(asked)
        top_rank = effort_rank(top)
        if rank is None or (top_rank is not None and rank > top_rank):
            clamps.append(Clamp(field="reasoning_effort", asked=asked, sent=top, limit="--max-reasoning-effort"))
            request.reasoning_effort = top
    return clamps
