"""The LiteLLM backend against a local fake OpenAI-compatible server on 127.0.0.1 (standing in for
Ollama / vLLM: `--model openai/<name> --api-base http://127.0.0.1:PORT/v1`). The fake server is the
only faked part; LiteLLM, the gateway and the client SDKs are real. The gateway streams from the
provider (issue 17), so the fake answers in SSE chunks as such a server does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from aiohttp import web

from skillworks.gateway import Gateway, RetryPolicy, read_calls, usage_totals

from ._fake_streams import openai_chunks, send_stream

RETRY = RetryPolicy(max_attempts=3, base_delay_sec=0.01, max_delay_sec=0.5, timeout_sec=20)


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> raw text
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeProvider:
    base_url: str
    replies: list[Reply]
    requests: list[dict[str, Any]]
    pause: float = 0.0  # seconds a streamed answer holds back after its first token


def completion(text: str | None, calls: list[dict[str, Any]] | None = None, **usage: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1,
        "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100, **usage},
    }


@pytest.fixture
async def fake_provider() -> AsyncIterator[FakeProvider]:
    state = FakeProvider("", [], [])

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        state.requests.append(body)
        reply = state.replies.pop(0) if state.replies else Reply(body=completion("default"))
        if body.get("stream") and reply.status == 200 and isinstance(reply.body, dict):
            return await send_stream(request, openai_chunks(reply.body), state.pause)
        if isinstance(reply.body, str):
            return web.Response(status=reply.status, text=reply.body, headers=reply.headers)
        return web.json_response(reply.body, status=reply.status, headers=reply.headers)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.base_url = f"http://127.0.0.1:{port}/v1"
    yield state
    await runner.cleanup()


async def _gateway(model: str, fake: FakeProvider, tmp_path: Path) -> tuple[Gateway, Any]:
    gw = Gateway(model, api_base=fake.base_url, retry=RETRY, tcp_port=0)
    await gw.start()
    channel = await gw.open_trial("t", tmp_path / "gateway.jsonl")
    return gw, channel


async def test_anthropic_client_tool_round_trip_through_litellm(fake_provider: FakeProvider, tmp_path: Path) -> None:
    call = {"id": "call_9", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
    fake_provider.replies = [
        Reply(body=completion(None, [call], prompt_tokens_details={"cached_tokens": 600})),
        Reply(body=completion("two files")),
    ]
    gw, channel = await _gateway("openai/whatever", fake_provider, tmp_path)
    try:
        client = anthropic.AsyncAnthropic(base_url=channel.tcp_base_url, api_key="k", max_retries=0)
        tools: Any = [{"name": "bash", "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]
        messages: Any = [{"role": "user", "content": "list files"}]
        first = await client.messages.create(model="claude-x", max_tokens=50, messages=messages, tools=tools)
        assert first.stop_reason == "tool_use" and first.content[-1].input == {"cmd": "ls"}  # type: ignore[union-attr]
        assert (first.usage.input_tokens, first.usage.cache_read_input_tokens) == (400, 600)
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_9", "content": "a b"}]},
        ]
        async with client.messages.stream(model="claude-x", max_tokens=50, messages=messages, tools=tools) as s:
            second = await s.get_final_message()
        assert second.content[0].text == "two files"  # type: ignore[union-attr]
    finally:
        await gw.stop()
    # what the local server received: OpenAI format with the configured model, tools and tool result
    sent = fake_provider.requests
    assert sent[0]["model"] == "whatever" and sent[0]["max_tokens"] == 50
    assert sent[0]["tools"][0]["function"]["name"] == "bash"
    assert sent[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_9", "content": "a b"}
    assert sent[1]["messages"][-2]["tool_calls"][0]["function"]["name"] == "bash"
    records = read_calls(channel.log_path)
    assert [(r.model, r.client_model, r.provider) for r in records] == [("openai/whatever", "claude-x", "openai")] * 2
    totals = usage_totals(channel.log_path)
    assert (totals.input_tokens, totals.output_tokens, totals.cached_tokens) == (2000, 200, 600)
    assert totals.cost_source == "none" and totals.cost_usd == 0.0  # a local model has no price


async def test_cost_from_litellm_price_table(fake_provider: FakeProvider, tmp_path: Path) -> None:
    fake_provider.replies = [Reply(body=completion("hi"))]
    gw, channel = await _gateway("openai/gpt-4o-mini", fake_provider, tmp_path)
    try:
        client = openai.AsyncOpenAI(base_url=f"{channel.tcp_base_url}/v1", api_key="k", max_retries=0)
        await client.chat.completions.create(model="anything", messages=[{"role": "user", "content": "hi"}])
    finally:
        await gw.stop()
    [call] = read_calls(channel.log_path)
    assert call.cost_source == "litellm_price_table"
    assert call.cost_usd == pytest.approx(1000 * 0.15e-6 + 100 * 0.6e-6)  # gpt-4o-mini list price


async def test_cost_reported_by_provider_wins(fake_provider: FakeProvider, tmp_path: Path) -> None:
    fake_provider.replies = [Reply(body=completion("hi", cost=0.0123))]
    gw, channel = await _gateway("openai/gpt-4o-mini", fake_provider, tmp_path)
    try:
        client = openai.AsyncOpenAI(base_url=f"{channel.tcp_base_url}/v1", api_key="k", max_retries=0)
        await client.responses.create(model="x", input="hi")
    finally:
        await gw.stop()
    [call] = read_calls(channel.log_path)
    assert (call.cost_source, call.cost_usd) == ("provider", pytest.approx(0.0123))


@pytest.mark.parametrize(
    ("replies", "error_class", "attempts", "status"),
    [
        ([Reply(429, {"error": {"message": "slow down"}}, {"retry-after": "0.05"})], None, 2, 200),
        ([Reply(503, {"error": {"message": "overloaded"}})] * 3, "server_error", 3, 503),
        ([Reply(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})], "auth", 1, 401),
        (
            [Reply(400, {"error": {"message": "maximum context length exceeded", "code": "context_length_exceeded"}})],
            "context_overflow",
            1,
            400,
        ),
        ([Reply(400, {"error": {"message": "bad param"}})], "bad_request", 1, 400),
        ([Reply(200, "this is not json")], "malformed_response", 1, 502),
        ([Reply(200, {"object": "chat.completion", "choices": []})], "malformed_response", 1, 502),
    ],
    ids=["429-then-ok", "503-persistent", "401", "context-overflow", "400", "not-json", "no-choices"],
)
async def test_provider_errors_are_retried_and_classified(
    fake_provider: FakeProvider,
    tmp_path: Path,
    replies: list[Reply],
    error_class: str | None,
    attempts: int,
    status: int,
) -> None:
    fake_provider.replies = [*replies, Reply(body=completion("recovered"))]
    gw, channel = await _gateway("openai/whatever", fake_provider, tmp_path)
    try:
        client = openai.AsyncOpenAI(base_url=f"{channel.tcp_base_url}/v1", api_key="k", max_retries=0)
        if error_class is None:
            r = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            assert r.choices[0].message.content == "recovered"
        else:
            with pytest.raises(openai.APIStatusError) as info:
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            assert info.value.status_code == status
            assert json.loads(info.value.response.text)["error"]["code"] == error_class
    finally:
        await gw.stop()
    [call] = read_calls(channel.log_path)
    assert (call.error_class, call.attempts, call.http_status) == (error_class, attempts, status)
    assert len(fake_provider.requests) == attempts


async def test_upstream_is_streamed_and_time_to_first_token_recorded(
    fake_provider: FakeProvider, tmp_path: Path
) -> None:
    """Issue 17: the provider's first token arrives long before its last; the record tells them apart."""
    fake_provider.pause = 0.5
    thinking = [{"type": "thinking", "thinking": "count them", "signature": "sig-up-1"}]
    first = completion("Counting.", reasoning_content="count them", thinking_blocks=thinking)
    first["choices"][0]["message"].update(first.pop("usage_extra", {}))
    fake_provider.replies = [Reply(body=_with_reasoning(first)), Reply(body=completion("41"))]
    gw, channel = await _gateway("openai/whatever", fake_provider, tmp_path)
    try:
        client = anthropic.AsyncAnthropic(base_url=channel.tcp_base_url, api_key="k", max_retries=0)
        messages: Any = [{"role": "user", "content": "count"}]
        answer = await client.messages.create(model="c", max_tokens=50, messages=messages)
        assert [b.type for b in answer.content] == ["thinking", "text"]
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]},
            {"role": "user", "content": "go on"},
        ]
        await client.messages.create(model="c", max_tokens=50, messages=messages)
    finally:
        await gw.stop()
    assert all(r["stream"] is True for r in fake_provider.requests)
    [call, _] = read_calls(channel.log_path)
    assert call.ttft_ms is not None and call.latency_ms - call.ttft_ms >= 400, (call.ttft_ms, call.latency_ms)
    assert call.reasoning_items == 1 and call.output_tokens == 100
    # the signed thinking went back to the provider on the next turn
    assistant = fake_provider.requests[1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert json.dumps(thinking)[1:-1] in json.dumps(assistant) or assistant.get("thinking_blocks") == thinking, (
        assistant
    )


def _with_reasoning(body: dict[str, Any]) -> dict[str, Any]:
    """completion() puts extra keys in usage; move the reasoning fields onto the message."""
    usage = body["usage"]
    message = body["choices"][0]["message"]
    for key in ("reasoning_content", "thinking_blocks"):
        message[key] = usage.pop(key)
    return body
