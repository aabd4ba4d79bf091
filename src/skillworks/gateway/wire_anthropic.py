"""Anthropic Messages wire format (``POST /v1/messages``, also ``?beta=true``, and count_tokens)."""

from __future__ import annotations

import json
import uuid
from typing import Any

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

_ERROR_TYPES = {
    "rate_limit": "rate_limit_error",
    "auth": "authentication_error",
    "context_overflow": "invalid_request_error",
    "bad_request": "invalid_request_error",
    "script_exhausted": "invalid_request_error",
    "script_mismatch": "invalid_request_error",
    "timeout": "timeout_error",
    "not_found": "not_found_error",
}
_STOP = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn"}


def _bad(msg: str) -> GatewayError:
    return GatewayError("bad_request", msg)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _effort(thinking: Any) -> str | None:
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive"):
        return None
    budget = thinking.get("budget_tokens") or 0
    return "low" if budget and budget < 4096 else ("high" if budget >= 16384 else "medium")


def _cache(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last cache_control hint among the blocks (Claude Code marks the prefix to cache)."""
    hints = [b["cache_control"] for b in blocks if isinstance(b.get("cache_control"), dict)]
    return hints[-1] if hints else None


def _output_effort(config: Any) -> str | None:
    effort = config.get("effort") if isinstance(config, dict) else None
    return effort if isinstance(effort, str) else None


def _tool_choice(choice: Any) -> str | None:
    if not isinstance(choice, dict):
        return None
    kind = choice.get("type")
    if kind == "tool":
        name = choice.get("name")
        return str(name) if name else None
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))


def _reasoning(blocks: list[dict[str, Any]]) -> list[ReasoningItem]:
    """Thinking blocks of an assistant turn, signatures kept (they must go back to the provider as sent)."""
    items: list[ReasoningItem] = []
    for b in blocks:
        if b.get("type") == "thinking":
            items.append(ReasoningItem(text=str(b.get("thinking") or ""), signature=b.get("signature") or None))
        elif b.get("type") == "redacted_thinking" and b.get("data"):
            items.append(ReasoningItem(encrypted=str(b["data"]), redacted=True))
    return items


def parse_request(body: dict[str, Any]) -> ModelRequest:
    raw = body.get("messages")
    if not isinstance(raw, list):
        raise _bad("`messages` must be an array")
    messages: list[Message] = []
    system = content_text(body.get("system"))
    if system:
        messages.append(Message("system", system, cache_control=_cache(_blocks(body.get("system")))))
    for i, m in enumerate(raw):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant", "system"):
            raise _bad(f"messages[{i}].role must be 'user', 'assistant' or 'system'")
        blocks = _blocks(m.get("content"))
        if role == "system":  # Claude Code sends mid-conversation system messages
            messages.append(Message("system", content_text(blocks), cache_control=_cache(blocks)))
            continue
        if role == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = [
                ToolCall(
                    id=str(b.get("id", "")), name=str(b.get("name", "")), arguments=json.dumps(b.get("input") or {})
                )
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            messages.append(Message("assistant", text, tool_calls=calls, reasoning=_reasoning(blocks)))
            continue
        texts: list[str] = []
        for b in blocks:
            if b.get("type") == "tool_result":
                result = content_text(b.get("content"))
                if b.get("is_error"):
                    result = f"[tool error] {result}"
                hint = _cache([b])
                messages.append(Message("tool", result, tool_call_id=str(b.get("tool_use_id", "")), cache_control=hint))
            else:
                piece = content_text([b])
                if piece:
                    texts.append(piece)
        if texts or not any(b.get("type") == "tool_result" for b in blocks):
            text_blocks = [b for b in blocks if b.get("type") != "tool_result"]
            messages.append(Message("user", "\n".join(texts), cache_control=_cache(text_blocks)))
    tools = [
        ToolSpec(name=str(t["name"]), description=t.get("description") or "", parameters=t["input_schema"])
        for t in body.get("tools") or []
        if isinstance(t, dict)
        and isinstance(t.get("input_schema"), dict)
        and t.get("name")
        and not t.get("defer_loading")  # deferred tools are not shown to the model until loaded
    ]
    max_tokens = body.get("max_tokens")
    return ModelRequest(
        messages=messages,
        tools=tools,
        max_tokens=int(max_tokens) if max_tokens else None,
        temperature=body.get("temperature"),
        reasoning_effort=_output_effort(body.get("output_config")) or _effort(body.get("thinking")),
        tool_choice=_tool_choice(body.get("tool_choice")),
        stream=bool(body.get("stream")),
        client_model=body.get("model"),
    )


def _usage(resp: ModelResponse) -> dict[str, Any]:
    u = resp.usage
    return {
        "input_tokens": max(0, u.input_tokens - u.cached_tokens),
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": u.cached_tokens,
    }


def _content(resp: ModelResponse) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for item in resp.reasoning_parts():  # thinking first, as Anthropic answers
        if item.redacted and item.encrypted:
            blocks.append({"type": "redacted_thinking", "data": item.encrypted})
        else:
            blocks.append({"type": "thinking", "thinking": item.text, "signature": item.signature or ""})
    if resp.text or not resp.tool_calls:
        blocks.append({"type": "text", "text": resp.text})
    for tc in resp.tool_calls:
        blocks.append({"type": "tool_use", "id": tc.id, "name": tc.name, "input": tc.arguments_dict()})
    return blocks


def render_response(
    resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model_id,
        "content": _content(resp),
        "stop_reason": _STOP[resp.finish_reason],
        "stop_sequence": None,
        "usage": _usage(resp),
    }


def render_stream(resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any]) -> list[SSEEvent]:
    usage = _usage(resp)
    start = render_response(resp, req, model_id) | {"content": [], "stop_reason": None}
    start["usage"] = {**usage, "output_tokens": 0}
    events = [SSEEvent({"type": "message_start", "message": start}, "message_start")]
    events.append(SSEEvent({"type": "ping"}, "ping"))

    def ev(kind: str, **fields: Any) -> None:
        events.append(SSEEvent({"type": kind, **fields}, kind))

    for index, block in enumerate(_content(resp)):
        if block["type"] == "thinking":
            ev("content_block_start", index=index, content_block={"type": "thinking", "thinking": "", "signature": ""})
            if block["thinking"]:
                ev("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": block["thinking"]})
            if block["signature"]:
                ev(
                    "content_block_delta",
                    index=index,
                    delta={"type": "signature_delta", "signature": block["signature"]},
                )
        elif block["type"] == "redacted_thinking":
            ev("content_block_start", index=index, content_block=block)
        elif block["type"] == "text":
            ev("content_block_start", index=index, content_block={"type": "text", "text": ""})
            if block["text"]:
                ev("content_block_delta", index=index, delta={"type": "text_delta", "text": block["text"]})
        else:
            ev(
                "content_block_start",
                index=index,
                content_block={"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
            )
            partial = json.dumps(block["input"])
            ev("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": partial})
        ev("content_block_stop", index=index)
    ev(
        "message_delta",
        delta={"stop_reason": _STOP[resp.finish_reason], "stop_sequence": None},
        usage=usage,
    )
    ev("message_stop")
    return events


def render_error(err: GatewayError) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(err.error_class, "api_error")
    if err.status == 529:
        kind = "overloaded_error"
    return {"type": "error", "error": {"type": kind, "message": f"{err.error_class}: {err.message}"}}
