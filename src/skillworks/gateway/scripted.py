"""The ``scripted`` provider: replays a script of assistant turns, one cursor per trial.

It is the gateway's own backend (no network) and answers with an OpenAI-style chat completion that
goes through the same parser as LiteLLM's answers, so every wire format is exercised identically.
For tests and deterministic harness checks only; never a substitute for a real model.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from skillworks.gateway.completion import parse_chat_completion
from skillworks.gateway.internal import (
    ErrorClass,
    GatewayError,
    Message,
    ModelRequest,
    ModelResponse,
    TokenUsage,
    estimate_tokens,
    request_chars,
)
from skillworks.gateway.script_format import Script, ScriptTurn, load_script

_SHOW = 200  # characters of request text quoted in mismatch messages


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= _SHOW else text[:_SHOW] + "…")


def _status_class(status: int) -> ErrorClass:
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 413:
        return "context_overflow"
    if status in (408, 504):
        return "timeout"
    return "server_error" if status >= 500 else "bad_request"


def _last(messages: list[Message], role: str) -> Message | None:
    return next((m for m in reversed(messages) if m.role == role), None)


def _recent_tool_results(messages: list[Message]) -> list[Message]:
    """Tool results after the last assistant message."""
    out: list[Message] = []
    for m in reversed(messages):
        if m.role == "assistant":
            break
        if m.role == "tool":
            out.append(m)
    return list(reversed(out))


class ScriptedBackend:
    provider = "scripted"

    def __init__(self, script: Script | str | Path) -> None:
        self.script = script if isinstance(script, Script) else load_script(script)

    def open(self, trial_id: str, task_id: str | None) -> ScriptedSession:
        return ScriptedSession(self.script, trial_id, task_id)


class ScriptedSession:
    """One trial's cursor over the script. A turn is consumed only when it is answered."""

    def __init__(self, script: Script, trial_id: str, task_id: str | None) -> None:
        self.script = script
        self.trial_id = trial_id
        self.task_id = task_id
        self.cursor = 0
        self.requests = 0
        self._failures: dict[int, int] = {}
        self._signed: list[tuple[str, str]] = []  # (thinking, signature) this trial's turns produced
        self._lock = asyncio.Lock()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        async with self._lock:
            return await self._complete(request)

    def _where(self) -> str:
        task = f", task {self.task_id!r}" if self.task_id else ""
        return f"trial {self.trial_id!r}{task}"

    async def _complete(self, request: ModelRequest) -> ModelResponse:
        self.requests += 1
        turns = self.script.turns_for(self.task_id)
        if turns is None:
            keys = ", ".join(sorted(self.script.by_task)) or "none"
            raise GatewayError(
                "script_mismatch",
                f"script {self.script.source} has no turns for {self._where()} (by_task keys: {keys}; no default)",
            )
        if self.cursor >= len(turns):
            last = _last(request.messages, "user")
            raise GatewayError(
                "script_exhausted",
                f"script exhausted: {self._where()} made model request {self.cursor + 1} but the script "
                f"has {len(turns)} turn(s); last user message: {_quote(last.content if last else '')}",
            )
        index = self.cursor
        turn = turns[index]
        self._check(turn, index + 1, len(turns), request)
        if turn.delay_sec:
            await asyncio.sleep(turn.delay_sec)
        if turn.fail is not None and self._failures.get(index, 0) < turn.fail.times:
            self._failures[index] = self._failures.get(index, 0) + 1
            status = turn.fail.status
            raise GatewayError(
                _status_class(status),
                turn.fail.message or f"scripted failure {status} (turn {index + 1})",
                status=status,
                retry_after=turn.fail.retry_after,
                upstream_status=status,
            )
        response = parse_chat_completion(self._raw(turn, index + 1, request))
        self._signed += [(r.text, r.signature) for r in response.reasoning_items if r.signature]
        self.cursor += 1
        response.cost_usd = turn.cost_usd or 0.0
        response.cost_source = "script"
        response.script_turn = index + 1
        return response

    def _check(self, turn: ScriptTurn, number: int, total: int, request: ModelRequest) -> None:
        head = f"script turn {number} of {total} ({self._where()})"
        offered = request.tool_names()
        for call in turn.tool_calls:
            if call.name not in offered:
                raise GatewayError(
                    "script_mismatch",
                    f"{head} calls tool {call.name!r} but the client offered: "
                    f"{', '.join(offered) if offered else 'no tools'}",
                )
        expect = turn.expect
        if expect is None:
            return
        if expect.has_tool is not None and expect.has_tool not in offered:
            raise GatewayError(
                "script_mismatch",
                f"{head} expected the client to offer tool {expect.has_tool!r}, got: "
                f"{', '.join(offered) if offered else 'no tools'}",
            )
        if expect.system_contains is not None:
            system = "\n".join(m.content for m in request.messages if m.role == "system")
            if expect.system_contains not in system:
                raise GatewayError(
                    "script_mismatch",
                    f"{head} expected the system part to contain {expect.system_contains!r}, got: "
                    + (_quote(system) if system else "no system part"),
                )
        for name in ("max_tokens", "reasoning_effort"):  # what reached the provider (after the gateway's limits)
            want, got = getattr(expect, name), getattr(request, name)
            if want is not None and want != got:
                raise GatewayError("script_mismatch", f"{head} expected {name} {want!r}, the provider got {got!r}")
        if expect.last_user_contains is not None:
            last = _last(request.messages, "user")
            got = last.content if last else ""
            if expect.last_user_contains not in got:
                raise GatewayError(
                    "script_mismatch",
                    f"{head} expected the last user message to contain "
                    f"{expect.last_user_contains!r}, got: {_quote(got)}",
                )
        if expect.reasoning_carried:
            sent = {(r.text, r.signature) for m in request.messages if m.role == "assistant" for r in m.reasoning}
            # the text unchanged with its signature, or the signature alone (Gemini's form: clients drop thoughts)
            missing = [text for text, sig in self._signed if (text, sig) not in sent and ("", sig) not in sent]
            if not self._signed or missing:
                raise GatewayError(
                    "script_mismatch",
                    f"{head} expected the earlier turns' signed thinking back unchanged; "
                    + (f"missing: {_quote(missing[0])}" if missing else "no earlier turn produced thinking"),
                )
        if expect.tool_result_contains is not None:
            results = _recent_tool_results(request.messages)
            if not any(expect.tool_result_contains in m.content for m in results):
                got = " | ".join(m.content for m in results) if results else "no tool results"
                raise GatewayError(
                    "script_mismatch",
                    f"{head} expected a tool result containing {expect.tool_result_contains!r}, got: {_quote(got)}",
                )

    def _raw(self, turn: ScriptTurn, number: int, request: ModelRequest) -> dict[str, Any]:
        if turn.malformed:
            return {"id": f"scripted-{number}", "object": "chat.completion", "choices": []}
        text = turn.text or ""
        calls: list[dict[str, Any]] = [
            {
                "id": call.id or f"call_{number}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(turn.tool_calls)
        ]
        if turn.usage is not None:
            usage = TokenUsage(turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.cached_tokens)
        else:
            out = text + "".join(c.name + json.dumps(c.arguments) for c in turn.tool_calls)
            usage = TokenUsage(estimate_tokens(request_chars(request)), max(1, estimate_tokens(out)), 0)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        if turn.thinking:
            # a deterministic stand-in for the provider's signature: changing the text breaks it
            signature = "scripted-" + hashlib.sha256(f"{self.trial_id}\0{turn.thinking}".encode()).hexdigest()[:32]
            message["reasoning_content"] = turn.thinking
            message["thinking_blocks"] = [{"type": "thinking", "thinking": turn.thinking, "signature": signature}]
        return {
            "id": f"scripted-{number}",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
            },
        }
