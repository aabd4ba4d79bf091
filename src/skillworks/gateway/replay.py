"""Replay of recorded model calls (`skillworks run --replay RUN`): the gateway's backend for a replay run
answers each trial's model calls from the trial's recorded gateway.jsonl, in order, and asks no provider.

A recorded call is served only when the request the agent sends now is the one it sent then (same digest of
the canonical request: model, messages, tools, sampling settings; not whether the client streams). A request
that differs is a ``replay_mismatch`` naming the trial, the model call (its 1-based step among the trial's
model calls) and the first part that differs; a call past the end of the recording is ``replay_exhausted``.
A call that failed when recorded fails the same way (same class and message); the gateway makes one attempt
per call under replay, so a recorded call is one HTTP call."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from skillworks.errors import UserError
from skillworks.gateway.internal import ErrorClass, GatewayError, ModelRequest, ModelResponse, response_from_dict
from skillworks.gateway.records import GatewayCall, read_calls

_PART_HEX = 12  # characters of each part digest kept in the record


@dataclass(frozen=True)
class RequestDigest:
    sha256: str
    parts: list[str]  # settings, tools, then one per message


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:_PART_HEX]


def request_digest(model: str, request: ModelRequest) -> RequestDigest:
    """The canonical request's digest (the same key as the response cache's) and its parts' digests."""
    from skillworks.gateway.response_cache import request_key

    body = dataclasses.asdict(request)
    body.pop("stream", None)
    messages = body.pop("messages")
    tools = body.pop("tools")
    parts = [_short({"model": model, **body}), _short(tools), *(_short(m) for m in messages)]
    return RequestDigest(request_key(model, request), parts)


def _where(recorded: list[str], now: list[str], request: ModelRequest) -> str:
    """The first part of the request that differs from the recording, in words."""
    if recorded[:1] != now[:1]:
        return "the model or sampling settings differ"
    if recorded[1:2] != now[1:2]:
        return "the tool definitions differ"
    old, new = recorded[2:], now[2:]
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return f"message {i + 1} ({request.messages[i].role}) differs"
    if len(new) != len(old):
        return f"{len(new)} messages, the recording has {len(old)}"
    return "the request differs"


def is_replayable(call: GatewayCall) -> bool:
    """A call the provider (or the response cache) answered when it was recorded: answers, and failures
    after an attempt. Calls the gateway refused itself (a bad body, a token budget, a provider known down)
    are refused again by the replaying gateway, so they are not part of what the backend serves."""
    if not call.is_model_call:
        return False
    return call.status == "ok" or call.attempts >= 1 or call.error_class == "cancelled"


def recorded_calls(trial_dir: Path) -> list[GatewayCall]:
    return [c for c in read_calls(trial_dir / "gateway.jsonl") if is_replayable(c)]


def check_recorded_bodies(trials_dir: Path, trial_ids: list[str]) -> None:
    """A run recorded without response bodies (`--no-record-bodies`) cannot be replayed: one line, naming
    the first gateway.jsonl that lacks them."""
    for trial_id in trial_ids:
        log = trials_dir / trial_id / "gateway.jsonl"
        for call in recorded_calls(trials_dir / trial_id):
            if call.status == "ok" and call.response is None and call.response_omitted:
                raise UserError(
                    f"cannot replay: a model call's answer was too large to record ({call.response_omitted})", log
                )
            if call.status == "ok" and (call.response is None or call.request_sha256 is None):
                raise UserError(
                    "cannot replay: this trial's model calls were recorded without their response bodies "
                    "(a run made with --no-record-bodies, or before skillworks recorded them)",
                    log,
                )


class ReplayBackend:
    """The gateway's backend under `run --replay`: `trials_dir` is the recorded run's trials/ directory."""

    provider = "replay"

    def __init__(self, trials_dir: Path, model: str) -> None:
        self.trials_dir = trials_dir
        self.model = model

    def open(self, trial_id: str, task_id: str | None) -> ReplaySession:
        return ReplaySession(self.trials_dir / trial_id, trial_id, self.model)


class ReplaySession:
    """One trial's cursor over its recorded model calls."""

    def __init__(self, trial_dir: Path, trial_id: str, model: str) -> None:
        self.trial_id = trial_id
        self.model = model
        self.log_path = trial_dir / "gateway.jsonl"
        self.calls = recorded_calls(trial_dir) if self.log_path.is_file() else None
        self.step = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.step += 1
        where = f"replay: trial {self.trial_id}, model call {self.step}"
        if self.calls is None:
            raise GatewayError("replay_exhausted", f"{where}: the recorded run has no {self.log_path}")
        if self.step > len(self.calls):
            raise GatewayError(
                "replay_exhausted", f"{where}: the recording has only {len(self.calls)} model call(s) for this trial"
            )
        call = self.calls[self.step - 1]
        digest = request_digest(self.model, request)
        if call.request_sha256 is not None and digest.sha256 != call.request_sha256:
            what = _where(call.request_parts or [], digest.parts, request)
            raise GatewayError("replay_mismatch", f"{where}: the request differs from the recording: {what}")
        if call.error_class == "cancelled":  # it was in flight when the trial ended: it is again
            await asyncio.Event().wait()
        if call.status == "error":
            cls = cast(ErrorClass, call.error_class or "server_error")
            raise GatewayError(cls, call.error_message or "recorded failure", status=call.http_status)
        if call.response is None:
            why = f" ({call.response_omitted})" if call.response_omitted else ""
            raise GatewayError("replay_exhausted", f"{where}: the recording holds no response body{why}")
        try:
            response = response_from_dict(call.response)
        except (ValueError, TypeError) as exc:
            raise GatewayError("replay_exhausted", f"{where}: the recorded response is unreadable: {exc}") from None
        response.cost_usd, response.cost_source = 0.0, "replay"  # no provider was asked
        return response
