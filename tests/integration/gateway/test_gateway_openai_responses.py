"""OpenAI Responses (Codex CLI's wire format) through the gateway, driven by the official `openai`
SDK. The model is the scripted provider (a fake, by design)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from skillworks.gateway import read_calls, usage_totals

TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "shell",
        "description": "run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}},
        "strict": False,
    },
    {"type": "custom", "name": "apply_patch", "description": "apply a patch (freeform)"},
]
SCRIPT = [
    {
        "text": "Listing.",
        "tool_calls": [{"name": "shell", "arguments": {"command": ["ls"]}}],
        "expect": {"last_user_contains": "what files"},
        "usage": {"input_tokens": 500, "output_tokens": 20, "cached_tokens": 300},
    },
    {
        "tool_calls": [{"name": "apply_patch", "arguments": {"input": "*** Begin Patch\n*** End Patch"}}],
        "expect": {"tool_result_contains": "notes.md"},
        "usage": {"input_tokens": 600, "output_tokens": 25},
    },
    {"text": "There is one file: notes.md.", "expect": {"tool_result_contains": "Done!"}},
]


async def _ask(client: openai.AsyncOpenAI, items: list[Any], stream: bool) -> tuple[list[Any], Any, list[str]]:
    """One response; returns (output items as dicts, usage, SSE event types)."""
    kwargs: dict[str, Any] = {"model": "gpt-5-codex", "instructions": "You are Codex.", "input": items, "tools": TOOLS}
    if not stream:
        r = await client.responses.create(**kwargs, reasoning={"effort": "high"})
        return [o.model_dump() for o in r.output], r.usage, []
    kinds: list[str] = []
    final = None
    s = await client.responses.create(**kwargs, stream=True, store=False)
    async for event in s:
        kinds.append(event.type)
        if event.type == "response.completed":
            final = event.response
    assert final is not None
    return [o.model_dump() for o in final.output], final.usage, kinds


@pytest.mark.parametrize("stream", [False, True])
async def test_function_and_custom_tool_round_trip(
    scripted_gateway: Any, write_script: Callable[[Any], Path], stream: bool
) -> None:
    _gw, channel = await scripted_gateway(write_script(SCRIPT))
    assert channel.tcp_base_url is not None
    client = openai.AsyncOpenAI(base_url=channel.tcp_base_url + "/v1", api_key="k", max_retries=0)
    items: list[Any] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what files are here?"}]}
    ]
    out, usage, kinds = await _ask(client, items, stream)
    assert [o["type"] for o in out] == ["message", "function_call"]
    assert out[0]["content"][0]["text"] == "Listing."
    assert json.loads(out[1]["arguments"]) == {"command": ["ls"]} and out[1]["name"] == "shell"
    assert usage.input_tokens == 500 and usage.input_tokens_details.cached_tokens == 300
    if stream:
        for kind in (
            "response.created",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_item.done",
            "response.function_call_arguments.delta",
            "response.completed",
        ):
            assert kind in kinds
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    items += [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Listing."}]},
        {"type": "function_call", "call_id": out[1]["call_id"], "name": "shell", "arguments": out[1]["arguments"]},
        {"type": "function_call_output", "call_id": out[1]["call_id"], "output": "notes.md\n"},
    ]
    out, usage, _ = await _ask(client, items, stream)
    assert [o["type"] for o in out] == ["custom_tool_call"]
    assert out[0]["name"] == "apply_patch" and out[0]["input"].startswith("*** Begin Patch")
    items += [
        {"type": "custom_tool_call", "call_id": out[0]["call_id"], "name": "apply_patch", "input": out[0]["input"]},
        {"type": "custom_tool_call_output", "call_id": out[0]["call_id"], "output": "Done!"},
    ]
    out, usage, _ = await _ask(client, items, stream)
    assert out[0]["content"][0]["text"] == "There is one file: notes.md."
    records = read_calls(channel.log_path)
    assert [r.wire for r in records] == ["openai_responses"] * 3
    assert [r.tool_calls for r in records] == [1, 1, 0]
    assert [r.tool_names for r in records] == [["shell"], ["apply_patch"], []]  # the tools the model called
    assert all(r.stream is stream and r.client_model == "gpt-5-codex" for r in records)
    totals = usage_totals(channel.log_path)
    # the third turn has no usage in the script: estimated at chars/4, deterministic and > 0
    assert records[2].input_tokens > 0 and records[2].output_tokens == (len("There is one file: notes.md.") + 3) // 4
    assert totals.input_tokens == 1100 + records[2].input_tokens
    assert totals.cached_tokens == 300 and totals.calls == 3 and totals.cost_source == "script"
