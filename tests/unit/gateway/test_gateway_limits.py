"""The per-call limits (gateway/limits.py) on the gateway's internal request; over HTTP in every wire format:
tests/integration/gateway/test_gateway_limits.py."""

from __future__ import annotations

import pytest

from skillworks.gateway import CallLimits
from skillworks.gateway.internal import Message, ModelRequest
from skillworks.gateway.limits import clamp_request


def _request(max_tokens: int | None = None, effort: str | None = None) -> ModelRequest:
    return ModelRequest(messages=[Message("user", "hi")], max_tokens=max_tokens, reasoning_effort=effort)


@pytest.mark.parametrize(
    ("asked", "cap", "sent"),
    [("max", "xhigh", "xhigh"), ("xhigh", "high", "high"), ("HIGH", "high", "HIGH"), ("minimal", "low", "minimal")],
)
def test_an_effort_above_the_limit_is_lowered_and_one_at_or_below_it_kept(asked: str, cap: str, sent: str) -> None:
    request = _request(effort=asked)
    clamps = clamp_request(request, CallLimits(max_reasoning_effort=cap))
    assert request.reasoning_effort == sent
    assert [c.field for c in clamps] == (["reasoning_effort"] if sent != asked else [])


def test_a_request_asking_no_reasoning_is_left_so() -> None:
    request = _request(max_tokens=10)
    assert clamp_request(request, CallLimits(max_reasoning_effort="low")) == []
    assert request.reasoning_effort is None  # setting one would turn thinking on


def test_the_smaller_of_the_output_limit_and_the_budget_left_wins_and_never_goes_below_1() -> None:
    request = _request(max_tokens=5000)
    (clamp,) = clamp_request(request, CallLimits(max_output_tokens=4000), tokens_left=300)
    assert (request.max_tokens, clamp.limit) == (300, "--max-trial-tokens")
    request = _request(max_tokens=5000)
    clamp_request(request, CallLimits(), tokens_left=-20)  # the budget is spent: the gateway refuses the next
    assert request.max_tokens == 1


def test_limits_round_trip_through_the_plan_and_bad_ones_are_refused() -> None:
    limits = CallLimits(max_output_tokens=100, max_reasoning_effort="medium")
    assert CallLimits.from_plan({"call_limits": limits.to_plan()}) == limits
    assert CallLimits.from_plan({}) == CallLimits()
    with pytest.raises(ValueError, match="unknown reasoning effort 'turbo'"):
        CallLimits(max_reasoning_effort="turbo")
    with pytest.raises(ValueError, match="max_output_tokens must be >= 1"):
        CallLimits(max_output_tokens=0)
