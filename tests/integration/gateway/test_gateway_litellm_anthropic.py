"""The LiteLLM backend speaking to an Anthropic-format provider: a local fake of the Anthropic
Messages API on 127.0.0.1 (the only faked part; it streams, as the gateway asks it to). Checks that the client's prompt-cache hints reach
the provider, that cache reads are accounted, and that cost comes from LiteLLM's price table."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from aiohttp import web

from skillworks.gateway import Gateway, RetryPolicy, read_calls, usage_totals

from ._fake_streams import anthropic_events, send_stream


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    async def messages(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        thinking = [{"type": "thinking", "thinking": "The skill says how.", "signature": "sig-anthropic-1"}]
        answer = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [
                *(thinking if body.get("thinking") else []),
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "SKILL.md"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 100,
                "output_tokens": 50,
                "cache_read_input_tokens": 2000,
                "cache_creation_input_tokens": 0,
            },
        }
        if body.get("stream"):
            return await send_stream(request, anthropic_events(answer))
        return web.json_response(answer)

    app = web.Application()
    app.router.add_post("/v1/messages", messages)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", seen
    await runner.cleanup()


async def test_claude_code_style_call_through_litellm_anthropic(
    fake_anthropic: tuple[str, list[dict[str, Any]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api_base, seen = fake_anthropic
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    gw = Gateway("anthropic/claude-haiku-4-5", api_base=api_base, retry=RetryPolicy(max_attempts=1), tcp_port=0)
    await gw.start()
    try:
        channel = await gw.open_trial("t", tmp_path / "gateway.jsonl")
        client = anthropic.AsyncAnthropic(base_url=channel.tcp_base_url, api_key="k", max_retries=0)
        async with client.messages.stream(
            model="claude-opus-5-5",
            max_tokens=1000,
            system=[{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "read the skill", "cache_control": {"type": "ephemeral"}}],
                }
            ],
            tools=[{"name": "Read", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
        ) as stream:
            message = await stream.get_final_message()
    finally:
        await gw.stop()
    assert message.content[1].type == "tool_use" and message.content[1].input == {"path": "SKILL.md"}
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (100, 2000)
    [sent] = seen
    assert sent["model"] == "claude-haiku-4-5"
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}  # the hint reached the provider
    assert sent["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    [call] = read_calls(tmp_path / "gateway.jsonl")
    assert (call.input_tokens, call.cached_tokens, call.output_tokens) == (2100, 2000, 50)
    assert call.cost_source == "litellm_price_table"
    # claude-haiku-4-5 list prices: $1/M input, $0.10/M cache read, $5/M output
    assert call.cost_usd == pytest.approx(100 * 1e-6 + 2000 * 1e-7 + 50 * 5e-6)
    assert usage_totals(tmp_path / "gateway.jsonl").cost_usd == pytest.approx(call.cost_usd)


async def test_thinking_blocks_are_carried_back_to_the_provider_after_tool_use(
    fake_anthropic: tuple[str, list[dict[str, Any]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: Anthropic rejects extended thinking with a tool-use history that lost its signed thinking
    blocks; the gateway carries them (client -> gateway -> LiteLLM -> provider), so thinking stays on."""
    api_base, seen = fake_anthropic
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    gw = Gateway("anthropic/claude-sonnet-4-5", api_base=api_base, retry=RetryPolicy(max_attempts=1), tcp_port=0)
    await gw.start()
    try:
        channel = await gw.open_trial("t", tmp_path / "gateway.jsonl")
        client = anthropic.AsyncAnthropic(base_url=channel.tcp_base_url, api_key="k", max_retries=0)
        tools: Any = [{"name": "Read", "input_schema": {"type": "object", "properties": {}}}]
        thinking: Any = {"type": "enabled", "budget_tokens": 2048}
        messages: Any = [{"role": "user", "content": "go"}]
        first = await client.messages.create(
            model="c", max_tokens=8000, thinking=thinking, messages=messages, tools=tools
        )
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "body"}]},
        ]
        await client.messages.create(model="c", max_tokens=8000, thinking=thinking, messages=messages, tools=tools)
    finally:
        await gw.stop()
    assert [b.type for b in first.content] == ["thinking", "text", "tool_use"]
    assert "thinking" in seen[0] and "thinking" in seen[1]  # not dropped for the tool-use turn
    assistant = seen[1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "The skill says how.",
        "signature": "sig-anthropic-1",
    }
    calls = read_calls(tmp_path / "gateway.jsonl")
    assert [c.status for c in calls] == ["ok", "ok"] and [c.reasoning_items for c in calls] == [1, 1]
    assert all(c.ttft_ms is not None and c.ttft_ms <= c.latency_ms for c in calls)
