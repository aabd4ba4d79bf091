"""`skillworks serve-skills` with the official MCP client: over stdio (the CLI as a subprocess) and over
streamable HTTP; list tools, describe (progressive disclosure), execute, blocked, guidance and each
fallback operator."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from skillworks.compile import compile_to
from skillworks.compile.runtime import Envelope

REPO = Path(__file__).resolve().parents[3]
LOAN_TASK = REPO / "examples/quickstart/loan-amortization"
LOAN = LOAN_TASK / "environment/skills/loan-amortization-schedules"
SKILLWORKS = str(Path(sys.executable).parent / "skillworks")
HANDLE = "run_loan_amortization_schedules"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compiled")
    compile_to(LOAN, out)
    return out


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copy(LOAN_TASK / "environment/data/loans.csv", tmp_path / "loans.csv")
    return tmp_path


def _env(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.structured_content
    # the same envelope as (compact) text, for any client
    assert Envelope.model_validate_json(result.content[0].text) == Envelope.model_validate(data)
    return data


async def test_stdio_list_describe_execute_block_guide_and_deopt(compiled: Path, workdir: Path) -> None:
    params = StdioServerParameters(command=SKILLWORKS, args=["serve-skills", str(compiled), "--workdir", str(workdir)])
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {HANDLE}
        # the handle is compact: no operator schema before the skill is selected
        assert "amortize" not in json.dumps(tools[HANDLE].input_schema) and len(tools[HANDLE].description) < 600

        described = _env(await client.call_tool(HANDLE, {}))
        assert described["status"] == "guidance" and described["trace"] == ["received", "disclosed"]
        op = described["output"]["operators"][0]
        assert op.startswith("amortize(loans: path, schedule: path, summary?: path")

        ran = _env(
            await client.call_tool(
                HANDLE,
                {
                    "operator": "amortize",
                    "inputs": {"loans": "loans.csv", "schedule": "out/schedule.csv", "summary": "out/summary.csv"},
                },
            )
        )
        assert ran["status"] == "execute", ran
        assert ran["output"]["exit_code"] == 1 or (workdir / "out/schedule.csv").is_file()
        if ran["output"]["exit_code"] != 0:  # the script wants the output dir to exist: the agent's next call
            (workdir / "out").mkdir()
            ran = _env(
                await client.call_tool(
                    HANDLE,
                    {
                        "operator": "amortize",
                        "inputs": {"loans": "loans.csv", "schedule": "out/schedule.csv", "summary": "out/summary.csv"},
                    },
                )
            )
        assert ran["output"]["exit_code"] == 0, ran
        assert (workdir / "out/schedule.csv").read_text().startswith("loan_id,period,payment_date")
        assert ran["trace"] == ["received", "selected", "inputs-bound", "policy-ok", "executed"]
        assert any(e.startswith("command: python3 ") for e in ran["evidence"])

        blocked = _env(await client.call_tool(HANDLE, {"operator": "amortize", "inputs": {"loans": "loans.csv"}}))
        assert blocked["status"] == "blocked" and "missing required input(s) schedule" in blocked["output"]
        assert blocked["deopt_hints"]
        unknown = _env(await client.call_tool(HANDLE, {"operator": "mortgage"}))
        assert unknown["status"] == "blocked" and "no operator 'mortgage'" in unknown["output"]

        guided = _env(await client.call_tool(HANDLE, {"query": "final payment true-up"}))
        assert guided["status"] == "guidance" and any("Final period" in h["text"] for h in guided["output"])

        assets = _env(await client.call_tool(HANDLE, {"operator": "list_skill_assets"}))
        assert {a["path"] for a in assets["output"]} == {"SKILL.md", "scripts/amortize.py"}
        raw = _env(await client.call_tool(HANDLE, {"operator": "get_skill_asset", "inputs": {"path": "SKILL.md"}}))
        assert raw["output"] == (LOAN / "SKILL.md").read_text()
        found = _env(
            await client.call_tool(HANDLE, {"operator": "search_skill_docs", "inputs": {"query": "Decimal rounding"}})
        )
        assert found["output"] and all(h["skill"] == LOAN.name for h in found["output"])
        escape = _env(
            await client.call_tool(HANDLE, {"operator": "get_skill_asset", "inputs": {"path": "../contract.json"}})
        )
        assert escape["status"] == "blocked"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streamable_http(compiled: Path, workdir: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [
            SKILLWORKS,
            "serve-skills",
            str(compiled),
            "--transport",
            "http",
            "--port",
            str(port),
            "--workdir",
            str(workdir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert HANDLE in {t.name for t in (await client.list_tools()).tools}
            ran = _env(
                await client.call_tool(
                    HANDLE, {"operator": "amortize", "inputs": {"loans": "loans.csv", "schedule": "s.csv"}}
                )
            )
            assert ran["status"] == "execute" and ran["output"]["exit_code"] == 0, ran
            assert (workdir / "s.csv").is_file()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
