"""Parse an OpenAI-style chat completion (what LiteLLM returns, and what the scripted provider
produces) into a ModelResponse. Anything off-shape is a ``malformed_response``."""

from __future__ import annotations

import json
from typing import Any

from skillworks.gateway.internal import FinishReason, GatewayError, ModelResponse, ReasoningItem, TokenUsage, ToolCall


def _malformed(why: str) -> GatewayError:
    return GatewayError("malformed_response", f"provider answer is malformed: {why}")


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def parse_usage(usage: Any) -> TokenUsage:
    if not isinstance(usage, dict):
        return TokenUsage()
    details = usage.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    cached = cached or _int(usage.get("cache_read_input_tokens"))
    return TokenUsage(
        input_tokens=_int(usage.get("prompt_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
        cached_tokens=cached,
    )


def parse_chat_completion(raw: Any) -> ModelResponse:
    """``raw`` is a chat.completion as a dict. Raises GatewayError(malformed_response)."""
    if not isinstance(raw, dict):
        raise _malformed(f"expected a JSON object, got {type(raw).__name__}")
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _malformed("no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise _malformed("choices[0].message missing")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _malformed("choices[0].message.content is not a string")
    calls: list[ToolCall] = []
    for i, tc in enumerate(message.get("tool_calls") or []):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise _malformed(f"tool_calls[{i}] has no function name")
        args = fn.get("arguments") or "{}"
        if not isinstance(args, str):
            args = json.dumps(args)
        try:
            parsed = json.loads(args)
        except json.JSONDecodeError:
            raise _malformed(f"tool_calls[{i}] ({fn['name']}) arguments are not valid JSON") from None
        if not isinstance(parsed, dict):
            raise _malformed(f"tool_calls[{i}] ({fn['name']}) arguments are not a JSON object")
        call_id = tc.get("id") or f"call_{i}"
        calls.append(ToolCall(id=str(call_id), name=fn["name"], arguments=args))
    reason = choice.get("finish_reason")
    finish: FinishReason = "tool_calls" if calls else ("length" if reason == "length" else "stop")
    reasoning = message.get("reasoning_content")
    items = parse_thinking_blocks(message.get("thinking_blocks"))
    text = reasoning if isinstance(reasoning, str) and reasoning else None
    signatures = _thought_signatures(message)
    if signatures and not items:  # Gemini: the thought summary, and the signature Gemini needs back
        items = [ReasoningItem(text=text or "", signature=signatures[0])]
        items += [ReasoningItem(signature=sig) for sig in signatures[1:]]
    return ModelResponse(
        text=content or "",
        tool_calls=calls,
        finish_reason=finish,
        usage=parse_usage(raw.get("usage")),
        reasoning=text or ("\n".join(i.text for i in items if i.text) or None),
        reasoning_items=items or ([ReasoningItem(text=text)] if text else []),
    )


def _thought_signatures(message: dict[str, Any]) -> list[str]:
    """Gemini thought signatures as LiteLLM carries them: on the message (`provider_specific_fields.
    thought_signatures`), else on its tool calls (`provider_specific_fields.thought_signature`)."""
    fields = message.get("provider_specific_fields")
    found = fields.get("thought_signatures") if isinstance(fields, dict) else None
    if isinstance(found, list) and all(isinstance(s, str) and s for s in found) and found:
        return list(found)
    out = []
    for tc in message.get("tool_calls") or []:
        tc_fields = tc.get("provider_specific_fields") if isinstance(tc, dict) else None
        sig = tc_fields.get("thought_signature") if isinstance(tc_fields, dict) else None
        if isinstance(sig, str) and sig:
            out.append(sig)
    return out


def parse_thinking_blocks(blocks: Any) -> list[ReasoningItem]:
    """Anthropic-style thinking blocks (as LiteLLM carries them on chat messages: `thinking_blocks`)."""
    items: list[ReasoningItem] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "thinking":
            signature = block.get("signature")
            items.append(
                ReasoningItem(text=str(block.get("thinking") or ""), signature=str(signature) if signature else None)
            )
        elif block.get("type") == "redacted_thinking" and block.get("data"):
            items.append(ReasoningItem(encrypted=str(block["data"]), redacted=True))
    return items


def thinking_blocks(items: list[ReasoningItem]) -> list[dict[str, Any]]:
    """Reasoning items as Anthropic-style thinking blocks (only signed or redacted ones can be sent back)."""
    blocks: list[dict[str, Any]] = []
    for item in items:
        if item.redacted and item.encrypted:
            blocks.append({"type": "redacted_thinking", "data": item.encrypted})
        elif item.signature:
            blocks.append({"type": "thinking", "thinking": item.text, "signature": item.signature})
    return blocks
