"""Provider failure injection and script errors, seen through real SDK clients. The provider is the
scripted one (a fake by design): it injects 429/500, malformed answers and slow answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from skillworks.gateway import RetryPolicy, read_calls

USER = [{"role": "user", "content": "hello there"}]
BASH = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]


def _oa(channel: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=channel.tcp_base_url + "/v1", api_key="k", max_retries=0)


async def test_429_then_success_is_retried(scripted_gateway: Any, write_script: Callable[[Any], Path]) -> None:
    script = write_script([{"text": "ok", "fail": {"status": 429, "times": 1, "retry_after": 0.01}}])
    gw, channel = await scripted_gateway(script)
    r = await _oa(channel).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert r.choices[0].message.content == "ok"
    [call] = read_calls(channel.log_path)
    assert (call.status, call.attempts, call.error_class) == ("ok", 2, None)
    assert gw.trial_error(channel.trial_id) is None and gw.trial_errors(channel.trial_id) == []


async def test_persistent_500_is_classified_server_error(
    scripted_gateway: Any, write_script: Callable[[Any], Path]
) -> None:
    gw, channel = await scripted_gateway(write_script([{"text": "never", "fail": {"status": 500, "times": 99}}]))
    with pytest.raises(openai.InternalServerError) as info:
        await _oa(channel).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert info.value.status_code == 500
    [call] = read_calls(channel.log_path)
    assert (call.status, call.error_class, call.attempts, call.http_status) == ("error", "server_error", 3, 500)
    await gw.close_trial(channel.trial_id)  # the summary survives closing the trial
    error = gw.trial_error(channel.trial_id)
    assert error is not None and error.category == "server_error" and error.phase == "agent"
    assert "3 attempt(s)" in error.message
    assert [c.error_class for c in gw.trial_errors(channel.trial_id)] == ["server_error"]


async def test_persistent_429_reaches_anthropic_client_as_rate_limit_error(
    scripted_gateway: Any, write_script: Callable[[Any], Path]
) -> None:
    _gw, channel = await scripted_gateway(write_script([{"text": "x", "fail": {"status": 429, "times": 99}}]))
    client = anthropic.AsyncAnthropic(base_url=channel.tcp_base_url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as info:
        await client.messages.create(model="c", max_tokens=10, messages=USER)  # type: ignore[arg-type]
    assert info.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    [call] = read_calls(channel.log_path)
    assert (call.error_class, call.attempts, call.http_status) == ("rate_limit", 3, 429)


async def test_malformed_answer_is_classified(scripted_gateway: Any, write_script: Callable[[Any], Path]) -> None:
    gw, channel = await scripted_gateway(write_script([{"malformed": True}]))
    with pytest.raises(openai.APIStatusError) as info:
        await _oa(channel).responses.create(model="m", input="hi")
    assert info.value.status_code == 502 and "malformed" in str(info.value)
    [call] = read_calls(channel.log_path)
    assert (call.error_class, call.attempts, call.wire) == ("malformed_response", 1, "openai_responses")
    error = gw.trial_error(channel.trial_id)
    assert error is not None and error.category == "malformed_response"


async def test_slow_provider_is_a_timeout(scripted_gateway: Any, write_script: Callable[[Any], Path]) -> None:
    retry = RetryPolicy(max_attempts=2, base_delay_sec=0.01, timeout_sec=0.2)
    _gw, channel = await scripted_gateway(write_script([{"text": "late", "delay_sec": 2}]), retry=retry)
    with pytest.raises(openai.APIStatusError) as info:
        await _oa(channel).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert info.value.status_code == 504
    [call] = read_calls(channel.log_path)
    assert (call.error_class, call.attempts) == ("timeout", 2)
    assert call.latency_ms >= 400


async def test_script_exhausted_message(scripted_gateway: Any, write_script: Callable[[Any], Path]) -> None:
    gw, channel = await scripted_gateway(write_script([{"text": "only turn"}]), trial_id="t-ex")
    client = _oa(channel)
    await client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError) as info:
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "and again"}])
    msg = str(info.value)
    assert "script exhausted: trial 't-ex' made model request 2 but the script has 1 turn(s)" in msg
    assert "'and again'" in msg
    error = gw.trial_error(channel.trial_id)
    assert error is not None and error.category == "script_exhausted"


async def test_script_mismatch_names_turn_expected_and_got(
    scripted_gateway: Any, write_script: Callable[[Any], Path]
) -> None:
    script = write_script([{"text": "a"}, {"text": "b", "expect": {"last_user_contains": "run the tests"}}])
    gw, channel = await scripted_gateway(script)
    client = _oa(channel)
    await client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError) as info:
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "write docs"}])
    assert (
        "script turn 2 of 2 (trial 'trial-1') expected the last user message to contain "
        "'run the tests', got: 'write docs'"
    ) in str(info.value)
    # a later successful call does not hide a script error
    error = gw.trial_error(channel.trial_id)
    assert error is not None and error.category == "script_mismatch"


async def test_script_tool_must_be_offered(scripted_gateway: Any, write_script: Callable[[Any], Path]) -> None:
    _gw, channel = await scripted_gateway(write_script([{"tool_calls": [{"name": "edit", "arguments": {}}]}]))
    with pytest.raises(openai.BadRequestError) as info:
        await _oa(channel).chat.completions.create(model="m", messages=USER, tools=BASH)  # type: ignore[arg-type]
    assert "script turn 1 of 1 (trial 'trial-1') calls tool 'edit' but the client offered: bash" in str(info.value)
    [call] = read_calls(channel.log_path)
    assert call.error_class == "script_mismatch" and call.attempts == 1


async def test_trials_by_task_get_fresh_cursors_and_own_logs(
    tmp_path: Path, write_script: Callable[[Any], Path]
) -> None:
    from skillworks.gateway import Gateway

    script = write_script(
        {"by_task": {"alpha": [{"text": "alpha-1"}, {"text": "alpha-2"}]}, "default": [{"text": "default-1"}]}
    )
    async with Gateway(f"scripted/{script}", tcp_port=0) as gw:
        a1 = await gw.open_trial("a1", tmp_path / "a1.jsonl", task_id="alpha")
        a2 = await gw.open_trial("a2", tmp_path / "a2.jsonl", task_id="alpha")
        b1 = await gw.open_trial("b1", tmp_path / "b1.jsonl", task_id="beta")
        assert len({a1.socket_path, a2.socket_path, b1.socket_path}) == 3
        got = []
        for ch in (a1, a1, a2, b1):
            r = await _oa(ch).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
            got.append(r.choices[0].message.content)
        assert got == ["alpha-1", "alpha-2", "alpha-1", "default-1"]
        assert [len(read_calls(tmp_path / f"{t}.jsonl")) for t in ("a1", "a2", "b1")] == [2, 1, 1]
        await gw.close_trial("a1")
        assert not a1.socket_path.exists()
    assert not b1.socket_path.exists()


async def test_closing_a_trial_cancels_and_records_an_in_flight_call(
    scripted_gateway: Any, write_script: Callable[[Any], Path], uds_client: Any
) -> None:
    import asyncio
    import time

    import httpx

    retry = RetryPolicy(timeout_sec=60)
    gw, channel = await scripted_gateway(write_script([{"text": "late", "delay_sec": 30}]), retry=retry)
    client = uds_client(channel)
    pending = asyncio.create_task(
        client.post("http://gw/v1/chat/completions", json={"model": "m", "messages": USER}, timeout=60)
    )
    await asyncio.sleep(0.3)
    t0 = time.monotonic()
    await gw.close_trial(channel.trial_id)
    assert time.monotonic() - t0 < 10
    with pytest.raises(httpx.HTTPError):
        await pending
    await client.aclose()
    [call] = read_calls(channel.log_path)
    assert (call.status, call.error_class) == ("error", "cancelled")


async def test_an_in_flight_call_cut_off_by_the_trials_end_counts_the_tokens_it_sent(
    scripted_gateway: Any, write_script: Callable[[Any], Path], uds_client: Any
) -> None:
    """Issue 30: a 300k-token prompt still in flight when the trial ends was recorded as 0 tokens. It is
    recorded cancelled with the input tokens counted from the request, and the trial's usage has them
    (scripted provider: the one test double; real HTTP over the trial's socket)."""
    import asyncio

    import httpx

    from skillworks.gateway import usage_totals

    prompt = "x" * 1_200_000  # 300,000 tokens at the gateway's 4 characters a token
    gw, channel = await scripted_gateway(
        write_script([{"text": "late", "delay_sec": 30}]), retry=RetryPolicy(timeout_sec=60)
    )
    client = uds_client(channel)
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    pending = asyncio.create_task(client.post("http://gw/v1/chat/completions", json=body, timeout=60))
    await asyncio.sleep(0.5)
    await gw.close_trial(channel.trial_id)
    with pytest.raises(httpx.HTTPError):
        await pending
    await client.aclose()
    [call] = read_calls(channel.log_path)
    assert (call.status, call.error_class) == ("error", "cancelled")
    assert call.input_tokens == 300_000 and call.input_tokens_estimated
    assert call.output_tokens == 0
    usage = usage_totals(channel.log_path)
    assert (usage.input_tokens, usage.calls) == (300_000, 1)
