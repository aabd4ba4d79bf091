"""The loopback model gateway: an aiohttp server in the harness process.

Each trial gets its own unix socket (``open_trial``), so every call is attributed to its trial
without the client's cooperation. Optionally one TCP listener on 127.0.0.1 serves every open
trial under ``/t/<trial_id>/...`` (for tests and agents run on the host).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from aiohttp import web

from skillworks._tempdirs import temp_prefix
from skillworks.gateway import wire_anthropic, wire_gemini, wire_openai_chat, wire_openai_responses
from skillworks.gateway.internal import GatewayError, ModelRequest, ModelResponse, estimate_tokens, request_chars
from skillworks.gateway.limits import CallLimits, Clamp, clamp_request
from skillworks.gateway.litellm_backend import LiteLLMBackend
from skillworks.gateway.records import GatewayCall, Wire, append_call, trial_error_from_calls
from skillworks.gateway.response_cache import ResponseCache, request_key
from skillworks.gateway.retry import RetryOutcome, RetryPolicy, call_with_retry
from skillworks.gateway.scripted import ScriptedBackend
from skillworks.results import TrialError

log = logging.getLogger(__name__)

_MAX_BODY = 256 * 1024 * 1024  # agent histories get large
# a unix socket path is at most 107 bytes (sun_path); a trial socket is DIR/<16 hex>.sock
_MAX_SOCKET_DIR_BYTES = 107 - len("/0123456789abcdef.sock")
_SHUTDOWN_SEC = 1.0  # closing a trial waits this long for in-flight calls, then cancels them
# A call that failed with one of these after all its retries says the provider is down (not this request)
_DOWN_CLASSES = frozenset({"server_error", "timeout", "auth"})
DOWN_COOLDOWN_SEC = 30.0
# an answer is recorded in full (what `run --replay` serves) up to this size; past it the record keeps its
# size only (`response_omitted`): a 50 MB answer is not written again beside its consumer's own capped copy
MAX_RECORDED_RESPONSE_CHARS = 4 * 1024 * 1024
_WIRES: dict[str, tuple[Wire, ModuleType]] = {
    "/v1/chat/completions": ("openai_chat", wire_openai_chat),
    "/v1/responses": ("openai_responses", wire_openai_responses),
    "/v1/messages": ("anthropic_messages", wire_anthropic),
}


class BackendSession(Protocol):
    async def complete(self, request: ModelRequest) -> ModelResponse: ...


class Backend(Protocol):
    provider: str

    def open(self, trial_id: str, task_id: str | None) -> BackendSession: ...


@dataclass(frozen=True)
class TrialChannel:
    """Where one trial's agent reaches the gateway."""

    trial_id: str
    socket_path: Path  # bind-mount this into the sandbox; HTTP is served on it
    log_path: Path  # the trial's gateway.jsonl
    tcp_base_url: str | None = None  # http://127.0.0.1:PORT/t/<trial_id> when TCP is enabled


@dataclass
class _Trial:
    channel: TrialChannel
    task_id: str | None
    session: BackendSession
    runner: web.AppRunner | None = None
    calls: list[GatewayCall] = field(default_factory=list)
    in_flight: set[asyncio.Task[Any]] = field(default_factory=set)  # model calls being answered now
    tokens_used: int = 0  # input + output tokens of its answered model calls
    gave_up: bool = False  # a call of this trial failed after all retries with the provider down


@dataclass
class _Closed:
    errors: list[GatewayCall]
    error: TrialError | None


def _error_body(err: GatewayError) -> dict[str, Any]:
    """Error body both SDK families understand (for routes that have no wire format)."""
    return {
        "type": "error",
        "error": {"type": f"{err.error_class}_error", "message": err.message, "code": err.error_class},
    }


