"""Issue 17: thinking / reasoning items survive every wire format across turns.

The scripted provider (the one fake here) emits a signed thinking block with its tool call, and its next
turn says `expect: {reasoning_carried: true}`: the gateway must hand it the earlier thinking back, text and
signature unchanged, as Anthropic requires for extended thinking with tool use. The clients are the official
`anthropic` and `openai` SDKs, each sending back what it received, as a real agent loop does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from skillworks.gateway import read_calls

THINKING = "The user wants the row count; wc -l is the quickest way."
SCRIPT = [
    {"thinking": THINKING, "text": "", "tool_calls": [{"name": "shell", "arguments": {"command": "wc -l data.csv"}}]},
    {"text": "There are 41 rows.", "expect": {"reasoning_carried": True, "tool_result_contains": "41"}},
]
SHELL = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def _anthropic(channel: Any) -> anthropic.AsyncAnthropic:
    transport = httpx2.AsyncHTTPTransport(uds=str(channel.socket_path))
    http_client = anthropic.DefaultAsyncHttpxClient(transport=transport)
    return anthropic.AsyncAnthropic(base_url="http://gateway", api_key="k", max_retries=0, http_client=http_client)


async def _messages(client: anthropic.AsyncAnthropic, messages: list[Any], stream: bool) -> Any:
    kwargs: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": messages,
        "tools": [{"name": "shell", "description": "run a command", "input_schema": SHELL}],
    }
    if stream:
        async with client.messages.stream(**kwargs) as s:
            return await s.get_final_message()
    return await client.messages.create(**kwargs)


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_thinking_blocks_are_carried_with_their_signature(
    scripted_gateway: Any, write_script: Callable[[Any], Path], stream: bool
) -> None:
    _gw, channel = await scripted_gateway(write_script(SCRIPT))
    client = _anthropic(channel)
    messages: list[Any] = [{"role": "user", "content": "how many rows does data.csv have?"}]
    first = await _messages(client, messages, stream)
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    assert first.content[0].thinking == THINKING and first.content[0].signature.startswith("scripted-")
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    result = {"type": "tool_result", "tool_use_id": first.content[1].id, "content": "41 data.csv"}
    messages.append({"role": "user", "content": [result]})
    second = await _messages(client, messages, stream)
    await client.close()
    assert second.content[-1].text == "There are 41 rows."
    assert [c.reasoning_items for c in read_calls(channel.log_path)] == [1, 0]


async def test_a_client_that_drops_the_thinking_is_refused_as_a_provider_would(
    scripted_gateway: Any, write_script: Callable[[Any], Path]
) -> None:
    _gw, channel = await scripted_gateway(write_script(SCRIPT))
    client = _anthropic(channel)
    messages: list[Any] = [{"role": "user", "content": "how many rows does data.csv have?"}]
    first = await _messages(client, messages, False)
    tool_use = first.content[1]
    messages.append({"role": "assistant", "content": [tool_use.model_dump(exclude_none=True)]})  # thinking dropped
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "41"}]})
    with pytest.raises(anthropic.BadRequestError, match="signed thinking"):
        await _messages(client, messages, False)
    await client.close()


@pytest.mark.parametrize("stream", [False, True])
async def test_responses_reasoning_items_are_carried(
    scripted_gateway: Any, write_script: Callable[[Any], Path], stream: bool
) -> None:
    _gw, channel = await scripted_gateway(write_script(SCRIPT))
    client = openai.AsyncOpenAI(base_url=channel.tcp_base_url + "/v1", api_key="k", max_retries=0)
    tools: list[Any] = [{"type": "function", "name": "shell", "parameters": SHELL, "strict": False}]
    items: list[Any] = [{"type": "message", "role": "user", "content": "how many rows does data.csv have?"}]

    async def ask() -> tuple[list[dict[str, Any]], list[str]]:
        kwargs: dict[str, Any] = {"model": "gpt-5", "input": items, "tools": tools, "reasoning": {"effort": "high"}}
        if not stream:
            response = await client.responses.create(**kwargs, include=["reasoning.encrypted_content"])
            return [o.model_dump(exclude_none=True) for o in response.output], []
        kinds, final = [], None
        async for event in await client.responses.create(**kwargs, stream=True, store=False):
            kinds.append(event.type)
            final = event.response if event.type == "response.completed" else final
        assert final is not None
        return [o.model_dump(exclude_none=True) for o in final.output], kinds

    out, kinds = await ask()
    assert [o["type"] for o in out] == ["reasoning", "function_call"]
    assert out[0]["summary"][0]["text"] == THINKING and out[0]["encrypted_content"]
    if stream:
        assert "response.reasoning_summary_text.delta" in kinds
    items += [{k: v for k, v in o.items() if k != "status"} for o in out]  # what the client got, sent back
    items.append({"type": "function_call_output", "call_id": out[1]["call_id"], "output": "41 data.csv"})
    out, _ = await ask()
    await client.close()
    assert out[-1]["content"][0]["text"] == "There are 41 rows."


@pytest.mark.parametrize("stream", [False, True])
async def test_chat_completions_reasoning_is_carried(
    scripted_gateway: Any, write_script: Callable[[Any], Path], stream: bool
) -> None:
    _gw, channel = await scripted_gateway(write_script(SCRIPT))
    client = openai.AsyncOpenAI(base_url=channel.tcp_base_url + "/v1", api_key="k", max_retries=0)
    tools: list[Any] = [{"type": "function", "function": {"name": "shell", "parameters": SHELL}}]
    messages: list[Any] = [{"role": "user", "content": "how many rows does data.csv have?"}]

    async def ask() -> dict[str, Any]:
        if not stream:
            response = await client.chat.completions.create(model="m", messages=messages, tools=tools)
            return response.choices[0].message.model_dump(exclude_none=True)
        message: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": []}
        chunks = await client.chat.completions.create(model="m", messages=messages, tools=tools, stream=True)
        async for chunk in chunks:
            delta = chunk.choices[0].delta.model_dump(exclude_none=True) if chunk.choices else {}
            message["content"] += delta.get("content") or ""
            for key in ("reasoning_content", "thinking_blocks"):  # provider extensions the SDK passes through
                if key in delta:
                    message[key] = delta[key]
            for call in delta.get("tool_calls") or []:
                if call.get("id"):
                    message["tool_calls"].append({"id": call["id"], "type": "function", "function": call["function"]})
                else:
                    message["tool_calls"][call["index"]]["function"]["arguments"] += call["function"]["arguments"]
        return message

    first = await ask()
    assert first["reasoning_content"] == THINKING and first["thinking_blocks"][0]["signature"]
    messages.append(first)
    call_id = first["tool_calls"][0]["id"]
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {"command": "wc -l data.csv"}
    messages.append({"role": "tool", "tool_call_id": call_id, "content": "41 data.csv"})
    second = await ask()
    await client.close()
    assert second["content"] == "There are 41 rows."
