"""The LiteLLM backend speaking to a Gemini provider: a local fake of the generateContent API on 127.0.0.1
(the only faked part; it streams, as the gateway asks it to). Issue 17: Gemini's thought signature, which
Gemini needs back with the function call of a thinking turn, goes provider -> LiteLLM -> gateway -> client
(on the first functionCall part, where Gemini puts it) and back again, although the client, as Gemini CLI
does, drops the thought summaries from its history. The client speaks the Gemini wire over plain HTTP (the
real Gemini CLI does the same in tests/integration/harness/test_harness_runs.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from skillworks.gateway import Gateway, RetryPolicy, read_calls

from ._fake_streams import send_stream

SIGNATURE = "c2lnLWdlbWluaS0x"
TOOLS = [{"functionDeclarations": [{"name": "activate_skill", "parametersJsonSchema": {"type": "object"}}]}]


def _answer(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-pro",
    }


@pytest.fixture
async def fake_gemini() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    async def generate(request: web.Request) -> web.StreamResponse:
        seen.append(await request.json())
        if len(seen) == 1:  # a thinking turn that calls a tool: the signature on the functionCall part
            call = {"functionCall": {"name": "activate_skill", "args": {"name": "x"}}, "thoughtSignature": SIGNATURE}
            answer = _answer([{"text": "The skill tells how.", "thought": True}, call])
        else:
            answer = _answer([{"text": "Done."}])
        return await send_stream(request, [f"data: {json.dumps(answer)}\n\n".encode()])

    app = web.Application()
    app.router.add_post("/{path:.*}", generate)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", seen
    await runner.cleanup()


async def test_gemini_thought_signatures_reach_the_client_and_go_back_to_the_provider(
    fake_gemini: tuple[str, list[dict[str, Any]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api_base, seen = fake_gemini
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    gw = Gateway("gemini/gemini-2.5-pro", api_base=api_base, retry=RetryPolicy(max_attempts=1), tcp_port=0)
    await gw.start()
    try:
        channel = await gw.open_trial("t", tmp_path / "gateway.jsonl")
        async with httpx.AsyncClient(base_url=channel.tcp_base_url, timeout=120) as client:
            first: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": TOOLS}
            reply = await client.post("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", json=first)
            assert reply.status_code == 200, reply.text
            chunks = [json.loads(line[6:]) for line in reply.text.splitlines() if line.startswith("data: ")]
            parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
            history = [p for p in parts if not p.get("thought")]  # what Gemini CLI keeps
            answer = {"functionResponse": {"name": "activate_skill", "response": {"output": "body"}}}
            second = {
                "contents": [
                    *first["contents"],
                    {"role": "model", "parts": history},
                    {"role": "user", "parts": [answer]},
                ],
                "tools": TOOLS,
            }
            done = await client.post("/v1beta/models/gemini-2.5-pro:generateContent", json=second)
            assert done.status_code == 200, done.text
    finally:
        await gw.stop()
    assert {"text": "The skill tells how.", "thought": True} in parts
    [call] = [p for p in parts if "functionCall" in p]
    assert call["thoughtSignature"] == SIGNATURE
    model_turn = seen[1]["contents"][1]
    assert model_turn["role"] == "model"
    [sent] = [p for p in model_turn["parts"] if "function_call" in p or "functionCall" in p]
    assert (sent.get("thoughtSignature") or sent.get("thought_signature")) == SIGNATURE
    calls = read_calls(tmp_path / "gateway.jsonl")
    assert [c.status for c in calls] == ["ok", "ok"] and calls[0].reasoning_items == 1
    assert all(c.ttft_ms is not None and c.ttft_ms <= c.latency_ms for c in calls)
