"""Token usage summed from an ATIF trajectory, counting each model API call once.

Harbor's Claude Code converter writes one step per content block of an assistant message and copies that
message's usage onto every one of them, so summing the steps counts one API call several times (and
Harbor's `final_metrics` and `agent_result` inherit the inflation). A call is identified by a message id in
the step's `extra` (`message_id`, `request_id`, `response_id`) when there is one; otherwise
consecutive agent steps with identical metrics are one call (two distinct calls with the very same token
counts in a row do not happen: each call's prompt holds the previous one's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillworks.trajectory.models import Step, Trajectory

_ID_KEYS = ("message_id", "request_id", "response_id")


@dataclass(frozen=True)
class TrajectoryUsage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float | None
    calls: int  # distinct API calls with metrics
    steps_with_metrics: int  # agent steps carrying metrics (> calls when usage was repeated)

    @property
    def repeated(self) -> bool:
        return self.steps_with_metrics > self.calls


def usage_per_call(traj: Trajectory) -> TrajectoryUsage:
    """Sum the agent steps' metrics with each API call counted once (see the module docstring)."""
    prompt = completion = cached = 0
    cost = 0.0
    have_cost = False
    calls = steps = 0
    last_key: Any = None
    for step in traj.steps:
        if step.source != "agent" or step.metrics is None:
            continue
        steps += 1
        key = _call_key(step)
        if key == last_key:
            continue
        last_key = key
        calls += 1
        m = step.metrics
        prompt += m.prompt_tokens or 0
        completion += m.completion_tokens or 0
        cached += m.cached_tokens or 0
        if m.cost_usd is not None:
            cost += m.cost_usd
            have_cost = True
    return TrajectoryUsage(prompt, completion, cached, round(cost, 10) if have_cost else None, calls, steps)


def _call_key(step: Step) -> Any:
    extra = step.extra or {}
    for key in _ID_KEYS:
        value = extra.get(key)
        if isinstance(value, str) and value:
            return ("id", value)
    m = step.metrics
    assert m is not None
    return ("metrics", m.model_dump_json(exclude={"prompt_token_ids", "completion_token_ids", "logprobs"}))
