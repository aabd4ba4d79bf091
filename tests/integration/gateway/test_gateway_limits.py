"""What an agent may ask the model for is capped at the run's limits: over real HTTP to the gateway, a request
asking for more output tokens or more reasoning than the run allows reaches the provider lowered, in every wire
format, and the lowering is recorded on the call. The provider is the one test double (the `scripted` provider:
its turns' `expect` checks what reached it, and a mismatch fails the call); the HTTP, the gateway and the
wire-format converters are real."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillworks.gateway import CallLimits, Gateway, read_calls

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "tasks_sandbox" / "selfgen-sum"

LIMITS = CallLimits(max_output_tokens=2048, max_reasoning_effort="low")
CAPPED = {"text": "ok", "expect": {"max_tokens": 2048, "reasoning_effort": "low"}}
_TOOL = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}

# one request per wire format, each asking for far more than LIMITS allows
GREEDY: dict[str, tuple[str, dict[str, Any]]] = {
    "openai_chat": (
        "/v1/chat/completions",
        {
            "model": "gpt-x",
            "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": 100_000,
            "reasoning_effort": "high",
        },
    ),
    "openai_responses": (
        "/v1/responses",
        {"model": "gpt-x", "input": "hi", "max_output_tokens": 64_000, "reasoning": {"effort": "xhigh"}},
    ),
    "anthropic_messages": (
        "/v1/messages",
        {
            "model": "claude-x",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 32_000,
            "thinking": {"type": "enabled", "budget_tokens": 30_000},
        },
    ),
    "gemini_generate": (
        "/v1beta/models/gemini-x:generateContent",
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"maxOutputTokens": 65_536, "thinkingConfig": {"thinkingBudget": 24_576}},
        },
    ),
}
ASKED = {
    "openai_chat": (100_000, "high"),
    "openai_responses": (64_000, "xhigh"),
    "anthropic_messages": (32_000, "high"),  # a 30k thinking budget is effort "high"
    "gemini_generate": (65_536, "high"),
}

Start = Callable[..., Awaitable[tuple[Gateway, str]]]


def skillworks(*args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, as a user runs it."""
    cmd = [sys.executable, "-m", "skillworks.cli.main", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
async def start(tmp_path: Path, write_script: Callable[[Any], Path]) -> AsyncIterator[Start]:
    """A scripted gateway with TCP enabled and one open trial: (gateway, the trial's base URL)."""
    started: list[Gateway] = []

    async def make(turns: list[Any], **gateway: Any) -> tuple[Gateway, str]:
        gw = Gateway(f"scripted/{write_script(turns)}", tcp_port=0, **gateway)
        await gw.start()
        started.append(gw)
        channel = await gw.open_trial("t1", tmp_path / "t1" / "gateway.jsonl")
        assert channel.tcp_base_url is not None
        return gw, channel.tcp_base_url

    yield make
    for gw in started:
        await gw.stop()


@pytest.mark.parametrize("wire", sorted(GREEDY))
async def test_a_greedy_request_reaches_the_provider_capped_at_the_runs_limits(
    start: Start, tmp_path: Path, wire: str
) -> None:
    _gw, base = await start([CAPPED], call_limits=LIMITS)
    path, body = GREEDY[wire]
    async with httpx.AsyncClient() as client:
        r = await client.post(base + path, json=body)
    assert r.status_code == 200, r.text  # the scripted provider's expect held: it got 2048 tokens, effort low
    (call,) = read_calls(tmp_path / "t1" / "gateway.jsonl")
    assert call.wire == wire and call.status == "ok"
    tokens, effort = ASKED[wire]
    assert [(c.field, c.asked, c.sent, c.limit) for c in call.clamped] == [
        ("max_tokens", tokens, 2048, "--max-output-tokens"),
        ("reasoning_effort", effort, "low", "--max-reasoning-effort"),
    ]


async def test_without_limits_the_same_request_reaches_the_provider_as_asked(start: Start, tmp_path: Path) -> None:
    """The control: the provider's check above can fail (it does when the gateway has no limits)."""
    _gw, base = await start([CAPPED])
    path, body = GREEDY["openai_chat"]
    async with httpx.AsyncClient() as client:
        r = await client.post(base + path, json=body)
    assert r.status_code == 400
    assert "expected max_tokens 2048, the provider got 100000" in r.text
    (call,) = read_calls(tmp_path / "t1" / "gateway.jsonl")
    assert call.error_class == "script_mismatch" and call.clamped == []


async def test_a_request_within_the_limits_is_not_touched_and_one_with_none_gets_the_limit(
    start: Start, tmp_path: Path
) -> None:
    turns = [
        {"text": "a", "expect": {"max_tokens": 512, "reasoning_effort": "minimal"}},
        {"text": "b", "expect": {"max_tokens": 2048}},
    ]
    _gw, base = await start(turns, call_limits=LIMITS)
    msgs = [{"role": "user", "content": "hi"}]
    async with httpx.AsyncClient() as client:
        modest = {"model": "m", "messages": msgs, "max_tokens": 512, "reasoning_effort": "minimal", "tools": [_TOOL]}
        assert (await client.post(base + "/v1/chat/completions", json=modest)).status_code == 200
        unset = {"model": "m", "messages": msgs}  # no output limit: the provider's default could be the model's max
        assert (await client.post(base + "/v1/chat/completions", json=unset)).status_code == 200
    first, second = read_calls(tmp_path / "t1" / "gateway.jsonl")
    assert first.clamped == []
    assert [(c.field, c.asked, c.sent) for c in second.clamped] == [("max_tokens", None, 2048)]


async def test_an_unknown_effort_is_taken_as_above_the_limit(start: Start, tmp_path: Path) -> None:
    _gw, base = await start([{"text": "ok", "expect": {"reasoning_effort": "low"}}], call_limits=LIMITS)
    body = {"model": "m", "input": "hi", "reasoning": {"effort": "ultra-max-please"}}
    async with httpx.AsyncClient() as client:
        assert (await client.post(base + "/v1/responses", json=body)).status_code == 200
    (call,) = read_calls(tmp_path / "t1" / "gateway.jsonl")
    assert [(c.field, c.asked, c.sent) for c in call.clamped][-1] == ("reasoning_effort", "ultra-max-please", "low")


async def test_the_output_limit_never_exceeds_what_the_trials_token_budget_leaves(start: Start, tmp_path: Path) -> None:
    # budget 1000: the first answer uses 600 (in + out); the second request's prompt is estimated at 1 token
    # ("hi" is 2 characters), so the provider may be asked for at most 1000 - 600 - 1 = 399 output tokens
    turns = [
        {"text": "a", "usage": {"input_tokens": 500, "output_tokens": 100}, "expect": {"max_tokens": 999}},
        {"text": "b", "expect": {"max_tokens": 399}},
    ]
    _gw, base = await start(turns, trial_token_budget=1000)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 100_000}
    async with httpx.AsyncClient() as client:
        for _ in range(2):
            r = await client.post(base + "/v1/chat/completions", json=body)
            assert r.status_code == 200, r.text
    calls = read_calls(tmp_path / "t1" / "gateway.jsonl")
    assert [(c.clamped[0].sent, c.clamped[0].limit) for c in calls] == [
        (999, "--max-trial-tokens"),
        (399, "--max-trial-tokens"),
    ]


