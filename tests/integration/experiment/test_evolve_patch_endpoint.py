"""`--patch-api-base` (issue 25): the patch calls go to the patch model's own endpoint, never to the agent's.

Two model endpoints over real HTTP on 127.0.0.1, each a skillworks gateway whose provider is the `scripted`
provider (the one test double: it stands for two model servers, e.g. two vLLM instances). The agent's
model is `openai/agent-model --api-base <endpoint A>`, the patch model `openai/patch-model --patch-api-base
<endpoint B>`; `skillworks evolve` reaches both through LiteLLM, as it would real servers. Endpoint A must
see only the agent's calls, endpoint B only the patch call, with its system part (the scripted turn's
`expect` fails the call otherwise)."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillworks.evolve.prompt import PATCH_SYSTEM
from skillworks.experiment import RunStore
from skillworks.gateway import Gateway, read_calls

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

FAMILY = Path(__file__).resolve().parents[3] / "examples" / "families" / "euro-ledgers"
PATCH = {
    "summary": "PATCH FROM ENDPOINT B",
    "upsert_files": [
        {
            "path": "ledger-notes/SKILL.md",
            "content": "---\nname: ledger-notes\ndescription: Notes on ledger exports. Use when reading a ledger "
            "CSV.\n---\n# Ledger notes\n\nParse each amount with Decimal after removing the thousands dots.\n",
        }
    ],
    "delete_paths": [],
}


class _Endpoint:
    """A gateway with a scripted provider listening on 127.0.0.1 (its own event loop, in a thread); one trial
    `ep` is open, so its base URL is http://127.0.0.1:PORT/t/ep/v1."""

    def __init__(self, tmp: Path, name: str, script: dict[str, Any]) -> None:
        path = tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump(script))
        self.log = tmp / f"{name}.jsonl"
        self.gateway = Gateway(model=f"scripted/{path}", tcp_port=0)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> _Endpoint:
        self.thread.start()

        async def start() -> None:
            await self.gateway.start()
            await self.gateway.open_trial("ep", self.log)

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(30)
        return self

    @property
    def url(self) -> str:
        return f"{self.gateway.base_url}/t/ep/v1"

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.gateway.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def endpoints(tmp_path: Path) -> Iterator[tuple[_Endpoint, _Endpoint]]:
    # A: the agent's three trials (evolved, vanilla, history) each answer at once
    agent = {"default": [{"text": "Done."}] * 3}
    # B: the patch call, which must carry the system part and the patch prompt
    expect = {"system_contains": PATCH_SYSTEM.splitlines()[0], "last_user_contains": "## The library now"}
    patch = {"default": [{"text": json.dumps(PATCH), "expect": expect}]}
    with _Endpoint(tmp_path, "endpoint-a", agent) as a, _Endpoint(tmp_path, "endpoint-b", patch) as b:
        yield a, b


@pytest.mark.parametrize("given", [True, False], ids=["patch-api-base", "provider-default"])
def test_patch_calls_go_to_the_patch_api_base(
    tmp_path: Path, cli: Any, endpoints: tuple[_Endpoint, _Endpoint], monkeypatch: pytest.MonkeyPatch, given: bool
) -> None:
    """With --patch-api-base the patch calls go there; without it, to the patch provider's own endpoint
    (OPENAI_BASE_URL here), never to the agent's --api-base, which serves another model."""
    a, b = endpoints
    fam = tmp_path / "fam"
    shutil.copytree(FAMILY / "ledger-1", fam / "ledger-1")
    (fam / "family.yaml").write_text("order: [ledger-1]\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")  # LiteLLM sends it; the scripted endpoints ignore it
    if not given:
        monkeypatch.setenv("OPENAI_BASE_URL", b.url)  # the provider's own endpoint, as LiteLLM reads it
    where = ["--patch-api-base", b.url] if given else []
    proc = cli("evolve", str(fam), "--agent", "builtin", "--model", "openai/agent-model", "--api-base", a.url,
               "--patch-model", "openai/patch-model", *where, "--out", str(tmp_path), "--run-id", "ep")  # fmt: skip
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    results = RunStore(tmp_path / "ep").read_results()
    assert len(results) == 3 and all(r.error is None for r in results), [r.error for r in results]
    # endpoint A: the three agent calls, for the agent's model; endpoint B: the one patch call, for its own
    calls_a, calls_b = read_calls(a.log), read_calls(b.log)
    assert len(calls_a) == 3 and len(calls_b) == 1, (calls_a, calls_b)
    assert all(c.status == "ok" for c in [*calls_a, *calls_b])
    assert {c.client_model for c in calls_a} == {"agent-model"} and calls_b[0].client_model == "patch-model"
    history = [json.loads(x) for x in (tmp_path / "ep" / "families" / "fam" / "history.jsonl").read_text().splitlines()]
    assert history[0]["patch_status"] == "accepted" and history[0]["summary"] == "PATCH FROM ENDPOINT B"
    assert history[0]["patch_usage"]["calls"] == 1
    record = json.loads((tmp_path / "ep" / "families" / "fam" / "patches" / "1.json").read_text())
    assert record["system"] == PATCH_SYSTEM
