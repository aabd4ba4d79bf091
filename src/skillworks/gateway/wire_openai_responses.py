"""OpenAI Responses wire format (``POST /v1/responses``), as Codex CLI speaks it.

Function tools map to internal tools; ``custom`` (freeform) tools map to a function with one string
argument ``input`` and come back as ``custom_tool_call`` items. The tools of a ``namespace`` group (Codex sends
each MCP server's tools as one, e.g. ``mcp__skillworks``) become internal tools named ``<namespace>__<tool>``;
their calls go back as ``function_call`` items with ``namespace`` and the bare ``name``, and come in that way.
"""

from __future__ import annotations

import json
import time
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
from skillworks.gateway.wire_openai_chat import parse_tool_choice
from skillworks.gateway.wire_openai_chat import render_error as render_error

_CUSTOM_PARAMS = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "the tool's freeform input"}},
    "required": ["input"],
}


def _bad(msg: str) -> GatewayError:
    return GatewayError("bad_request", msg)


def _output_text(output: Any) -> str:
    return output if isinstance(output, str) else content_text(output)


_SIGNATURE = "sig:"  # encrypted_content that carries another provider's thinking signature (opaque to clients)


def _add_call(messages: list[Message], call: ToolCall) -> None:
    if messages and messages[-1].role == "assistant":
        messages[-1].tool_calls.append(call)
    else:
        messages.append(Message("assistant", "", tool_calls=[call]))


def _reasoning_item(item: dict[str, Any]) -> ReasoningItem:
    parts = [p for p in (item.get("summary") or []) + (item.get("content") or []) if isinstance(p, dict)]
    text = "\n".join(str(p.get("text") or "") for p in parts if p.get("text"))
    encrypted = item.get("encrypted_content") if isinstance(item.get("encrypted_content"), str) else None
    if encrypted and encrypted.startswith(_SIGNATURE):
        return ReasoningItem(text=text, signature=encrypted.removeprefix(_SIGNATURE), id=item.get("id"))
    return ReasoningItem(text=text, encrypted=encrypted or None, id=item.get("id"))


def _bare_assistant(messages: list[Message]) -> Message | None:
    """The last message when it is an assistant turn that so far holds only reasoning."""
    last = messages[-1] if messages else None
    if last is not None and last.role == "assistant" and not last.content and not last.tool_calls:
        return last
    return None


def _parse_item(messages: list[Message], item: dict[str, Any], i: int) -> None:
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        text = content_text(item.get("content"))
        if role in ("system", "developer"):
            messages.append(Message("system", text))
        elif role == "user":
            messages.append(Message("user", text))
        elif role == "assistant":
            bare = _bare_assistant(messages)
            if bare is not None:  # the reasoning that led to this message
                bare.content = text
            else:
                messages.append(Message("assistant", text))
        else:
            raise _bad(f"input[{i}].role {role!r} is not supported")
    elif kind in ("function_call", "custom_tool_call"):
        if kind == "function_call":
            args = item.get("arguments") or "{}"
        else:
            args = json.dumps({"input": item.get("input", "")})
        name = str(item.get("name", ""))
        if item.get("namespace"):
            name = _qualified(str(item["namespace"]), name)
        _add_call(messages, ToolCall(str(item.get("call_id", "")), name, args))
    elif kind == "reasoning":  # kept: a reasoning model continues from it on the next turn
        bare = _bare_assistant(messages)
        if bare is not None:
            bare.reasoning.append(_reasoning_item(item))
        else:
            messages.append(Message("assistant", "", reasoning=[_reasoning_item(item)]))
    elif kind.endswith("_call_output"):
        call_id = str(item.get("call_id", ""))
        messages.append(Message("tool", _output_text(item.get("output")), tool_call_id=call_id))
    elif kind.endswith("_call") and item.get("call_id"):
        args = json.dumps(item.get("action") or {})
        _add_call(messages, ToolCall(str(item["call_id"]), str(item.get("name") or kind), args))
    # anything else carries nothing the model needs re-sent


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}__{name}"


def _parse_tools(tools: Any, namespace: str | None = None) -> list[ToolSpec]:
    out: list[ToolSpec] = []
    for t in tools or []:
        if not isinstance(t, dict) or not t.get("name"):
            continue
        name = _qualified(namespace, str(t["name"])) if namespace else str(t["name"])
        if t.get("type") == "function":
            params = t.get("parameters") or {"type": "object", "properties": {}}
            out.append(ToolSpec(name, t.get("description") or "", params, namespace=namespace))
        elif t.get("type") == "custom":
            out.append(ToolSpec(name, t.get("description") or "", dict(_CUSTOM_PARAMS), "custom", namespace))
        elif t.get("type") == "namespace" and namespace is None:
            out += _parse_tools(t.get("tools"), str(t["name"]))
    return out


