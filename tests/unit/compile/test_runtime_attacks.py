"""Attacks on the compiled-skill runtime: a value that names another slot, traversal and absolute paths, a
tampered contract, a background child that keeps stdout open, an output flood, over-long handles."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from skillworks.compile import compile_to, load_compiled_dir
from skillworks.compile.compiler import TamperedArtifactError
from skillworks.compile.contract import Execution, Operator, SourceRef
from skillworks.compile.execute import run_capped
from skillworks.compile.runtime import SkillRuntime, SubprocessExecutor, build_command, handle_name

SKILL = """---
name: grep-tool
description: Search text files for a pattern. Use to find lines in the workspace.
---

# Grep tool

## Commands

- `grep PATTERN FILE.txt` - lines of a file that match.
- `python3 scripts/count.py FILE.txt` - number of lines.
"""
COUNT = """import argparse
p = argparse.ArgumentParser()
p.add_argument("path")
print(sum(1 for _ in open(p.parse_args().path)))
"""


@pytest.fixture
def compiled(tmp_path: Path) -> Path:
    skill = tmp_path / "src" / "grep-tool"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "scripts/count.py").write_text(COUNT)
    compile_to(skill, tmp_path / "out")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path / "out"


def _runtime(out: Path) -> SkillRuntime:
    return SkillRuntime(load_compiled_dir(out), SubprocessExecutor(out.parent / "work"))


async def test_a_value_naming_another_slot_is_not_expanded_again(compiled: Path, tmp_path: Path) -> None:
    runtime = _runtime(compiled)
    [op] = [o for o in runtime.skills["grep-tool"].contract.operators if o.execution.kind == "command"]
    slots = [p.name for p in op.params]
    assert len(slots) == 2, op.execution.template
    marker = tmp_path / "pwned"
    # the first value contains the second slot; a replace-per-slot renderer would splice the second value in
    inputs = {slots[0]: "{" + slots[1] + "}", slots[1]: f"';touch {marker};'"}
    command = build_command(op, inputs, "/x")
    assert command.count("touch") == 1  # the payload appears once, as its own quoted argument
    out = await runtime.call(handle_name("grep-tool"), {"operator": op.id, "inputs": inputs})
    assert out.status == "execute" and not marker.exists()


async def test_traversal_and_absolute_paths_are_refused(compiled: Path) -> None:
    runtime = _runtime(compiled)
    for value in ("../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "a/../../b"):
        out = await runtime.call("run_grep_tool", {"operator": "count", "inputs": {"path": value}})
        assert out.status == "blocked" and "workspace" in str(out.output), value
        out = await runtime.call(
            "run_grep_tool", {"operator": "count", "inputs": {"path": "notes.txt", "extra_args": [f"--x={value}"]}}
        )
        assert out.status == "blocked", value
    out = await runtime.call("run_grep_tool", {"operator": "count", "inputs": {"path": "notes.txt"}})
    assert out.status == "execute" and out.output["stdout"].strip() == "2"


def test_a_tampered_contract_refuses_to_load(compiled: Path) -> None:
    path = compiled / "grep-tool" / "contract.json"
    original = path.read_text()
    data = json.loads(original)
    for op in data["operators"]:
        if op["execution"]["kind"] == "command":
            op["execution"]["template"] = "touch /tmp/owned; " + op["execution"]["template"]
    path.write_text(json.dumps(data))
    with pytest.raises(TamperedArtifactError, match="operators differ"):
        load_compiled_dir(compiled)
    data = json.loads(original)
    data["policy"]["risky"] = "confirm"
    data["policy"]["network"] = "confirm"
    for op in data["operators"]:
        op["risks"] = []  # dropping a risk flag is tampering too (here: there were none, so add one)
        op["execution"]["interpreter"] = "bash" if op["execution"]["kind"] == "script" else None
    path.write_text(json.dumps(data))
    with pytest.raises(TamperedArtifactError):
        load_compiled_dir(compiled)
    path.write_text(original)
    assert load_compiled_dir(compiled)[0].name == "grep-tool"


def _alive(pid: int) -> bool:
    """Running (a killed child that nobody has reaped yet is a zombie: dead)."""
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


async def test_a_background_child_dies_with_the_call_and_is_no_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = await run_capped(f"sleep 300 & echo $! > {pid_file}; echo done", str(tmp_path), timeout=30)
    assert result.exit_code == 0 and not result.timed_out and result.stdout.strip() == "done"
    assert time.monotonic() - started < 10
    assert not _alive(int(pid_file.read_text()))  # the background child went with the group
    result = await run_capped(f"sleep 300 & echo $! > {pid_file}; sleep 300", str(tmp_path), timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert not _alive(int(pid_file.read_text()))


async def test_an_output_flood_is_capped(tmp_path: Path) -> None:
    result = await run_capped("seq 1 20000000", str(tmp_path), timeout=120, cap=200_000)
    assert result.exit_code == 0
    assert len(result.stdout) < 250_000 and result.stdout.startswith("1\n2\n") and result.stdout.endswith("20000000\n")
    assert "bytes of output not kept" in result.stdout


def test_handles_fit_64_characters_stably() -> None:
    long = "a-" * 40 + "skill"
    handle = handle_name(long)
    assert len(handle) <= 64 and handle == handle_name(long) and handle.startswith("run_a_a_")
    other = handle_name("a-" * 40 + "skilm")
    assert other != handle and len(other) <= 64
    assert handle_name("pdf") == "run_pdf"
    assert handle_name("pdf", "salt") != handle_name("pdf") and len(handle_name("pdf", "salt")) <= 64


def test_an_unknown_slot_stays_literal() -> None:
    op = Operator(
        id="x",
        summary="x",
        input_schema={},
        output_schema={},
        execution=Execution(kind="command", template="echo {a}"),
        source=SourceRef(file="SKILL.md", line_start=1, line_end=1),
    )
    assert build_command(op, {}, "/r") == "echo {a}"  # an unknown slot stays literal text
