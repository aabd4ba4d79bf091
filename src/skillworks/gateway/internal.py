"""The gateway's one internal request/response shape. Every wire format converts to and from these.

Token convention: ``input_tokens`` counts *all* prompt tokens including cached ones (OpenAI's
convention); ``cached_tokens`` is the cached subset. Anthropic's wire format splits them and the
Anthropic converter does the arithmetic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "tool_calls", "length"]
ToolKind = Literal["function", "custom"]

ErrorClass = Literal[
    "rate_limit",
    "auth",
    "context_overflow",
    "bad_request",
    "timeout",
    "server_error",
    "malformed_response",
    "script_exhausted",
    "script_mismatch",
    "not_found",
    "cancelled",
    "token_budget",
    "replay_mismatch",
    "replay_exhausted",
]

# HTTP status the gateway answers the client with, per error class.
ERROR_STATUS: dict[str, int] = {
    "rate_limit": 429,
    "auth": 401,
    "context_overflow": 400,
    "bad_request": 400,
    "timeout": 504,
    "server_error": 502,
    "malformed_response": 502,
    # A script error is a test-configuration problem: 400 so that client SDKs do not retry it.
    "script_exhausted": 400,
    "script_mismatch": 400,
    "not_found": 404,
    "cancelled": 499,  # the trial was closed while the call was in flight
    "token_budget": 400,  # the trial used up its token budget: not worth a client retry
    # `run --replay`: the agent asked what the recording does not hold (a configuration problem: no retry)
    "replay_mismatch": 400,
    "replay_exhausted": 400,
}


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model produced it

    def arguments_dict(self) -> dict[str, Any]:
        """The arguments parsed; a non-object or unparsable text becomes ``{}``."""
        try:
            value = json.loads(self.arguments) if self.arguments else {}
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ReasoningItem:
    """One piece of a model's reasoning, kept so that it can be sent back on the next turn.

    Providers require it: Anthropic rejects a tool-use turn of an extended-thinking conversation whose
    earlier assistant turn lost its signed thinking blocks; OpenAI reasoning models continue from the
    reasoning items (encrypted content) of the previous turn. ``signature`` is Anthropic's (or Gemini's
    thought signature); ``encrypted`` is OpenAI's ``encrypted_content`` or Anthropic's redacted thinking data.
    """

    text: str = ""
    signature: str | None = None
    encrypted: str | None = None
    redacted: bool = False  # Anthropic `redacted_thinking`: `encrypted` holds its data, `text` is empty
    id: str | None = None  # OpenAI Responses reasoning item id


@dataclass
class Message:
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # role == "tool": which call this answers
    cache_control: dict[str, Any] | None = None  # the client's prompt-cache hint (Anthropic), if any
    reasoning: list[ReasoningItem] = field(default_factory=list)  # assistant: its reasoning, as the client sent it


@dataclass
class ToolSpec:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    kind: ToolKind = "function"  # "custom": a freeform tool (Responses API), mapped to one string arg `input`
    # a tool of a Responses `namespace` group (Codex: an MCP server's tools, namespace `mcp__<server>`): its name
    # here is `<namespace>__<tool>`, and a call of it goes back to the client as {namespace, name: <tool>}
    namespace: str | None = None


@dataclass
class ModelRequest:
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    tool_choice: str | None = None  # "auto" | "none" | "required" | a tool name
    stream: bool = False
    client_model: str | None = None

    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


@dataclass
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class ModelResponse:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: FinishReason = "stop"
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    cost_source: str = "none"  # provider | litellm_price_table | script | none
    reasoning: str | None = None  # the reasoning text (all items' text joined)
    reasoning_items: list[ReasoningItem] = field(default_factory=list)
    script_turn: int | None = None  # scripted provider: 1-based turn number replayed
    ttft_ms: float | None = None  # time to the first streamed token from the provider, when it streamed

    def reasoning_parts(self) -> list[ReasoningItem]:
        """The reasoning as items (a provider that gave only text yields one unsigned item)."""
        if self.reasoning_items:
            return self.reasoning_items
        return [ReasoningItem(text=self.reasoning)] if self.reasoning else []


def response_from_dict(data: dict[str, Any]) -> ModelResponse:
    """A ModelResponse from its `dataclasses.asdict` form (a cache entry, a recorded call). Raises
    ValueError/TypeError on unknown keys or a wrong shape."""
    fields = set(ModelResponse.__dataclass_fields__)
    if not isinstance(data, dict) or not set(data) <= fields:
        raise ValueError(f"unknown keys {sorted(set(data) - fields) if isinstance(data, dict) else data!r}")
    return ModelResponse(
        **{
            **data,
            "tool_calls": [ToolCall(**c) for c in data.get("tool_calls", [])],
            "usage": TokenUsage(**data.get("usage", {})),
            "reasoning_items": [ReasoningItem(**r) for r in data.get("reasoning_items", [])],
        }
    )


class GatewayError(Exception):
    """A classified failure of one model call. ``status`` is what the client receives."""

    def __init__(
        self,
        error_class: ErrorClass,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        upstream_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.error_class: ErrorClass = error_class
        self.message = message
        self.status = status if status is not None else ERROR_STATUS[error_class]
        self.retry_after = retry_after
        self.upstream_status = upstream_status

    @property
    def retryable(self) -> bool:
        return self.error_class in ("rate_limit", "server_error", "timeout")


def content_text(content: Any) -> str:
    """Plain text of a message content that is a string or a list of typed parts (any wire format)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif kind in ("image", "image_url", "input_image"):
                    parts.append("[image]")
                elif kind == "tool_result":
                    parts.append(content_text(part.get("content")))
        return "\n".join(p for p in parts if p)
    return str(content)


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def request_chars(request: ModelRequest) -> str:
    """Everything the model would read, as one string (for estimates and matching)."""
    chunks = [m.content for m in request.messages]
    chunks += [tc.name + tc.arguments for m in request.messages for tc in m.tool_calls]
    chunks += [json.dumps({"n": t.name, "d": t.description, "p": t.parameters}) for t in request.tools]
    return "".join(chunks)
