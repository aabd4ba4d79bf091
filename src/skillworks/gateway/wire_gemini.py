"""Google Gemini generateContent wire format (what Gemini CLI speaks through the @google/genai SDK).

Routes: ``POST /v1beta/models/<model>:generateContent`` (one JSON answer) and
``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (SSE, one GenerateContentResponse per event);
``/v1`` and ``/v1alpha`` prefixes are accepted too. Unlike the other wire formats the model id and the
streaming flag are in the path, so :func:`route` returns a per-path view of this module with the same four
functions the server calls (``parse_request``, ``render_response``, ``render_stream``, ``render_error``).

Gemini's function calls usually carry no id: calls get ids by position (``gemini_<n>``) and each
functionResponse is paired with the earliest unanswered call of the same name (or its id when given).
"""

from __future__ import annotations

import json
import re
import uuid
from functools import partial
from types import ModuleType
from typing import Any

from skillworks.gateway.internal import (
    GatewayError,
    Message,
    ModelRequest,
    ModelResponse,
    ReasoningItem,
    ToolCall,
    ToolSpec,
)
from skillworks.gateway.sse import SSEEvent

WIRE = "gemini_generate"
_ROUTE = re.compile(
    r"^/(v1beta|v1alpha|v1)/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$"
)
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS"}
_STATUS = {
    "rate_limit": "RESOURCE_EXHAUSTED",
    "auth": "UNAUTHENTICATED",
    "timeout": "DEADLINE_EXCEEDED",
    "not_found": "NOT_FOUND",
    "server_error": "INTERNAL",
    "malformed_response": "INTERNAL",
}
_CHOICE = {"AUTO": "auto", "ANY": "required", "NONE": "none"}


def _bad(msg: str) -> GatewayError:
    return GatewayError("bad_request", msg)


def route(path: str) -> ModuleType | None:
    """A view of this wire format for one request path, or None when `path` is not a Gemini route."""
    match = _ROUTE.match(path)
    if match is None:
        return None
    view = ModuleType(f"{__name__}[{match['method']}]")
    stream = match["method"] == "streamGenerateContent"
    setattr(view, "parse_request", partial(parse_request, model=match["model"], stream=stream))  # noqa: B010
    setattr(view, "render_response", render_response)  # noqa: B010
    setattr(view, "render_stream", render_stream)  # noqa: B010
    setattr(view, "render_error", render_error)  # noqa: B010
    return view


def _parts_text(value: Any) -> str:
    """Text of a Content (or a plain string), thought parts excluded."""
    if isinstance(value, str):
        return value
    parts = value.get("parts") if isinstance(value, dict) else value
    if not isinstance(parts, list):
        return ""
    return "".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def _response_text(response: Any) -> str:
    if isinstance(response, dict) and set(response) <= {"output", "content"}:
        value = response.get("output", response.get("content"))
        if isinstance(value, str):
            return value
    if isinstance(response, dict) and set(response) == {"error"} and isinstance(response["error"], str):
        return f"[tool error] {response['error']}"
    return json.dumps(response, ensure_ascii=False)


def _tools(raw: Any) -> list[ToolSpec]:
    tools: list[ToolSpec] = []
    for group in raw or []:
        if not isinstance(group, dict):
            continue
        for decl in group.get("functionDeclarations") or group.get("function_declarations") or []:
            if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
                raise _bad("every functionDeclarations entry needs a `name`")
            params = decl.get("parametersJsonSchema") or decl.get("parameters") or {"type": "object", "properties": {}}
            tools.append(ToolSpec(name=decl["name"], description=decl.get("description") or "", parameters=params))
    return tools


def _tool_choice(config: Any) -> str | None:
    calling = config.get("functionCallingConfig") if isinstance(config, dict) else None
    if not isinstance(calling, dict):
        return None
    allowed = calling.get("allowedFunctionNames")
    if calling.get("mode") == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
        return str(allowed[0])
    return _CHOICE.get(str(calling.get("mode")))


def _thoughts(parts: list[dict[str, Any]]) -> list[ReasoningItem]:
    """A model turn's reasoning: its thought parts and its thought signature. Gemini puts the signature on
    the turn's first functionCall part (else its last part), and clients such as Gemini CLI keep only that
    part, dropping thought summaries; the signature is what Gemini needs back. Thought text and the turn's
    first signature make one item; any further signatures are items of their own."""
    texts = [p["text"] for p in parts if p.get("thought") and isinstance(p.get("text"), str)]
    signatures = [str(sig) for p in parts if (sig := p.get("thoughtSignature") or p.get("thought_signature"))]
    if not signatures:
        return [ReasoningItem(text=t) for t in texts]
    first = ReasoningItem(text="".join(texts), signature=signatures[0])
    return [first, *(ReasoningItem(signature=sig) for sig in signatures[1:])]


