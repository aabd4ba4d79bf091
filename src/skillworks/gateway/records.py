"""``gateway.jsonl``: one GatewayCall per HTTP call a trial made to the gateway."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillworks.errors import UserError, first_validation_error
from skillworks.gateway.limits import Clamp
from skillworks.results import TrialError, Usage

Wire = Literal[
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "anthropic_count_tokens",
    "models",
    "unknown",
    "gemini_generate",
]
CostSource = Literal["provider", "litellm_price_table", "script", "replay", "none"]

# Wire formats whose calls are model calls (counted in usage totals).
MODEL_WIRES: frozenset[str] = frozenset({"openai_chat", "openai_responses", "anthropic_messages", "gemini_generate"})
# Script errors make a harness check fail even if a later call succeeded.
_ALWAYS_FATAL = frozenset({"script_exhausted", "script_mismatch", "replay_mismatch", "replay_exhausted"})


class GatewayCall(BaseModel):
    """One HTTP call to the gateway, as recorded in a trial's gateway.jsonl."""

    model_config = ConfigDict(extra="forbid")

    ts: datetime = Field(description="when the call arrived (UTC)")
    trial_id: str
    method: str = "POST"
    route: str = Field(description="request path, e.g. /v1/messages")
    wire: Wire
    client_model: str | None = Field(default=None, description="model id the client asked for")
    model: str = Field(description="model the gateway actually used (the configured one)")
    provider: str
    input_tokens: int = Field(default=0, description="all prompt tokens, cached ones included")
    output_tokens: int = 0
    cached_tokens: int = Field(default=0, description="cached prompt tokens (subset of input_tokens)")
    input_tokens_estimated: bool = Field(
        default=False,
        description="input_tokens counted from the request (one token per 4 characters): the call was cut off "
        "(error_class cancelled) before the provider reported its usage; the prompt was sent all the same",
    )
    cost_usd: float = 0.0
    cost_source: CostSource = "none"
    latency_ms: float = 0.0
    ttft_ms: float | None = Field(
        default=None, description="time to the provider's first streamed token (None when it did not stream)"
    )
    reasoning_items: int = Field(default=0, description="reasoning (thinking) items in the answer")
    status: Literal["ok", "error"] = "ok"
    http_status: int = 200
    error_class: str | None = None
    error_message: str | None = None
    attempts: int = 0
    stream: bool = False
    tool_calls: int = Field(default=0, description="tool calls in the answer")
    tool_names: list[str] = Field(default_factory=list, description="the tools the model called, in order")
    finish_reason: str | None = None
    script_turn: int | None = Field(default=None, description="scripted provider: 1-based turn replayed")
    clamped: list[Clamp] = Field(
        default_factory=list,
        description="what the gateway lowered to the run's limits before forwarding (max_tokens, reasoning_effort)",
    )
    request_sha256: str | None = Field(
        default=None,
        description="digest of the canonical request (model, messages, tools, settings): what replay matches",
    )
    request_parts: list[str] | None = Field(
        default=None,
        description="short digests of the request's parts: settings, tools, then each message (to name where a "
        "replayed request diverges)",
    )
    response: dict[str, Any] | None = Field(
        default=None,
        description="the answer in the gateway's internal form (what `run --replay` serves); absent when the run "
        "was made with --no-record-bodies",
    )
    response_omitted: str | None = Field(
        default=None,
        description="why the answer is not recorded although bodies are (its size, past the recording cap); "
        "such a call cannot be replayed",
    )

    @property
    def is_model_call(self) -> bool:
        return self.wire in MODEL_WIRES


def append_call(path: Path, call: GatewayCall) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(call.model_dump_json() + "\n")


def read_calls(path: Path) -> list[GatewayCall]:
    """Every call in a gateway.jsonl (a missing file is no calls). A bad line is a UserError."""
    if not path.exists():
        return []
    calls: list[GatewayCall] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            calls.append(GatewayCall.model_validate_json(line))
        except ValidationError as exc:
            raise UserError(f"line {lineno}: {first_validation_error(exc, '<line>')}", path) from None
    return calls


def usage_totals(log_path: Path | list[GatewayCall]) -> Usage:
    """Sum of the model calls in a gateway.jsonl (or a list of calls), as a results.Usage."""
    calls = read_calls(log_path) if isinstance(log_path, Path) else log_path
    # a call cut off by the trial's end still sent its prompt: its (estimated) input tokens count
    sent = [c for c in calls if c.is_model_call]
    model_calls = [c for c in sent if c.error_class != "cancelled"]
    sources = {c.cost_source for c in model_calls if c.status == "ok"}
    cost_source: str | None
    if not model_calls:
        cost_source = None
    elif len(sources) == 1:
        cost_source = next(iter(sources))
    elif not sources:
        cost_source = "none"
    else:
        cost_source = "mixed:" + ",".join(sorted(sources))
    return Usage(
        input_tokens=sum(c.input_tokens for c in sent),
        output_tokens=sum(c.output_tokens for c in sent),
        cached_tokens=sum(c.cached_tokens for c in sent),
        cost_usd=round(sum(c.cost_usd for c in sent), 10),
        calls=len(sent),
        source="gateway",
        cost_source=cost_source,
    )


def trial_error_from_calls(calls: list[GatewayCall]) -> TrialError | None:
    """The gateway failure that explains a trial, if any.

    A script error (script_exhausted / script_mismatch) always counts. Any other failed model call
    counts unless a later model call of the trial succeeded (the agent recovered from it).
    """
    # a call cut off by the trial's end while merely slow is the agent's timeout, not a model failure
    model_calls = [c for c in calls if c.is_model_call and c.error_class != "cancelled"]
    for call in model_calls:
        if call.status == "error" and call.error_class in _ALWAYS_FATAL:
            return _to_trial_error(call)
    if model_calls and model_calls[-1].status == "error":
        return _to_trial_error(model_calls[-1])
    return None


def _to_trial_error(call: GatewayCall) -> TrialError:
    return TrialError(
        category=call.error_class or "model_error",
        message=f"model call {call.route} failed after {call.attempts} attempt(s): "
        f"{call.error_class}: {call.error_message or ''}".strip(),
        phase="agent",
    )
