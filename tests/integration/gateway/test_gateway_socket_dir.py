"""A gateway given a socket dir too deep for a unix socket path (sun_path holds 107 bytes) still serves its
trials: a long `SKILLWORKS_RAY_NODE_DIR` or `--out` used to fail every trial's bind on that node. Real HTTP
over the trial's unix socket; the model provider is the `scripted` one (the only double)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from skillworks.gateway import Gateway


async def test_a_socket_dir_too_long_for_unix_sockets_is_replaced_by_a_short_one(
    tmp_path: Path, write_script: Callable[[Any], Path]
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    gw = Gateway(f"scripted/{write_script([{'text': 'hello'}])}", socket_dir=deep)
    await gw.start()
    try:
        channel = await gw.open_trial("trial-1", tmp_path / "gateway.jsonl")
        assert len(str(channel.socket_path)) <= 107
        assert not str(channel.socket_path).startswith(str(deep))
        async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(channel.socket_path))) as client:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            r = await client.post("http://gw/v1/chat/completions", json=body, timeout=30)
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "hello"
        short_dir = channel.socket_path.parent
    finally:
        await gw.stop()
    assert deep.is_dir()  # the caller's dir is left alone ...
    assert not short_dir.exists()  # ... and the one the gateway made for itself is removed
