"""The runtime's guards, through the official MCP client connected in-process to the server: risky operators
follow the policy, inputs cannot inject shell, the fallback cannot read outside the capsule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from skillworks.compile import compile_to, load_compiled_dir
from skillworks.compile.mcp_server import build_server
from skillworks.compile.runtime import SkillRuntime, SubprocessExecutor

SKILL = """---
name: file-ops
description: File operations for the workspace - count lines, fetch a remote file, wipe the build folder. Use for small file chores.
---

# File operations

## Commands

- `python3 scripts/ops.py count FILE.txt` — number of lines.
- `python3 scripts/ops.py wipe DIR` — delete a build folder.
- `bash scripts/fetch.sh URL` — download a file.
"""
OPS = """import shutil, sys
if sys.argv[1] == "count":
    print(sum(1 for _ in open(sys.argv[2])))
elif sys.argv[1] == "wipe":
    shutil.rmtree(sys.argv[2])
"""


@pytest.fixture
def runtime(tmp_path: Path) -> SkillRuntime:
    skill = tmp_path / "src" / "file-ops"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "scripts/ops.py").write_text(OPS)
    (skill / "scripts/fetch.sh").write_text('curl -fsSLO "$1"\n')
    compile_to(skill, tmp_path / "out")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("a\nb\nc\n")
    (work / "build").mkdir()
    return SkillRuntime(load_compiled_dir(tmp_path / "out"), SubprocessExecutor(work))


async def _call(runtime: SkillRuntime, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(name, args)
    data: dict[str, Any] = result.structured_content
    return data


async def test_a_dispatcher_runs_its_safe_operator(runtime: SkillRuntime) -> None:
    contract = next(iter(runtime.skills.values())).contract
    assert contract.shape == "dispatcher" and {o.id for o in contract.operators} == {"ops_count", "ops_wipe", "fetch"}
    out = await _call(runtime, "run_file_ops", {"operator": "ops_count", "inputs": {"file": "notes.txt"}})
    assert out["status"] == "execute" and out["output"]["stdout"].strip() == "3"


async def test_destructive_and_network_need_confirm_as_disclosed(runtime: SkillRuntime) -> None:
    work = Path(runtime.executor.workdir)
    wipe = {"operator": "ops_wipe", "inputs": {"dir": "build"}}
    out = await _call(runtime, "run_file_ops", wipe)
    assert out["status"] == "blocked" and "destructive" in out["output"] and (work / "build").is_dir()
    out = await _call(runtime, "run_file_ops", {**wipe, "confirm": True})
    assert out["status"] == "execute" and not (work / "build").exists()
    fetch = {"operator": "fetch", "inputs": {"url": "http://127.0.0.1:9/x"}}
    out = await _call(runtime, "run_file_ops", fetch)
    assert out["status"] == "blocked" and "network" in out["output"] and "confirm=true" in out["output"]
    out = await _call(runtime, "run_file_ops", {**fetch, "confirm": True})  # curl runs (and fails: port 9)
    assert out["status"] == "execute" and out["output"]["exit_code"] != 0
    # what the disclosure says is what the gate does
    disclosed = (await _call(runtime, "run_file_ops", {}))["output"]["policy"]
    assert "destructive, network: needs confirm=true" in disclosed
    ops = (await _call(runtime, "run_file_ops", {}))["output"]["operators"]
    assert any(o.startswith("ops_count(") and "[" not in o for o in ops)  # count does not inherit wipe's rmtree


async def test_inputs_cannot_inject_shell(runtime: SkillRuntime, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    out = await _call(
        runtime, "run_file_ops", {"operator": "ops_count", "inputs": {"file": f"notes.txt; touch {marker}"}}
    )
    assert out["status"] == "execute" and out["output"]["exit_code"] != 0 and not marker.exists()
    out = await _call(runtime, "run_file_ops", {"operator": "ops_count", "inputs": {"file": ["a", "b"]}})
    assert out["status"] == "blocked"
    out = await _call(runtime, "run_file_ops", {"operator": "ops_count", "inputs": {"file": "x", "shell": "id"}})
    assert out["status"] == "blocked" and "unknown input(s) shell" in out["output"]


async def test_fallback_stays_inside_the_capsule(runtime: SkillRuntime) -> None:
    for path in ("../contract.json", "/etc/passwd", "scripts/../../contract.json"):
        out = await _call(runtime, "run_file_ops", {"operator": "get_skill_asset", "inputs": {"path": path}})
        assert out["status"] == "blocked", path
    out = await _call(runtime, "run_file_ops", {"operator": "get_skill_asset", "inputs": {"path": "SKILL.md"}})
    assert out["status"] == "guidance" and out["output"] == SKILL
    # the fallback of one skill is that skill's package only
    out = await _call(runtime, "run_file_ops", {"operator": "list_skill_assets", "inputs": {"skill": "other"}})
    assert out["status"] == "guidance" and {a["path"] for a in out["output"]} >= {"SKILL.md", "scripts/ops.py"}
    assert (await _call(runtime, "get_skill_asset", {"skill": "file-ops", "path": "SKILL.md"}))["status"] == "blocked"