class Gateway:
    """Loopback model gateway. ``model`` is ``provider/name`` (LiteLLM) or ``scripted/<script path>``."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        retry: RetryPolicy | None = None,
        tcp_port: int | None = None,
        socket_dir: Path | None = None,
        trial_token_budget: int | None = None,
        down_cooldown_sec: float = DOWN_COOLDOWN_SEC,
        cache_dir: Path | None = None,
        call_limits: CallLimits | None = None,
        record_bodies: bool = True,
        replay_from: Path | None = None,
        on_record: Callable[[GatewayCall], None] | None = None,
    ) -> None:
        self.model = model
        # told every call as it is recorded (after gateway.jsonl): on Ray, the node gateway reports usage to the
        # driver's ledger with it. Must not block (it runs on the gateway's event loop) and must not raise.
        self.on_record = on_record
        self.call_limits = call_limits or CallLimits()  # what one call may ask for (limits.py)
        # every answer is recorded in gateway.jsonl in full (what `run --replay` serves) unless turned off
        self.record_bodies = record_bodies
        # `run --replay`: answers come from the recorded run's trials dir; no cache, one attempt per call
        self.replay_from = replay_from
        self.cache = ResponseCache(cache_dir) if cache_dir is not None and replay_from is None else None
        self.trial_token_budget = trial_token_budget
        # the provider is "known down" for `down_cooldown_sec` after a call failed after all its retries with
        # one of _DOWN_CLASSES: then a call makes one attempt (no retries), and a trial that already saw such a
        # failure is answered at once (no upstream attempt), so a harness CLI's own retries do not multiply ours
        self.down_cooldown_sec = down_cooldown_sec
        self._down_until = 0.0
        self._down_error: GatewayError | None = None
        self.api_base = api_base
        self.retry = retry or RetryPolicy()
        self.tcp_port = tcp_port
        self.backend: Backend
        if replay_from is not None:
            from skillworks.gateway.replay import ReplayBackend

            self.backend = ReplayBackend(replay_from, model)
            self.retry = dataclasses.replace(self.retry, max_attempts=1)
        elif model.startswith("scripted/"):
            self.backend = ScriptedBackend(model.removeprefix("scripted/"))
        else:
            self.backend = LiteLLMBackend(model, api_base, timeout_sec=self.retry.timeout_sec)
        self.provider = self.backend.provider
        self._socket_dir = socket_dir
        self._own_socket_dir = socket_dir is None
        self._trials: dict[str, _Trial] = {}
        self._closed: dict[str, _Closed] = {}
        self._tcp_runner: web.AppRunner | None = None
        self._port: int | None = None
        self._started = False

    # lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        if self._socket_dir is not None and len(os.fsencode(self._socket_dir)) > _MAX_SOCKET_DIR_BYTES:
            # a unix socket path holds at most 107 bytes: a deep dir (a long SKILLWORKS_RAY_NODE_DIR, a long
            # --out) would fail every trial's bind, so the sockets go to a short dir of our own instead
            log.info("socket dir %s is too long for unix sockets; using a temporary dir", self._socket_dir)
            self._socket_dir, self._own_socket_dir = None, True
        if self._socket_dir is None:
            self._socket_dir = Path(tempfile.mkdtemp(prefix=temp_prefix("gateway")))
        self._socket_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self._socket_dir, 0o755)
        if self.tcp_port is not None:
            app = web.Application(client_max_size=_MAX_BODY)
            app.router.add_route("*", "/t/{trial_id}/{tail:.*}", self._handle_tcp)
            app.router.add_route("*", "/{tail:.*}", self._handle_tcp_unrouted)
            self._tcp_runner = web.AppRunner(app, access_log=None, shutdown_timeout=_SHUTDOWN_SEC)
            await self._tcp_runner.setup()
            await web.TCPSite(self._tcp_runner, "127.0.0.1", self.tcp_port).start()
            self._port = int(self._tcp_runner.addresses[0][1])
        self._started = True

    async def stop(self) -> None:
        for trial_id in list(self._trials):
            await self.close_trial(trial_id)
        if self._tcp_runner is not None:
            await self._tcp_runner.cleanup()
            self._tcp_runner = None
        if self._own_socket_dir and self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
        self._started = False

    async def __aenter__(self) -> Gateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:PORT`` when TCP is enabled and started."""
        return f"http://127.0.0.1:{self._port}" if self._port is not None else None

    # trials ------------------------------------------------------------------------------------

    async def open_trial(self, trial_id: str, log_path: Path, task_id: str | None = None) -> TrialChannel:
        """Give a trial its own unix socket and log; a scripted provider starts a fresh cursor."""
        if not self._started:
            raise RuntimeError("Gateway.start() must be called before open_trial()")
        if trial_id in self._trials:
            raise ValueError(f"trial {trial_id!r} is already open")
        assert self._socket_dir is not None
        digest = hashlib.sha256(trial_id.encode()).hexdigest()[:16]
        socket_path = self._socket_dir / f"{digest}.sock"
        socket_path.unlink(missing_ok=True)
        tcp = f"{self.base_url}/t/{trial_id}" if self.base_url else None
        channel = TrialChannel(trial_id, socket_path, Path(log_path), tcp)
        trial = _Trial(channel, task_id, self.backend.open(trial_id, task_id))

        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._dispatch(trial, request, "/" + request.match_info["tail"])

        app = web.Application(client_max_size=_MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", handle)
        trial.runner = web.AppRunner(app, access_log=None, shutdown_timeout=_SHUTDOWN_SEC)
        await trial.runner.setup()
        await web.UnixSite(trial.runner, str(socket_path)).start()
        os.chmod(socket_path, 0o666)  # the sandbox user may differ from ours
        channel.log_path.parent.mkdir(parents=True, exist_ok=True)
        channel.log_path.touch()
        self._closed.pop(trial_id, None)
        self._trials[trial_id] = trial
        return channel

    async def close_trial(self, trial_id: str) -> None:
        trial = self._trials.pop(trial_id, None)
        if trial is None:
            return
        # calls still in flight are cancelled and recorded *before* the trial's outcome is computed
        for task in list(trial.in_flight):
            task.cancel()
        if trial.in_flight:
            await asyncio.wait(list(trial.in_flight), timeout=5)
        if trial.runner is not None:
            await trial.runner.cleanup()
        trial.channel.socket_path.unlink(missing_ok=True)
        errors = [c for c in trial.calls if c.status == "error"]
        self._closed[trial_id] = _Closed(errors, trial_error_from_calls(trial.calls))

    def trial_calls(self, trial_id: str) -> list[GatewayCall]:
        """Calls of an open trial so far (read gateway.jsonl for a closed one)."""
        trial = self._trials.get(trial_id)
        return list(trial.calls) if trial else []

    def trial_errors(self, trial_id: str) -> list[GatewayCall]:
        """Failed calls of a trial (open or closed)."""
        if trial_id in self._trials:
            return [c for c in self._trials[trial_id].calls if c.status == "error"]
        closed = self._closed.get(trial_id)
        return list(closed.errors) if closed else []

    def trial_error(self, trial_id: str) -> TrialError | None:
        """The model failure that explains the trial, if any (see records.trial_error_from_calls)."""
        if trial_id in self._trials:
            return trial_error_from_calls(self._trials[trial_id].calls)
        closed = self._closed.get(trial_id)
        return closed.error if closed else None

    # HTTP --------------------------------------------------------------------------------------

    async def _handle_tcp(self, request: web.Request) -> web.StreamResponse:
        trial = self._trials.get(request.match_info["trial_id"])
        if trial is None:
            err = GatewayError("not_found", f"no open trial {request.match_info['trial_id']!r}")
            return web.json_response(_error_body(err), status=404)
        return await self._dispatch(trial, request, "/" + request.match_info["tail"])

    async def _handle_tcp_unrouted(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/healthz":
            return web.json_response({"status": "ok"})
        err = GatewayError("not_found", f"{request.path}: use /t/<trial_id>/v1/... on the TCP listener")
        return web.json_response(_error_body(err), status=404)

    async def _dispatch(self, trial: _Trial, request: web.Request, path: str) -> web.StreamResponse:
        path = path.rstrip("/") or "/"
        if path == "/healthz":
            return web.json_response({"status": "ok"})
        gemini = wire_gemini.route(path)  # Gemini generateContent: model and streaming are in the path
        if request.method == "POST" and gemini is not None:
            return await self._model_call(trial, request, path, "gemini_generate", gemini)
        if not path.startswith("/v1/"):
            path = "/v1" + path  # clients configured with a base URL that lacks /v1
        if request.method == "POST" and path in _WIRES:
            wire, module = _WIRES[path]
            return await self._model_call(trial, request, path, wire, module)
        started, ts = time.monotonic(), datetime.now(UTC)
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            return await self._count_tokens(trial, request, path, started, ts)
        if request.method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
            body = self._models_body(path)
            self._record(trial, self._call(trial, ts, started, request.method, path, "models"))
            return web.json_response(body)
        err = GatewayError("not_found", f"{request.method} {path} is not served by the skillworks gateway")
        self._record(trial, self._call(trial, ts, started, request.method, path, "unknown", error=err))
        return web.json_response(_error_body(err), status=404)

    def _models_body(self, path: str) -> dict[str, Any]:
        entry = {
            "id": self.model,
            "object": "model",
            "type": "model",
            "created": 0,
            "created_at": "1970-01-01T00:00:00Z",
            "display_name": self.model,
            "owned_by": "skillworks",
        }
        if path.startswith("/v1/models/"):
            return entry | {"id": path.removeprefix("/v1/models/")}
        return {"object": "list", "data": [entry], "has_more": False, "first_id": self.model, "last_id": self.model}

    async def _count_tokens(
        self, trial: _Trial, request: web.Request, path: str, started: float, ts: datetime
    ) -> web.StreamResponse:
        try:
            body = await request.json()
            req = wire_anthropic.parse_request(body if isinstance(body, dict) else {})
        except (ValueError, GatewayError) as exc:
            err = exc if isinstance(exc, GatewayError) else GatewayError("bad_request", f"body is not JSON: {exc}")
            self._record(trial, self._call(trial, ts, started, "POST", path, "anthropic_count_tokens", error=err))
            return web.json_response(wire_anthropic.render_error(err), status=err.status)
        tokens = estimate_tokens(request_chars(req))
        call = self._call(trial, ts, started, "POST", path, "anthropic_count_tokens", client_model=req.client_model)
        self._record(trial, call)
        return web.json_response({"input_tokens": tokens})

    async def _model_call(
        self, trial: _Trial, request: web.Request, path: str, wire: Wire, module: ModuleType
    ) -> web.StreamResponse:
        started, ts = time.monotonic(), datetime.now(UTC)
        body: dict[str, Any] = {}
        try:
            parsed = await request.json()
            if not isinstance(parsed, dict):
                raise GatewayError("bad_request", "request body must be a JSON object")
            body = parsed
            req: ModelRequest = module.parse_request(body)
        except (ValueError, GatewayError) as exc:
            err = exc if isinstance(exc, GatewayError) else GatewayError("bad_request", f"body is not JSON: {exc}")
            self._record(trial, self._call(trial, ts, started, "POST", path, wire, error=err, body=body))
            return web.json_response(module.render_error(err), status=err.status)
        refused = self._refusal(trial)
        if refused is not None:
            self._record(trial, self._call(trial, ts, started, "POST", path, wire, error=refused, body=body))
            return web.json_response(module.render_error(refused), status=refused.status)
        clamped = clamp_request(req, self.call_limits, self._tokens_left(trial, req))

        def forwarded(
            *, attempts: int, error: GatewayError | None = None, response: ModelResponse | None = None
        ) -> GatewayCall:
            """The record of this call once it went to the provider (what replay and accounting read)."""
            return self._call(
                trial,
                ts,
                started,
                "POST",
                path,
                wire,
                error=error,
                body=body,
                attempts=attempts,
                response=response,
                clamped=clamped,
                request=req,
            )

        failed_attempts: list[GatewayError] = []
        current = asyncio.current_task()
        if current is not None:
            trial.in_flight.add(current)
        try:
            outcome = await self._complete(trial, req, failed_attempts)
        except asyncio.CancelledError:
            # Cut off by the end of the trial. While retrying a provider failure, that failure is the
            # reason; a call that was merely slow is "cancelled" (the agent's own timeout, not an error).
            if failed_attempts:
                last = failed_attempts[-1]
                err = GatewayError(last.error_class, f"{last.message} (still retrying when the trial ended)")
            else:
                err = GatewayError("cancelled", "the trial was closed while this call was in flight")
            call = forwarded(attempts=len(failed_attempts) + 1, error=err)
            if err.error_class == "cancelled":  # the prompt went out: its tokens are counted from the request
                call.input_tokens, call.input_tokens_estimated = estimate_tokens(request_chars(req)), True
            self._record(trial, call)
            raise
        finally:
            if current is not None:
                trial.in_flight.discard(current)
        self._note_provider_state(trial, outcome)
        if outcome.error is not None:
            err = outcome.error
            call = forwarded(attempts=outcome.attempts, error=err)
            self._record(trial, call)
            return web.json_response(module.render_error(err), status=err.status)
        assert outcome.response is not None
        resp = outcome.response
        trial.tokens_used += resp.usage.input_tokens + resp.usage.output_tokens
        call = forwarded(attempts=outcome.attempts, response=resp)
        self._record(trial, call)
        model_id = req.client_model or self.model
        if not req.stream:
            return web.json_response(module.render_response(resp, req, model_id, body))
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await stream.prepare(request)
        with contextlib.suppress(ConnectionResetError):
            for event in module.render_stream(resp, req, model_id, body):
                await stream.write(event.encode())
            await stream.write_eof()
        return stream

    async def _complete(
        self, trial: _Trial, req: ModelRequest, failed_attempts: list[GatewayError] | None = None
    ) -> RetryOutcome:
        async def complete() -> ModelResponse:
            try:
                return await trial.session.complete(req)
            except GatewayError as exc:
                if failed_attempts is not None:
                    failed_attempts.append(exc)
                raise

        key = request_key(self.model, req) if self.cache is not None else None
        if self.cache is not None and key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return RetryOutcome(attempts=0, response=hit)  # no provider attempt
        policy = self.retry
        if time.monotonic() < self._down_until:  # known down: one attempt, no retries
            policy = dataclasses.replace(policy, max_attempts=1)
        try:
            outcome = await call_with_retry(policy, complete)
            if self.cache is not None and key is not None and outcome.response is not None:
                self.cache.put(key, outcome.response)
            return outcome
        except Exception as exc:  # a bug in a backend or converter: classify, keep the traceback in the log
            log.exception("gateway: unexpected error in trial %s", trial.channel.trial_id)
            return RetryOutcome(attempts=1, error=GatewayError("server_error", f"gateway internal error: {exc!r}"))

    def _tokens_left(self, trial: _Trial, req: ModelRequest) -> int | None:
        """Output tokens the trial's budget leaves for this call: the budget less what the trial used and
        this request's prompt (estimated); None without a budget."""
        if self.trial_token_budget is None:
            return None
        return self.trial_token_budget - trial.tokens_used - estimate_tokens(request_chars(req))

    def _refusal(self, trial: _Trial) -> GatewayError | None:
        """Why a model call of `trial` is answered without asking the provider, if it is."""
        budget = self.trial_token_budget
        if budget is not None and trial.tokens_used > budget:
            return GatewayError(
                "token_budget", f"the trial used {trial.tokens_used} tokens (in + out), over its budget of {budget}"
            )
        down = self._down_error
        if trial.gave_up and down is not None and time.monotonic() < self._down_until:
            return GatewayError(down.error_class, f"{down.message} (provider known down: not retried)")
        return None

    def _note_provider_state(self, trial: _Trial, outcome: RetryOutcome) -> None:
        err = outcome.error
        if err is None:
            self._down_until, self._down_error = 0.0, None
        elif err.error_class in _DOWN_CLASSES:
            self._down_until, self._down_error = time.monotonic() + self.down_cooldown_sec, err
            trial.gave_up = True

    @property
    def provider_down(self) -> bool:
        """A recent call failed after all its retries as a provider that is down does."""
        return time.monotonic() < self._down_until

    # records -----------------------------------------------------------------------------------

    def _call(
        self,
        trial: _Trial,
        ts: datetime,
        started: float,
        method: str,
        path: str,
        wire: Wire,
        *,
        error: GatewayError | None = None,
        body: dict[str, Any] | None = None,
        attempts: int = 0,
        response: ModelResponse | None = None,
        client_model: str | None = None,
        clamped: list[Clamp] | None = None,
        request: ModelRequest | None = None,
    ) -> GatewayCall:
        body = body or {}
        cm = body.get("model") if isinstance(body.get("model"), str) else client_model
        call = GatewayCall(
            ts=ts,
            trial_id=trial.channel.trial_id,
            method=method,
            route=path,
            wire=wire,
            client_model=cm,
            model=self.model,
            provider=self.provider,
            latency_ms=round((time.monotonic() - started) * 1000, 3),
            attempts=attempts,
            stream=bool(body.get("stream")),
            clamped=list(clamped or []),
        )
        if error is not None:
            call.status, call.http_status = "error", error.status
            call.error_class, call.error_message = error.error_class, error.message
        if response is not None:
            call.input_tokens = response.usage.input_tokens
            call.output_tokens = response.usage.output_tokens
            call.cached_tokens = response.usage.cached_tokens
            call.cost_usd = response.cost_usd
            call.cost_source = response.cost_source  # type: ignore[assignment]
            call.tool_calls = len(response.tool_calls)
            call.tool_names = [c.name for c in response.tool_calls]
            call.finish_reason = response.finish_reason
            call.script_turn = response.script_turn
            call.ttft_ms = response.ttft_ms
            call.reasoning_items = len(response.reasoning_parts())
            if self.record_bodies:
                body = dataclasses.asdict(response)
                size = len(json.dumps(body, ensure_ascii=False, default=str))
                if size <= MAX_RECORDED_RESPONSE_CHARS:
                    call.response = body
                else:
                    call.response_omitted = f"{size:,} characters, over the {MAX_RECORDED_RESPONSE_CHARS:,} recorded"
        if request is not None:  # what replay matches the agent's requests against
            from skillworks.gateway.replay import request_digest

            digest = request_digest(self.model, request)
            call.request_sha256, call.request_parts = digest.sha256, digest.parts
        return call

    def _record(self, trial: _Trial, call: GatewayCall) -> None:
        trial.calls.append(call)
        try:
            append_call(trial.channel.log_path, call)
        except OSError as exc:  # a full disk: the call stays in memory, the answer still goes out
            log.warning("gateway: cannot record a call in %s: %s", trial.channel.log_path, exc.strerror or exc)
        if self.on_record is not None:
            try:
                self.on_record(call)
            except Exception as exc:  # a report that cannot be sent never fails the model call
                log.warning("gateway: cannot report a call of %s: %s", call.trial_id, exc)