def parse_request(body: dict[str, Any], *, model: str | None = None, stream: bool = False) -> ModelRequest:
    """Parse a generateContent body. `model` and `stream` come from the path; they are also set on `body`
    (``model``, ``stream``), which is what the gateway records in gateway.jsonl for every wire format."""
    body.setdefault("model", model)
    body.setdefault("stream", stream)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _bad("`contents` must be a non-empty array")
    messages: list[Message] = []
    system = _parts_text(body.get("systemInstruction") or body.get("system_instruction") or "")
    if system:
        messages.append(Message("system", system))
    counter = 0
    pending: list[ToolCall] = []  # calls not yet answered, in order
    for i, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            raise _bad(f"contents[{i}].parts must be an array")
        role = content.get("role", "user")
        parts = [p for p in content["parts"] if isinstance(p, dict)]
        if role == "model":
            calls: list[ToolCall] = []
            for part in parts:
                fc = part.get("functionCall")
                if isinstance(fc, dict) and isinstance(fc.get("name"), str):
                    counter += 1
                    call_id = str(fc.get("id") or f"gemini_{counter}")
                    calls.append(ToolCall(call_id, fc["name"], json.dumps(fc.get("args") or {})))
            pending += calls
            messages.append(Message("assistant", _parts_text(parts), tool_calls=calls, reasoning=_thoughts(parts)))
        elif role in ("user", "function", "tool"):
            texts: list[str] = []
            for part in parts:
                fr = part.get("functionResponse")
                if isinstance(fr, dict):
                    name, rid = fr.get("name"), fr.get("id")
                    match = next((c for c in pending if rid and c.id == rid), None) or next(
                        (c for c in pending if c.name == name), None
                    )
                    if match is not None:
                        pending.remove(match)
                    call_id = match.id if match is not None else str(rid or f"gemini_orphan_{i}")
                    messages.append(Message("tool", _response_text(fr.get("response")), tool_call_id=call_id))
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    texts.append(part["text"])
            if texts:
                messages.append(Message("user", "".join(texts)))
        else:
            raise _bad(f"contents[{i}].role must be 'user' or 'model'")
    raw_config = body.get("generationConfig")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    max_tokens = config.get("maxOutputTokens")
    raw_thinking = config.get("thinkingConfig")
    thinking: dict[str, Any] = raw_thinking if isinstance(raw_thinking, dict) else {}
    budget = thinking.get("thinkingBudget")
    effort = None
    if isinstance(budget, int) and budget > 0:
        effort = "low" if budget < 4096 else ("high" if budget >= 16384 else "medium")
    return ModelRequest(
        messages=messages,
        tools=_tools(body.get("tools")),
        max_tokens=int(max_tokens) if isinstance(max_tokens, int) and max_tokens > 0 else None,
        temperature=config.get("temperature"),
        reasoning_effort=effort,
        tool_choice=_tool_choice(body.get("toolConfig")),
        stream=stream,
        client_model=model,
    )


def _usage(resp: ModelResponse) -> dict[str, Any]:
    u = resp.usage
    usage = {
        "promptTokenCount": u.input_tokens,
        "candidatesTokenCount": u.output_tokens,
        "totalTokenCount": u.input_tokens + u.output_tokens,
    }
    if u.cached_tokens:
        usage["cachedContentTokenCount"] = u.cached_tokens
    return usage


def _parts(resp: ModelResponse) -> list[dict[str, Any]]:
    """Thought summaries first, then the answer; the thought signature rides on the first functionCall part
    (or, without one, the last part), where Gemini puts it."""
    parts: list[dict[str, Any]] = []
    signature: str | None = None
    for item in resp.reasoning_parts():
        if item.redacted:
            continue
        if item.text:
            parts.append({"text": item.text, "thought": True})
        signature = signature or item.signature
    if resp.text or not resp.tool_calls:
        parts.append({"text": resp.text})
    calls: list[dict[str, Any]] = [
        {"functionCall": {"name": tc.name, "args": tc.arguments_dict()}} for tc in resp.tool_calls
    ]
    parts += calls
    if signature is not None:
        (calls[0] if calls else parts[-1])["thoughtSignature"] = signature
    return parts


def _chunk(parts: list[dict[str, Any]], model_id: str, response_id: str, finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": model_id, "responseId": response_id}


def render_response(
    resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    out = _chunk(_parts(resp), model_id, uuid.uuid4().hex[:24], _FINISH[resp.finish_reason])
    out["usageMetadata"] = _usage(resp)
    return out


def render_stream(resp: ModelResponse, req: ModelRequest, model_id: str, body: dict[str, Any]) -> list[SSEEvent]:
    """Thoughts and text first (when there are calls too), then the calls with the finish reason and usage."""
    response_id = uuid.uuid4().hex[:24]
    parts = _parts(resp)
    events: list[SSEEvent] = []
    first_call = next((i for i, p in enumerate(parts) if "functionCall" in p), len(parts))
    if resp.tool_calls and first_call > 0:
        events.append(SSEEvent(_chunk(parts[:first_call], model_id, response_id, None)))
        parts = parts[first_call:]
    last = _chunk(parts, model_id, response_id, _FINISH[resp.finish_reason])
    last["usageMetadata"] = _usage(resp)
    events.append(SSEEvent(last))
    return events


def render_error(err: GatewayError) -> dict[str, Any]:
    status = _STATUS.get(err.error_class, "INVALID_ARGUMENT")
    return {"error": {"code": err.status, "message": f"{err.error_class}: {err.message}", "status": status}}
