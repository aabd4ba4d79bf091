"""The LiteLLM backend: forwards an internal request to any provider LiteLLM knows.

LiteLLM is imported lazily (its import is slow). API keys come from the environment as LiteLLM
reads them (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from skillworks.gateway.completion import parse_chat_completion, thinking_blocks
from skillworks.gateway.internal import GatewayError, Message, ModelRequest, ModelResponse


def _litellm() -> Any:
    # Use the price table shipped with LiteLLM instead of fetching it from the internet at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    # Let LiteLLM repair histories a provider would reject. The gateway carries thinking blocks (with
    # their signatures) across turns; a client that dropped them (so Anthropic would reject thinking +
    # a tool-use turn) gets `thinking` dropped for that call instead of a failed call.
    litellm.modify_params = True
    return litellm


# Providers that take Anthropic-style prompt-cache hints on content parts (through LiteLLM).
_CACHE_HINT_PROVIDERS = frozenset({"anthropic", "bedrock", "vertex_ai"})
# Providers whose thought signatures LiteLLM reads from a tool call's provider_specific_fields (Gemini).
_THOUGHT_SIGNATURE_PROVIDERS = frozenset({"gemini", "vertex_ai"})


def _content(m: Message, cache_hints: bool) -> Any:
    if cache_hints and m.cache_control is not None and m.content:
        return [{"type": "text", "text": m.content, "cache_control": m.cache_control}]
    return m.content


def to_openai_messages(
    request: ModelRequest, cache_hints: bool = False, thought_signatures: bool = False
) -> list[dict[str, Any]]:
    """Internal messages as OpenAI chat messages (LiteLLM's input format). With ``cache_hints``, the
    client's prompt-cache hints are kept as ``cache_control`` on the text part. With ``thought_signatures``
    (Gemini), a turn's signature goes on its first tool call, where LiteLLM looks for it
    (``provider_specific_fields.thought_signature``), whatever id the client gave that call."""
    out: list[dict[str, Any]] = []
    for m in request.messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": _content(m, cache_hints)})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.reasoning:  # carried back: signed thinking blocks (Anthropic) and the reasoning text
                blocks = thinking_blocks(m.reasoning)
                if blocks:
                    msg["thinking_blocks"] = blocks
                text = "\n".join(r.text for r in m.reasoning if r.text)
                if text:
                    msg["reasoning_content"] = text
            if m.tool_calls:
                msg["tool_calls"] = [
                    {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
                    for tc in m.tool_calls
                ]
                signature = next((r.signature for r in m.reasoning if r.signature), None)
                if thought_signatures and signature:
                    msg["tool_calls"][0]["provider_specific_fields"] = {"thought_signature": signature}
            out.append(msg)
        else:
            out.append({"role": m.role, "content": _content(m, cache_hints)})
    return out


def to_openai_tools(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in request.tools
    ]


def _tool_choice(choice: str | None) -> Any:
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _retry_after(exc: Exception) -> float | None:
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


_OVERFLOW_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)
_MALFORMED_HINTS = (
    "invalid response from llm endpoint",
    "expecting value",
    "jsondecodeerror",
    "stream ended before a finish_reason",
)


def classify_exception(exc: Exception) -> GatewayError:
    """Map a LiteLLM/provider exception to a classified GatewayError.

    The HTTP status wins over LiteLLM's exception class (LiteLLM maps some 401s to BadRequestError),
    and message hints catch what LiteLLM leaves generic (context overflow, unparsable answers).
    """
    litellm = _litellm()
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    msg = " ".join(str(exc).split())[:2000] or type(exc).__name__
    low = msg.lower()
    kw: dict[str, Any] = {"retry_after": _retry_after(exc), "upstream_status": status}
    if isinstance(exc, litellm.ContextWindowExceededError) or any(h in low for h in _OVERFLOW_HINTS):
        return GatewayError("context_overflow", msg, **kw)
    if isinstance(exc, json.JSONDecodeError | litellm.APIResponseValidationError) or any(
        h in low for h in _MALFORMED_HINTS
    ):
        return GatewayError("malformed_response", msg, **kw)
    if status == 429 or isinstance(exc, litellm.RateLimitError):
        return GatewayError("rate_limit", msg, **kw)
    if status in (401, 403) or isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return GatewayError("auth", msg, **kw)
    if status in (408, 504) or isinstance(exc, litellm.Timeout):
        return GatewayError("timeout", msg, **kw)
    if status is not None and status >= 500:
        return GatewayError("server_error", msg, status=status, **kw)  # the client sees 503/529 as sent
    if (status is not None and 400 <= status < 500) or isinstance(
        exc,
        litellm.BadRequestError
        | litellm.NotFoundError
        | litellm.UnprocessableEntityError
        | litellm.UnsupportedParamsError,
    ):
        return GatewayError("bad_request", msg, **kw)
    if status is not None and status < 400:
        return GatewayError("malformed_response", msg, **kw)
    # 5xx classes, connection errors and anything unexpected from the provider stack.
    return GatewayError("server_error", msg, **kw)


def _has_token(chunk: Any) -> bool:
    """Whether a streamed chunk carries model output (text, reasoning or a tool call), not only a role."""
    try:
        delta = chunk.choices[0].delta
    except (AttributeError, IndexError, TypeError):
        return False
    return bool(
        getattr(delta, "content", None)
        or getattr(delta, "reasoning_content", None)
        or getattr(delta, "tool_calls", None)
        or getattr(delta, "thinking_blocks", None)
    )


class LiteLLMBackend:
    def __init__(self, model: str, api_base: str | None = None, timeout_sec: float = 600.0) -> None:
        self.model = model
        self.api_base = api_base
        self.timeout_sec = timeout_sec
        self.provider = model.split("/", 1)[0] if "/" in model else self._guess_provider(model)

    @staticmethod
    def _guess_provider(model: str) -> str:
        try:
            return str(_litellm().get_llm_provider(model)[1])
        except Exception:
            return "unknown"

    def open(self, trial_id: str, task_id: str | None) -> LiteLLMBackend:
        return self  # stateless: one object serves every trial

    def _kwargs(self, request: ModelRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(
                request,
                cache_hints=self.provider in _CACHE_HINT_PROVIDERS,
                thought_signatures=self.provider in _THOUGHT_SIGNATURE_PROVIDERS,
            ),
            "timeout": self.timeout_sec,
            "num_retries": 0,  # the gateway retries, and records the attempts
            "max_retries": 0,
            "drop_params": True,
            # Our tools are plain functions; without this LiteLLM routes any call with tools through
            # its MCP handler, which imports the optional `mcp` package (ModuleNotFoundError here).
            "_skip_mcp_handler": True,
        }
        if request.tools:
            kwargs["tools"] = to_openai_tools(request)
            if request.tool_choice is not None:
                kwargs["tool_choice"] = _tool_choice(request.tool_choice)
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.reasoning_effort is not None:
            kwargs["reasoning_effort"] = request.reasoning_effort
        if self.api_base:
            kwargs["api_base"] = self.api_base
            if self.provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = "skillworks-no-key"  # local OpenAI-compatible servers need none
        return kwargs

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One model call, streamed from the provider (so the time to the first token is measured),
        then assembled into one answer with LiteLLM's chunk builder."""
        litellm = _litellm()
        kwargs = self._kwargs(request) | {"stream": True, "stream_options": {"include_usage": True}}
        started = time.monotonic()
        ttft: float | None = None
        chunks: list[Any] = []
        try:
            stream = await litellm.acompletion(**kwargs)
            async for chunk in stream:
                if ttft is None and _has_token(chunk):
                    ttft = (time.monotonic() - started) * 1000
                chunks.append(chunk)
            result = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])
        except GatewayError:
            raise
        except Exception as exc:
            raise classify_exception(exc) from exc
        if result is None:
            raise GatewayError("malformed_response", "the provider's stream held no answer")
        try:
            raw = result.model_dump() if hasattr(result, "model_dump") else dict(result)
        except Exception as exc:
            raise GatewayError("malformed_response", f"cannot read provider answer: {exc}") from exc
        response = parse_chat_completion(raw)
        if ttft is None and not response.text and not response.tool_calls and not response.reasoning:
            # LiteLLM closes any stream with a `stop` chunk (and estimates the prompt's tokens): a stream
            # without a single token of text, reasoning or tool call brought no answer
            raise GatewayError("malformed_response", "the provider's stream held no answer")
        response.ttft_ms = round(ttft, 3) if ttft is not None else None
        self._cost(litellm, result, raw, response)
        return response

    def _cost(self, litellm: Any, result: Any, raw: dict[str, Any], response: ModelResponse) -> None:
        """The provider's reported cost (usage.cost) wins over LiteLLM's price table. On a streamed answer
        LiteLLM fills usage.cost from its price table itself, so a cost equal to the table's is the table's."""
        usage: dict[str, Any] = raw["usage"] if isinstance(raw.get("usage"), dict) else {}
        reported = usage.get("cost") if usage else None
        try:
            counted = litellm.Usage(**{k: v for k, v in usage.items() if k != "cost"})
            table: float | None = float(sum(litellm.cost_per_token(model=self.model, usage_object=counted)))
        except Exception:
            table = None
        given = float(reported) if isinstance(reported, int | float) and not isinstance(reported, bool) else None
        if given is not None and (table is None or abs(given - table) > 1e-12) and (given or table is not None):
            response.cost_usd, response.cost_source = given, "provider"
            return
        if table is None:
            response.cost_usd, response.cost_source = 0.0, "none"
            return
        response.cost_usd, response.cost_source = table, "litellm_price_table"