def parse_request(body: dict[str, Any]) -> ModelRequest:
    messages: list[Message] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.append(Message("system", body["instructions"]))
    raw = body.get("input")
    if isinstance(raw, str):
        messages.append(Message("user", raw))
    elif isinstance(raw, list):
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise _bad(f"input[{i}] must be an object")
            _parse_item(messages, item, i)
    else:
        raise _bad("`input` must be a string or an array")
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    max_tokens = body.get("max_output_tokens")
    return ModelRequest(
        messages=messages,
        tools=_parse_tools(body.get("tools")),
        max_tokens=int(max_tokens) if max_tokens else None,
        temperature=body.get("temperature"),
        reasoning_effort=effort,
        tool_choice=parse_tool_choice(body.get("tool_choice")),
        stream=bool(body.get("stream")),
        client_model=body.get("model"),
    )


def _items(resp: ModelResponse, req: ModelRequest) -> list[dict[str, Any]]:
    custom = {t.name for t in req.tools if t.kind == "custom"}
    namespaced = {t.name: t.namespace for t in req.tools if t.namespace}
    items: list[dict[str, Any]] = []
    for part in resp.reasoning_parts():
        encrypted = part.encrypted or (_SIGNATURE + part.signature if part.signature else None)
        items.append(
            {
                "type": "reasoning",
                "id": part.id or f"rs_{uuid.uuid4().hex[:24]}",
                "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
                "encrypted_content": encrypted,
            }
        )
    if resp.text or not resp.tool_calls:
        items.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": resp.text, "annotations": []}],
            }
        )
    for tc in resp.tool_calls:
        item_id = f"fc_{uuid.uuid4().hex[:24]}"
        namespace = namespaced.get(tc.name)
        where = {"namespace": namespace, "name": tc.name[len(namespace) + 2 :]} if namespace else {"name": tc.name}
        if tc.name in custom:
            raw_input = tc.arguments_dict().get("input", "")
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": item_id,
                    "call_id": tc.id,
                    **where,
                    "input": raw_input if isinstance(raw_input, str) else json.dumps(raw_input),
                    "status": "completed",
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": item_id,
                    "call_id": tc.id,
                    **where,
                    "arguments": tc.arguments,
                    "status": "completed",
                }
            )
    return items


def _usage(resp: ModelResponse) -> dict[str, Any]:
    u = resp.usage
    return {
        "input_tokens": u.input_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},  # not reported separately by the providers we read
        "total_tokens": u.input_tokens + u.output_tokens,
    }


def _envelope(model_id: str, status: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "metadata": {},
        "model": model_id,
        "output": [],
        "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
        "temperature": body.get("temperature"),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p"),
        "usage": None,
    }


def render_response(
    resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    out = _envelope(model_id, "completed", body or {})
    out["output"] = _items(resp, req)
    out["usage"] = _usage(resp)
    return out


def render_stream(resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any]) -> list[SSEEvent]:
    events: list[SSEEvent] = []

    def ev(kind: str, **fields: Any) -> None:
        events.append(SSEEvent({"type": kind, "sequence_number": len(events), **fields}, kind))

    final = render_response(resp, req, model_id, body)
    start = {**final, "status": "in_progress", "output": [], "usage": None}
    ev("response.created", response=start)
    ev("response.in_progress", response=start)
    for n, item in enumerate(final["output"]):
        kind, iid = item["type"], item["id"]
        if kind == "reasoning":
            ev("response.output_item.added", output_index=n, item={**item, "summary": []})
            for k, part in enumerate(item["summary"]):
                empty = {"type": "summary_text", "text": ""}
                ev("response.reasoning_summary_part.added", item_id=iid, output_index=n, summary_index=k, part=empty)
                ev(
                    "response.reasoning_summary_text.delta",
                    item_id=iid, output_index=n, summary_index=k, delta=part["text"],
                )  # fmt: skip
                ev(
                    "response.reasoning_summary_text.done",
                    item_id=iid,
                    output_index=n,
                    summary_index=k,
                    text=part["text"],
                )
                ev("response.reasoning_summary_part.done", item_id=iid, output_index=n, summary_index=k, part=part)
        elif kind == "message":
            text = item["content"][0]["text"]
            empty_part = {"type": "output_text", "text": "", "annotations": []}
            ev("response.output_item.added", output_index=n, item={**item, "status": "in_progress", "content": []})
            ev("response.content_part.added", item_id=iid, output_index=n, content_index=0, part=empty_part)
            if text:
                ev("response.output_text.delta", item_id=iid, output_index=n, content_index=0, delta=text, logprobs=[])
            ev("response.output_text.done", item_id=iid, output_index=n, content_index=0, text=text, logprobs=[])
            ev("response.content_part.done", item_id=iid, output_index=n, content_index=0, part=item["content"][0])
        elif kind == "function_call":
            ev("response.output_item.added", output_index=n, item={**item, "status": "in_progress", "arguments": ""})
            ev("response.function_call_arguments.delta", item_id=iid, output_index=n, delta=item["arguments"])
            ev("response.function_call_arguments.done", item_id=iid, output_index=n, arguments=item["arguments"])
        else:
            ev("response.output_item.added", output_index=n, item={**item, "status": "in_progress", "input": ""})
            ev("response.custom_tool_call_input.delta", item_id=iid, output_index=n, delta=item["input"])
            ev("response.custom_tool_call_input.done", item_id=iid, output_index=n, input=item["input"])
        ev("response.output_item.done", output_index=n, item=item)
    ev("response.completed", response=final)
    return events