@pytest.mark.bwrap
@pytest.mark.parametrize("executor", ["local", pytest.param("ray", marks=pytest.mark.slow)])
def test_skillworks_run_caps_the_builtin_agents_requests(tmp_path: Path, executor: str) -> None:
    """Through `skillworks run`: the builtin agent asks for 4096 tokens at effort high; the run allows 1000 at
    low, and that is what the provider got (the script's expect), recorded in the trial's gateway.jsonl; on Ray
    the node's gateway caps the same way."""
    script = tmp_path / "s.yaml"
    script.write_text('- {text: "done", expect: {max_tokens: 1000, reasoning_effort: low}}\n')
    runs = tmp_path / "runs"
    r = skillworks(
        "run",
        str(TASK),
        "--agent",
        "builtin",
        "--model",
        f"scripted/{script}",
        "--agent-option",
        "reasoning_effort=high",
        "--conditions",
        "none",
        "--max-output-tokens",
        "1000",
        "--max-reasoning-effort",
        "low",
        "--out",
        str(runs),
        "--run-id",
        "r",
        "--executor",
        executor,
    )
    (log,) = (runs / "r" / "trials").glob("*/gateway.jsonl")
    (call,) = read_calls(log)
    assert call.status == "ok", (call.error_message, r.stderr[-2000:])
    assert [(c.field, c.asked, c.sent) for c in call.clamped] == [
        ("max_tokens", 4096, 1000),
        ("reasoning_effort", "high", "low"),
    ]


def test_a_bad_effort_limit_is_a_one_line_error(tmp_path: Path) -> None:
    r = skillworks(
        "run",
        str(TASK),
        "--max-reasoning-effort",
        "extreme",
        "--out",
        str(tmp_path / "runs"),
    )
    assert r.returncode != 0
    assert "unknown reasoning effort 'extreme'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()
