"""OpenAI Chat Completions wire format (``POST /v1/chat/completions``)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from skillworks.gateway.completion import parse_thinking_blocks, thinking_blocks
from skillworks.gateway.internal import (
    GatewayError,
    Message,
    ModelRequest,
    ModelResponse,
    ReasoningItem,
    ToolCall,
    ToolSpec,
    content_text,
)
from skillworks.gateway.sse import SSEEvent


def _bad(msg: str) -> GatewayError:
    return GatewayError("bad_request", msg)


def parse_tools(tools: Any) -> list[ToolSpec]:
    out: list[ToolSpec] = []
    for i, tool in enumerate(tools or []):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise _bad(f"tools[{i}].function.name is required")
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        out.append(ToolSpec(name=fn["name"], description=fn.get("description") or "", parameters=params))
    return out


def parse_tool_choice(choice: Any) -> str | None:
    if choice is None or isinstance(choice, str):
        return choice
    if isinstance(choice, dict):
        fn = choice.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return str(fn["name"])
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
    return None


def _reasoning(message: dict[str, Any]) -> list[ReasoningItem]:
    """An assistant message's reasoning: signed `thinking_blocks` (LiteLLM's convention) win over the
    plain `reasoning_content` text (DeepSeek, vLLM, LiteLLM)."""
    items = parse_thinking_blocks(message.get("thinking_blocks"))
    text = message.get("reasoning_content") or message.get("reasoning")
    if not items and isinstance(text, str) and text:
        items = [ReasoningItem(text=text)]
    return items


def parse_request(body: dict[str, Any]) -> ModelRequest:
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise _bad("`messages` must be a non-empty array")
    messages: list[Message] = []
    for i, m in enumerate(raw_messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise _bad(f"messages[{i}].role is required")
        role = m["role"]
        text = content_text(m.get("content"))
        if role in ("system", "developer"):
            messages.append(Message("system", text))
        elif role == "user":
            messages.append(Message("user", text))
        elif role == "assistant":
            calls = [
                ToolCall(
                    id=str(tc.get("id") or f"call_{i}_{j}"),
                    name=str(tc.get("function", {}).get("name", "")),
                    arguments=tc.get("function", {}).get("arguments") or "{}",
                )
                for j, tc in enumerate(m.get("tool_calls") or [])
                if isinstance(tc, dict)
            ]
            messages.append(Message("assistant", text, tool_calls=calls, reasoning=_reasoning(m)))
        elif role in ("tool", "function"):
            messages.append(Message("tool", text, tool_call_id=m.get("tool_call_id") or m.get("name")))
        else:
            raise _bad(f"messages[{i}].role {role!r} is not supported")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    return ModelRequest(
        messages=messages,
        tools=parse_tools(body.get("tools")),
        max_tokens=int(max_tokens) if max_tokens else None,
        temperature=body.get("temperature"),
        reasoning_effort=body.get("reasoning_effort"),
        tool_choice=parse_tool_choice(body.get("tool_choice")),
        stream=bool(body.get("stream")),
        client_model=body.get("model"),
    )


def _usage(resp: ModelResponse) -> dict[str, Any]:
    u = resp.usage
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
    }


def _calls(resp: ModelResponse) -> list[dict[str, Any]]:
    return [
        {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
        for tc in resp.tool_calls
    ]


def render_response(
    resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": resp.text or None}
    if resp.tool_calls:
        message["tool_calls"] = _calls(resp)
    if resp.reasoning:
        message["reasoning_content"] = resp.reasoning
    blocks = thinking_blocks(resp.reasoning_parts())
    if blocks:
        message["thinking_blocks"] = blocks
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_id,
        "choices": [{"index": 0, "message": message, "finish_reason": resp.finish_reason}],
        "usage": _usage(resp),
    }


def render_stream(resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any]) -> list[SSEEvent]:
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model_id,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> SSEEvent:
        return SSEEvent({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": ""})]
    if resp.reasoning:
        events.append(chunk({"reasoning_content": resp.reasoning}))
    blocks = thinking_blocks(resp.reasoning_parts())
    if blocks:
        events.append(chunk({"thinking_blocks": blocks}))
    if resp.text:
        events.append(chunk({"content": resp.text}))
    for i, tc in enumerate(resp.tool_calls):
        head = {"index": i, "id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": ""}}
        events.append(chunk({"tool_calls": [head]}))
        events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": tc.arguments}}]}))
    events.append(chunk({}, resp.finish_reason))
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        events.append(SSEEvent({**base, "choices": [], "usage": _usage(resp)}))
    events.append(SSEEvent("[DONE]"))
    return events


def render_error(err: GatewayError) -> dict[str, Any]:
    # `type` and `code` are both the gateway's error class (rate_limit, script_mismatch, ...).
    return {"error": {"message": err.message, "type": err.error_class, "param": None, "code": err.error_class}}
