"""The replay backend on its own: a recorded gateway.jsonl answers requests in order; each way a request can
diverge is named; recorded failures fail the same way; refused calls are not served."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillworks.errors import UserError
from skillworks.gateway.internal import GatewayError, Message, ModelRequest, ModelResponse, TokenUsage, ToolSpec
from skillworks.gateway.records import GatewayCall, append_call
from skillworks.gateway.replay import ReplayBackend, check_recorded_bodies, request_digest

MODEL = "scripted/s.yaml"


def _req(*texts: str, tools: tuple[str, ...] = ("bash",), max_tokens: int = 100) -> ModelRequest:
    return ModelRequest(
        messages=[Message(role="user" if i % 2 == 0 else "assistant", content=t) for i, t in enumerate(texts)],
        tools=[ToolSpec(name=n) for n in tools],
        max_tokens=max_tokens,
    )


def _call(req: ModelRequest | None, **kw: object) -> GatewayCall:
    digest = request_digest(MODEL, req) if req is not None else None
    base: dict[str, object] = {
        "ts": datetime.now(UTC),
        "trial_id": "t",
        "route": "/v1/chat/completions",
        "wire": "openai_chat",
        "model": MODEL,
        "provider": "scripted",
        "attempts": 1,
        "request_sha256": digest.sha256 if digest else None,
        "request_parts": digest.parts if digest else None,
    }
    return GatewayCall.model_validate(base | kw)


def _recording(tmp_path: Path, *calls: GatewayCall) -> ReplayBackend:
    for call in calls:
        append_call(tmp_path / "trials" / "t" / "gateway.jsonl", call)
    return ReplayBackend(tmp_path / "trials", MODEL)


def _answer(text: str) -> dict[str, object]:
    return dataclasses.asdict(ModelResponse(text=text, usage=TokenUsage(5, 2), cost_usd=0.5, cost_source="script"))


def test_requests_are_answered_in_order_at_no_cost_and_stream_does_not_matter(tmp_path: Path) -> None:
    first, second = _req("a"), _req("a", "x", "b")
    backend = _recording(tmp_path, _call(first, response=_answer("one")), _call(second, response=_answer("two")))
    session = backend.open("t", None)
    streamed = dataclasses.replace(first, stream=True)
    one = asyncio.run(session.complete(streamed))
    two = asyncio.run(session.complete(second))
    assert (one.text, two.text) == ("one", "two")
    assert (one.cost_usd, one.cost_source, one.usage.input_tokens) == (0.0, "replay", 5)
    with pytest.raises(GatewayError, match="model call 3: the recording has only 2 model call"):
        asyncio.run(session.complete(second))


@pytest.mark.parametrize(
    ("request_now", "why"),
    [
        (_req("a", "y", "b"), "message 2 \\(assistant\\) differs"),
        (_req("a", "x"), "2 messages, the recording has 3"),
        (_req("a", "x", "b", tools=("bash", "read_file")), "the tool definitions differ"),
        (_req("a", "x", "b", max_tokens=7), "the model or sampling settings differ"),
    ],
)
def test_a_diverging_request_names_the_step_and_what_differs(
    tmp_path: Path, request_now: ModelRequest, why: str
) -> None:
    backend = _recording(tmp_path, _call(_req("a", "x", "b"), response=_answer("one")))
    with pytest.raises(GatewayError, match=f"replay: trial t, model call 1: the request differs .*{why}") as err:
        asyncio.run(backend.open("t", None).complete(request_now))
    assert err.value.error_class == "replay_mismatch"


def test_recorded_failures_fail_again_and_refused_calls_are_skipped(tmp_path: Path) -> None:
    req = _req("a")
    backend = _recording(
        tmp_path,
        _call(None, status="error", http_status=400, error_class="bad_request", attempts=0),  # the gateway's own
        _call(req, status="error", http_status=429, error_class="rate_limit", error_message="slow down", attempts=4),
        _call(req, response=_answer("ok")),
        _call(None, route="/v1/models", wire="models"),  # not a model call
    )
    session = backend.open("t", None)
    with pytest.raises(GatewayError, match="slow down") as err:
        asyncio.run(session.complete(req))
    assert (err.value.error_class, err.value.status) == ("rate_limit", 429)
    assert asyncio.run(session.complete(req)).text == "ok"
    with pytest.raises(GatewayError, match=r"has no .*gateway\.jsonl"):
        asyncio.run(backend.open("other", None).complete(req))


def test_a_recording_without_bodies_is_refused_naming_its_file(tmp_path: Path) -> None:
    _recording(tmp_path, _call(_req("a")))  # status ok, no response body
    with pytest.raises(UserError, match="without their response bodies") as err:
        check_recorded_bodies(tmp_path / "trials", ["t"])
    assert "gateway.jsonl" in str(err.value)
    check_recorded_bodies(tmp_path / "trials", ["no-such-trial"])  # no calls: nothing to refuse


def test_a_call_whose_answer_was_too_large_to_record_is_named_when_replay_is_refused(tmp_path: Path) -> None:
    req = _req("a")
    omitted = _call(req, response_omitted="6,291,456 characters, over the 4,194,304 recorded")
    _recording(tmp_path, omitted)
    with pytest.raises(UserError) as info:
        check_recorded_bodies(tmp_path / "trials", ["t"])
    assert "too large to record (6,291,456 characters" in str(info.value)
    session = ReplayBackend(tmp_path / "trials", MODEL).open("t", None)
    with pytest.raises(GatewayError) as served:
        asyncio.run(session.complete(req))
    assert "no response body (6,291,456 characters" in str(served.value)
