"""`Gateway(on_record=...)`: every call the gateway records is also handed to the hook, right after its
gateway.jsonl line (how a Ray node gateway reports usage to the driver's ledger). The provider is the scripted
one (a fake by design), reached through a real OpenAI SDK client over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai

from skillworks.gateway import Gateway, GatewayCall, read_calls, usage_totals

USER = [{"role": "user", "content": "hello there"}]


def _oa(channel: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=channel.tcp_base_url + "/v1", api_key="k", max_retries=0)


async def test_every_recorded_call_reaches_the_hook_with_its_usage(
    tmp_path: Path, write_script: Callable[[Any], Path]
) -> None:
    script = write_script(
        [
            {"text": "one", "usage": {"input_tokens": 1234, "output_tokens": 56}},
            {"text": "two", "usage": {"input_tokens": 700, "output_tokens": 8}},
        ]
    )
    told: list[GatewayCall] = []
    async with Gateway(f"scripted/{script}", tcp_port=0, on_record=told.append) as gw:
        channel = await gw.open_trial("t1", tmp_path / "gateway.jsonl")
        for _ in range(2):
            await _oa(channel).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert told == read_calls(channel.log_path)
    assert usage_totals(told).input_tokens == 1934 and usage_totals(told).calls == 2


async def test_a_hook_that_raises_does_not_fail_the_model_call(
    tmp_path: Path, write_script: Callable[[Any], Path]
) -> None:
    def broken(call: GatewayCall) -> None:
        raise RuntimeError("the ledger is gone")

    async with Gateway(f"scripted/{write_script([{'text': 'ok'}])}", tcp_port=0, on_record=broken) as gw:
        channel = await gw.open_trial("t1", tmp_path / "gateway.jsonl")
        answer = await _oa(channel).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "ok"
    [call] = read_calls(channel.log_path)
    assert call.status == "ok"
