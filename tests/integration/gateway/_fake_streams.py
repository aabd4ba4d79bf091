"""How the fake providers of the LiteLLM tests answer `stream: true`: the provider's own SSE framing of
a reply (OpenAI chat.completion.chunk events, Anthropic Messages events). Test helpers, not a provider."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def openai_chunks(completion: dict[str, Any]) -> list[bytes]:
    """A chat.completion as the chunks a streaming OpenAI-compatible server sends (usage last)."""
    base = {k: completion.get(k) for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choices = completion.get("choices") or []
    if not choices:
        return [_sse(completion), _sse("[DONE]")]
    message, finish = choices[0]["message"], choices[0].get("finish_reason")

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]})

    out = [chunk({"role": "assistant", "content": ""})]
    for key in ("reasoning_content", "thinking_blocks"):
        if message.get(key):
            out.append(chunk({key: message[key]}))
    if message.get("content"):
        out.append(chunk({"content": message["content"]}))
    for i, call in enumerate(message.get("tool_calls") or []):
        out.append(chunk({"tool_calls": [{"index": i, **call}]}))
    out.append(chunk({}, finish))
    out.append(_sse({**base, "choices": [], "usage": completion.get("usage")}))
    out.append(_sse("[DONE]"))
    return out


def anthropic_events(message: dict[str, Any]) -> list[bytes]:
    """An Anthropic Messages answer as its SSE events."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    out = [_sse({"type": "message_start", "message": start}, "message_start")]
    for i, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            out.append(_sse({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
            out.append(_sse({"type": "content_block_delta", "index": i, "delta": delta}, "content_block_delta"))
        elif kind == "thinking":
            empty = {"type": "thinking", "thinking": "", "signature": ""}
            out.append(_sse({"type": "content_block_start", "index": i, "content_block": empty}, "content_block_start"))
            for delta in (
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ):
                out.append(_sse({"type": "content_block_delta", "index": i, "delta": delta}, "content_block_delta"))
        else:
            head = {**block, "input": {}}
            out.append(_sse({"type": "content_block_start", "index": i, "content_block": head}, "content_block_start"))
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out.append(_sse({"type": "content_block_delta", "index": i, "delta": delta}, "content_block_delta"))
        out.append(_sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    end = {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"]}, "usage": usage}
    out.append(_sse(end, "message_delta"))
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return out


async def send_stream(request: web.Request, events: list[bytes], pause_after_first: float = 0.0) -> web.StreamResponse:
    """Send SSE events; `pause_after_first` holds the rest back (a provider still generating)."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for n, event in enumerate(events):
        await response.write(event)
        if n == 1 and pause_after_first:
            await asyncio.sleep(pause_after_first)
    await response.write_eof()
    return response
