"""Skill use by import (`sys.path.append(skill_dir)` + `from tool import …`) and a script read as a file."""

from __future__ import annotations

from typing import Any

import pytest

from skillworks.trajectory import StagedSkillRef, Trajectory, TrajectoryBuilder, detect_skill_use

PDF = StagedSkillRef("pdf-tools", "/root/.claude/skills/pdf-tools", ("scripts/fill.py", "scripts/lib/pages.py"))
SKILLS = "/root/.claude/skills"


def _traj(*calls: tuple[str, dict[str, Any]]) -> Trajectory:
    b = TrajectoryBuilder("claude-code", "2.1", "m")
    b.add_user("Fill the form.")
    for i, (name, args) in enumerate(calls):
        b.add_agent("", tool_calls=[{"tool_call_id": f"c{i}", "function_name": name, "arguments": args}])
        b.add_observation({f"c{i}": "ok"})
    return b.finish()


def _use(*calls: tuple[str, dict[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    use = detect_skill_use(_traj(*calls), [PDF], SKILLS, None)
    return use.read, use.invoked, use.scripts_run


@pytest.mark.parametrize(
    "command,scripts",
    [
        # a heredoc that appends the skill's scripts dir and imports a script
        (
            "python3 - <<'EOF'\nimport sys\nsys.path.append('/root/.claude/skills/pdf-tools/scripts')\n"
            "from fill import fill_form\nfill_form('a.pdf')\nEOF",
            ["pdf-tools/scripts/fill.py"],
        ),
        # python -c with insert(0, ...), the skill root on the path and a dotted module
        (
            'python3 -c "import sys; sys.path.insert(0, \\"/root/.claude/skills/pdf-tools\\"); '
            'import scripts.lib.pages as p; p.count()"',
            ["pdf-tools/scripts/lib/pages.py"],
        ),
        # PYTHONPATH before the command
        (
            "cd /app && PYTHONPATH=/root/.claude/skills/pdf-tools/scripts python3 -c 'from fill import x'",
            ["pdf-tools/scripts/fill.py"],
        ),
        # a module that is not a script of the skill does not count; nor an import without the path
        ("python3 -c \"import sys; sys.path.append('/root/.claude/skills/pdf-tools'); import json\"", []),
        ("python3 -c 'from fill import fill_form'", []),
    ],
)
def test_script_used_by_import_counts(command: str, scripts: list[str]) -> None:
    _, _, run = _use(("Bash", {"command": command}))
    assert run == scripts


def test_an_agent_written_file_that_imports_the_skill_counts_when_run() -> None:
    code = "import sys\nsys.path.insert(0, '/root/.claude/skills/pdf-tools/scripts')\nfrom fill import fill_form\n"
    written = ("Write", {"file_path": "/app/solve.py", "content": code})
    assert _use(written)[2] == []  # written but never run: not used
    assert _use(written, ("Bash", {"command": "cd /app && python3 solve.py"}))[2] == ["pdf-tools/scripts/fill.py"]
    other = ("Bash", {"command": "python3 /tmp/other.py"})
    assert _use(written, other)[2] == []


@pytest.mark.parametrize(
    "call",
    [
        ("Read", {"file_path": "/root/.claude/skills/pdf-tools/scripts/fill.py"}),
        ("Bash", {"command": "cat /root/.claude/skills/pdf-tools/scripts/fill.py | head -50"}),
        ("read_file", {"file_path": "/app/.gemini/skills/pdf-tools/scripts/lib/pages.py"}),
    ],
)
def test_a_script_read_as_a_file_is_use_of_the_skill(call: tuple[str, dict[str, Any]]) -> None:
    read, invoked, run = _use(call)
    assert (read, invoked, run) == (["pdf-tools"], ["pdf-tools"], [])


def test_reading_a_file_that_is_not_a_script_or_of_another_skill_does_not_count() -> None:
    assert _use(("Read", {"file_path": "/root/.claude/skills/pdf-tools/notes.txt"}))[0] == []
    assert _use(("Read", {"file_path": "/root/.claude/skills/other/scripts/fill.py"}))[0] == []
    assert _use(("Bash", {"command": "echo /root/.claude/skills/pdf-tools/scripts/fill.py"}))[0] == []
