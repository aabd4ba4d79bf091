"""Skill-use detection: listed / read / invoked / scripts_run, from tool calls only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillworks.skills.package import SkillAsset, SkillPackage
from skillworks.trajectory import (
    StagedSkillRef,
    Trajectory,
    TrajectoryBuilder,
    convert_claude_code,
    convert_codex,
    convert_gemini_cli,
    convert_opencode,
    detect_skill_use,
)

LOGS = Path(__file__).parents[2] / "fixtures" / "native_logs"
CSV = StagedSkillRef("csv-report", None, ("scripts/summarize.py",))
PDF = StagedSkillRef("pdf-tools", "/root/.claude/skills/pdf-tools", ("scripts/fill.py", "bin/run.sh"))


_OTHER_OUTPUT = "see /root/.claude/skills/pdf-tools/SKILL.md and scripts/fill.py"
CSV_SKILL_MD = "---\nname: csv-report\ndescription: Summarize CSV files.\n---\n# CSV report\n"


def _traj(*calls: tuple[str, dict[str, Any]], prose: str = "", output: str = _OTHER_OUTPUT) -> Trajectory:
    """The builtin agent's shape: system prompt, user instruction, one agent step per call (each answered with
    `output`)."""
    b = TrajectoryBuilder("builtin", "0.1.0", "scripted/x")
    b.add_system("Skills available: csv-report (summarize CSV files), pdf-tools.")
    b.add_user("Use the csv-report skill: read /skills/csv-report/SKILL.md and run scripts/summarize.py")
    for i, (name, args) in enumerate(calls):
        b.add_agent(prose, tool_calls=[{"tool_call_id": f"c{i}", "function_name": name, "arguments": args}])
        b.add_observation({f"c{i}": output})
    b.add_agent(prose or "done")
    return b.finish()


# -- each converter's fixture -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "convert,fixture,skills_dir,read",
    [
        (convert_claude_code, "claude_code.stream.jsonl", "/root/.claude/skills", []),
        (convert_codex, "codex.exec.jsonl", "/root/.agents/skills", ["csv-report"]),
        (convert_gemini_cli, "gemini_cli.stream.jsonl", "/app/.gemini/skills", []),
        (convert_opencode, "opencode.run.jsonl", "/root/.config/opencode/skill", []),
    ],
)
def test_fixture_logs(convert: Any, fixture: str, skills_dir: str, read: list[str]) -> None:
    out = convert(LOGS / fixture, instruction="Summarize data.csv into report.md.")
    use = detect_skill_use(out.trajectory, [CSV], skills_dir, out.listed_skills)
    assert use.listed == ["csv-report"]
    assert use.read == read
    assert use.invoked == ["csv-report"]
    assert use.scripts_run == ["csv-report/scripts/summarize.py"]


def test_claude_code_bundled_skills_are_not_listed_and_prose_does_not_count() -> None:
    out = convert_claude_code(LOGS / "claude_code.stream.jsonl")
    assert out.listed_skills is not None and "verify" in out.listed_skills
    # 'verify' is staged here too, but only appears in the agent's prose ("I did not use the verify skill")
    use = detect_skill_use(out.trajectory, [CSV, StagedSkillRef("verify")], "/root/.claude/skills", out.listed_skills)
    assert use.listed == ["csv-report", "verify"]
    assert use.invoked == ["csv-report"]


def test_none_condition_detects_nothing_even_when_skills_are_mentioned() -> None:
    out = convert_claude_code(LOGS / "claude_code.stream.jsonl")
    use = detect_skill_use(out.trajectory, [], None, out.listed_skills)
    assert use.model_dump() == {
        "listed": [],
        "read": [],
        "invoked": [],
        "scripts_run": [],
        "harness_provided": [],
        "failed": [],
    }


def test_listed_defaults_to_staged_when_the_harness_does_not_report() -> None:
    use = detect_skill_use(_traj(), [CSV, PDF], "/skills", None)
    assert use.listed == ["csv-report", "pdf-tools"]
    assert use.read == use.invoked == use.scripts_run == []


# -- the builtin agent's tools: bash, read_file, write_file, skill ---------------------------------------------
def test_builtin_read_file_of_skill_md_is_a_read() -> None:
    use = detect_skill_use(_traj(("read_file", {"path": "/skills/csv-report/SKILL.md"})), [CSV], "/skills", None)
    assert use.read == ["csv-report"] and use.invoked == ["csv-report"]


def test_builtin_skill_tool_is_an_invocation_not_a_read() -> None:
    use = detect_skill_use(_traj(("skill", {"name": "csv-report"})), [CSV], "/skills", None)
    assert use.read == [] and use.invoked == ["csv-report"]


def test_builtin_bash_runs_a_skill_script() -> None:
    traj = _traj(("bash", {"command": "python3 /skills/csv-report/scripts/summarize.py data.csv > report.md"}))
    assert detect_skill_use(traj, [CSV], "/skills", None).scripts_run == ["csv-report/scripts/summarize.py"]


def test_writing_a_skill_md_is_not_a_read() -> None:
    traj = _traj(("write_file", {"path": "/skills/csv-report/SKILL.md", "content": "x"}))
    assert detect_skill_use(traj, [CSV], "/skills", None).read == []


def test_tool_output_and_prose_mentioning_skills_do_not_count() -> None:
    # every observation in _traj mentions pdf-tools' SKILL.md and script; the prose names csv-report
    traj = _traj(("bash", {"command": "ls /app"}), prose="I will read csv-report/SKILL.md and run summarize.py")
    use = detect_skill_use(traj, [CSV, PDF], "/skills", None)
    assert use.read == use.invoked == use.scripts_run == []


def test_skill_tool_for_a_skill_that_was_not_staged_does_not_count() -> None:
    traj = _traj(("skill", {"name": "deep-research"}), ("activate_skill", {"name": "csv-report"}))
    assert detect_skill_use(traj, [CSV], "/skills", None).invoked == ["csv-report"]


# -- harness skill tools --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,args",
    [
        ("Skill", {"skill": "csv-report"}),
        ("Skill", {"skill": "my-plugin:csv-report"}),
        ("Skill", {"command": "csv-report"}),
        ("Skill", {"command": "/csv-report"}),
        ("skill", {"name": "csv-report"}),
        ("activate_skill", {"name": "csv-report"}),
        ("skills_csv_report", {}),
    ],
)
def test_skill_tools_of_each_harness(name: str, args: dict[str, Any]) -> None:
    use = detect_skill_use(_traj((name, args)), [CSV], "/skills", None)
    assert use.invoked == ["csv-report"] and use.read == []


# -- reads ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,args",
    [
        ("Read", {"file_path": "/root/.claude/skills/csv-report/SKILL.md"}),
        ("read", {"filePath": "/home/agent/.config/opencode/skill/csv-report/SKILL.md"}),
        ("read_file", {"absolute_path": "/app/.gemini/skills/csv-report/SKILL.md"}),
        ("read_many_files", {"paths": ["/app/README.md", "/app/.agents/skills/csv-report/SKILL.md"]}),
        ("Bash", {"command": "cat ~/.claude/skills/csv-report/SKILL.md"}),
        ("command_execution", {"command": "/bin/bash -lc \"sed -n '1,80p' /root/.agents/skills/csv-report/SKILL.md\""}),
        ("run_shell_command", {"command": "cd /root/.codex/skills && head -50 csv-report/SKILL.md"}),
        ("bash", {"command": "cd /opt/staged/csv-report && cat SKILL.md"}),
        ("Bash", {"command": "timeout 5 sudo head -n 20 ~/.claude/skills/csv-report/SKILL.md"}),
    ],
)
def test_reads_of_skill_md(name: str, args: dict[str, Any]) -> None:
    staged = StagedSkillRef("csv-report", "/opt/staged/csv-report", ())
    use = detect_skill_use(_traj((name, args), output=CSV_SKILL_MD), [staged], "/skills", None)
    assert use.read == ["csv-report"] and use.invoked == ["csv-report"]


@pytest.mark.parametrize(
    "command,output",
    [
        ("test -f ~/.claude/skills/csv-report/SKILL.md && echo yes", "yes"),
        (
            "ls -l /root/.agents/skills/csv-report/SKILL.md",
            "-rw-r--r-- 1 root root 912 Dec  1 /root/.agents/skills/csv-report/SKILL.md",
        ),
        ("wc -c ~/.claude/skills/csv-report/SKILL.md", "912 /root/.claude/skills/csv-report/SKILL.md"),
        (
            "stat /root/.agents/skills/csv-report/SKILL.md",
            "  File: /root/.agents/skills/csv-report/SKILL.md\n  Size: 912",
        ),
        ("cat ~/.claude/skills/csv-report/SKILL.md | wc -l", "14"),
        ("[ -e /root/.agents/skills/csv-report/SKILL.md ]", ""),
        # an attack: the output looks like the file, but nothing read it
        ("ls ~/.claude/skills/csv-report/SKILL.md && echo 'name: csv-report'", "SKILL.md\nname: csv-report"),
        ("printf -- '---\\nname: csv-report\\n' # /root/.agents/skills/csv-report/SKILL.md", CSV_SKILL_MD),
    ],
)
def test_a_command_that_only_tests_or_measures_skill_md_is_no_read(command: str, output: str) -> None:
    """Only content that reached the agent counts (issue 28): a test, a listing or a byte count of SKILL.md
    names the file but shows the agent none of it."""
    for tool in ("Bash", "exec_command"):
        key = "command" if tool == "Bash" else "cmd"
        use = detect_skill_use(_traj((tool, {key: command}), output=output), [CSV], "/root/.claude/skills", None)
        assert use.read == [] and use.invoked == [] and use.failed == [], (tool, command)


def test_a_shell_read_counts_by_a_body_line_it_printed() -> None:
    """`sed -n 5,9p SKILL.md` prints no frontmatter; a distinctive line of the body is the evidence."""
    pkg_ref = StagedSkillRef("csv-report", None, (), ("Run scripts/summarize.py on the CSV the user names.",))
    cmd = {"cmd": "sed -n 5,9p /root/.agents/skills/csv-report/SKILL.md"}
    shown = _traj(("exec_command", cmd), output="2. Run scripts/summarize.py on the CSV the user names.\n")
    assert detect_skill_use(shown, [pkg_ref], None, None).read == ["csv-report"]
    empty = _traj(("exec_command", cmd), output="")
    assert detect_skill_use(empty, [pkg_ref], None, None).read == []


def test_a_shell_read_without_recorded_output_counts_only_for_a_printing_command() -> None:
    b = TrajectoryBuilder("builtin", "0.1.0", "scripted/x")
    b.add_user("go")
    for i, cmd in enumerate(("wc -c ~/.claude/skills/csv-report/SKILL.md", "cat ~/.claude/skills/pdf/SKILL.md")):
        b.add_agent("", tool_calls=[{"tool_call_id": f"c{i}", "function_name": "Bash", "arguments": {"command": cmd}}])
    b.add_agent("done")
    pdf = StagedSkillRef("pdf")
    assert detect_skill_use(b.finish(), [CSV, pdf], "/root/.claude/skills", None).read == ["pdf"]


@pytest.mark.parametrize(
    "name,args",
    [
        ("Read", {"file_path": "/app/csv-report/SKILL.md"}),  # not under a skills dir
        ("Read", {"file_path": "/root/.claude/skills/csv-report/README.md"}),
        ("Read", {"file_path": "/root/.claude/skills/other/SKILL.md"}),  # not staged
        ("Grep", {"pattern": "SKILL.md", "path": "/root/.claude/skills/csv-report"}),
        ("Write", {"file_path": "/root/.claude/skills/csv-report/SKILL.md", "content": ""}),
    ],
)
def test_non_reads(name: str, args: dict[str, Any]) -> None:
    assert detect_skill_use(_traj((name, args)), [CSV], "/skills", None).read == []


def test_staged_path_outside_a_skills_dir_is_known() -> None:
    staged = StagedSkillRef("csv-report", "/opt/tools/csv-report", ("scripts/summarize.py",))
    traj = _traj(
        ("Read", {"file_path": "/opt/tools/csv-report/SKILL.md"}),
        ("Bash", {"command": "/opt/tools/csv-report/scripts/summarize.py x.csv"}),
    )
    use = detect_skill_use(traj, [staged], None, None)
    assert use.read == ["csv-report"]
    assert use.scripts_run == ["csv-report/scripts/summarize.py"]


# -- scripts --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command,expected",
    [
        ("python3 /root/.claude/skills/pdf-tools/scripts/fill.py form.pdf", ["pdf-tools/scripts/fill.py"]),
        ("/root/.claude/skills/pdf-tools/scripts/fill.py form.pdf", ["pdf-tools/scripts/fill.py"]),
        ("bash /root/.claude/skills/pdf-tools/bin/run.sh", ["pdf-tools/bin/run.sh"]),  # a script asset outside scripts/
        ("cd /root/.claude/skills/pdf-tools && ./scripts/fill.py a.pdf", ["pdf-tools/scripts/fill.py"]),
        ("cd /root/.claude/skills/pdf-tools/scripts; python fill.py", ["pdf-tools/scripts/fill.py"]),
        ("/bin/bash -lc 'cd ~/.claude/skills/pdf-tools && uv run scripts/fill.py x'", ["pdf-tools/scripts/fill.py"]),
        ("FOO=1 timeout 60 python3 -u /skills/pdf-tools/scripts/fill.py | tee log", ["pdf-tools/scripts/fill.py"]),
        ("ls && sh /skills/pdf-tools/scripts/new.sh", ["pdf-tools/scripts/new.sh"]),  # any file under scripts/
        ("cat /root/.claude/skills/pdf-tools/scripts/fill.py", []),  # reading a script is not running it
        ("python3 -m pdf_tools.fill /root/.claude/skills/pdf-tools/scripts/fill.py", []),
        ("echo /root/.claude/skills/pdf-tools/scripts/fill.py", []),
        ("python3 /root/.claude/skills/pdf-tools/README.md", []),  # not a script asset
        ("python3 /app/scripts/fill.py", []),  # the workspace's own script
        (
            "python3 /root/.claude/skills/pdf-tools/scripts/fill.py && python3 "
            "/root/.claude/skills/pdf-tools/scripts/fill.py",
            ["pdf-tools/scripts/fill.py"],
        ),
    ],
)
def test_scripts_run(command: str, expected: list[str]) -> None:
    traj = _traj(("Bash", {"command": command}))
    assert detect_skill_use(traj, [PDF], "/root/.claude/skills", None).scripts_run == expected


def test_codex_list_form_command() -> None:
    traj = _traj(("command_execution", {"command": ["bash", "-lc", "python3 /skills/pdf-tools/scripts/fill.py"]}))
    assert detect_skill_use(traj, [PDF], "/skills", None).scripts_run == ["pdf-tools/scripts/fill.py"]


def test_unbalanced_quotes_do_not_crash() -> None:
    traj = _traj(("bash", {"command": "python3 /skills/pdf-tools/scripts/fill.py 'oops"}))
    assert detect_skill_use(traj, [PDF], "/skills", None).scripts_run == ["pdf-tools/scripts/fill.py"]


def test_staged_ref_from_package(tmp_path: Path) -> None:
    pkg = SkillPackage(
        name="pdf-tools",
        description="d",
        root=tmp_path,
        body="",
        frontmatter={},
        assets=(
            SkillAsset(path="scripts/fill.py", kind="script", size=1, sha256="0" * 64),
            SkillAsset(path="references/api.md", kind="reference", size=1, sha256="1" * 64),
        ),
        skill_md_sha256="2" * 64,
        package_hash="3" * 64,
    )
    ref = StagedSkillRef.from_package(pkg, "/skills/pdf-tools")
    assert ref == StagedSkillRef("pdf-tools", "/skills/pdf-tools", ("scripts/fill.py",))


@pytest.mark.parametrize(
    "name,args,counts",
    [
        ("mcp__fs__read_text_file", {"path": "/skills/csv-report/SKILL.md"}, True),
        ("readFile", {"path": "/skills/csv-report/SKILL.md"}, True),
        ("str_replace_based_edit_tool", {"command": "view", "path": "/skills/csv-report/SKILL.md"}, True),
        ("str_replace_based_edit_tool", {"command": "create", "path": "/skills/csv-report/SKILL.md"}, False),
        ("review_pr", {"path": "/skills/csv-report/SKILL.md"}, False),
        ("create_thread", {"path": "/skills/csv-report/SKILL.md"}, False),
        ("read_write_file", {"path": "/skills/csv-report/SKILL.md"}, False),
    ],
)
def test_read_tool_names(name: str, args: dict[str, Any], counts: bool) -> None:
    use = detect_skill_use(_traj((name, args)), [CSV], "/skills", None)
    assert use.read == (["csv-report"] if counts else [])


# -- failed loads (issue 17): a skill tool that returned an error did not load the skill --------------------
def _failing(fixture: str, old: str, new: str, tmp_path: Path) -> Path:
    """The fixture log with its skill-loading result replaced by the harness's error form."""
    text = (LOGS / fixture).read_text()
    assert old in text, old
    path = tmp_path / fixture
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    "convert,fixture,skills_dir,old,new",
    [
        (
            convert_claude_code,
            "claude_code.stream.jsonl",
            "/root/.claude/skills",
            '"content":"Launching skill: csv-report","is_error":false',
            '"content":"<tool_use_error>Unknown skill: csv-report</tool_use_error>","is_error":true',
        ),
        (
            convert_opencode,
            "opencode.run.jsonl",
            "/root/.config/opencode/skill",
            '"status":"completed","input":{"name":"csv-report"},"output":"## Skill: csv-report',
            '"status":"error","input":{"name":"csv-report"},"error":"ripgrep execution failed","output":"',
        ),
        (
            convert_gemini_cli,
            "gemini_cli.stream.jsonl",
            "/app/.gemini/skills",
            '"status":"success","output":"Skill csv-report activated."',
            '"status":"error","output":"","error":{"message":"skill not found"}',
        ),
    ],
)
def test_a_failed_skill_load_is_recorded_and_not_counted_as_invoked(
    convert: Any, fixture: str, skills_dir: str, old: str, new: str, tmp_path: Path
) -> None:
    out = convert(_failing(fixture, old, new, tmp_path), instruction="Summarize data.csv into report.md.")
    use = detect_skill_use(out.trajectory, [CSV], skills_dir, out.listed_skills)
    assert use.failed == ["csv-report"]
    assert use.invoked == []  # the script still ran from the skill's dir: that is scripts_run, not a load
    assert use.scripts_run == ["csv-report/scripts/summarize.py"]


def test_an_unanswered_skill_load_is_failed_and_a_retry_that_worked_counts() -> None:
    b = TrajectoryBuilder("builtin", "0.1.0", "scripted/x")
    b.add_user("go")
    b.add_agent("", tool_calls=[{"tool_call_id": "a", "function_name": "skill", "arguments": {"name": "pdf-tools"}}])
    use = detect_skill_use(b.finish(), [PDF, CSV], None, None)
    assert (use.invoked, use.failed) == ([], ["pdf-tools"])  # killed before the tool answered

    b.add_agent("", tool_calls=[{"tool_call_id": "b", "function_name": "skill", "arguments": {"name": "csv-report"}}])
    b.add_observation([{"source_call_id": "b", "content": "error: busy", "extra": {"is_error": True}}])
    b.add_agent("", tool_calls=[{"tool_call_id": "c", "function_name": "skill", "arguments": {"name": "csv-report"}}])
    b.add_observation({"c": "# Skill: csv-report"})
    use = detect_skill_use(b.finish(), [PDF, CSV], None, None)
    assert use.invoked == ["csv-report"] and use.failed == ["pdf-tools", "csv-report"]


def test_a_failed_load_of_a_skill_that_was_not_staged_is_a_failed_load() -> None:
    """A made-up or misspelt name is no invocation of anything; the failed load is recorded under that name.
    A load of a skill that was not staged that worked (the harness's own) is no task-skill use either."""
    b = TrajectoryBuilder("claude-code", "2", "m")
    b.add_user("go")
    for i, name in enumerate(("csv-reports", "verify", "csv-report")):
        b.add_agent("", tool_calls=[{"tool_call_id": f"s{i}", "function_name": "Skill", "arguments": {"skill": name}}])
    b.add_observation(
        [
            {"source_call_id": "s0", "content": "Unknown skill: csv-reports", "extra": {"is_error": True}},
            {"source_call_id": "s1", "content": "Launching skill: verify"},
            {"source_call_id": "s2", "content": "Launching skill: csv-report"},
        ]
    )
    use = detect_skill_use(b.finish(), [CSV], "/root/.claude/skills", ["csv-report", "verify"])
    assert (use.invoked, use.failed) == (["csv-report"], ["csv-reports"])


def test_a_failed_shell_read_of_skill_md_is_a_failed_load() -> None:
    """`cat` of a wrong path fails without printing the SKILL.md: no read. A failed command that did print it
    (`cat SKILL.md && false`) read it."""
    b = TrajectoryBuilder("codex", "0", "m")
    b.add_user("go")
    wrong = {"cmd": "cat /root/.agents/skill/pdf-tools/SKILL.md"}
    b.add_agent("", tool_calls=[{"tool_call_id": "w", "function_name": "exec_command", "arguments": wrong}])
    b.add_observation(
        [{"source_call_id": "w", "content": "cat: ...: No such file or directory", "extra": {"status": "failed"}}]
    )
    use = detect_skill_use(b.finish(), [PDF, CSV], "/root/.agents/skills", None)
    assert (use.read, use.invoked, use.failed) == ([], [], ["pdf-tools"])

    right = {"cmd": "cat /root/.agents/skills/csv-report/SKILL.md && false"}
    b.add_agent("", tool_calls=[{"tool_call_id": "r", "function_name": "exec_command", "arguments": right}])
    shown = "---\nname: csv-report\ndescription: CSV\n---\n# CSV"
    b.add_observation([{"source_call_id": "r", "content": shown, "extra": {"status": "failed", "exit_code": 1}}])
    use = detect_skill_use(b.finish(), [PDF, CSV], "/root/.agents/skills", None)
    assert (use.read, use.failed) == (["csv-report"], ["pdf-tools"])

    # a skill that was never staged: its failed read is a failed load under the name the agent gave
    made_up = {"cmd": "cat /root/.agents/skills/tax-forms/SKILL.md"}
    b.add_agent("", tool_calls=[{"tool_call_id": "m", "function_name": "exec_command", "arguments": made_up}])
    b.add_observation([{"source_call_id": "m", "content": "cat: No such file", "extra": {"status": "failed"}}])
    b.add_agent(
        "",
        tool_calls=[{"tool_call_id": "n", "function_name": "Read", "arguments": {"file_path": "/x/skills/y/SKILL.md"}}],
    )
    b.add_observation([{"source_call_id": "n", "content": "File does not exist.", "extra": {"is_error": True}}])
    use = detect_skill_use(b.finish(), [PDF, CSV], "/root/.agents/skills", None)
    assert (use.invoked, use.failed) == (["csv-report"], ["pdf-tools", "tax-forms", "y"])


def test_a_read_tool_error_on_skill_md_is_a_failed_read() -> None:
    b = TrajectoryBuilder("claude-code", "2", "m")
    b.add_user("go")
    path = {"file_path": "/root/.claude/skills/pdf-tools/SKILL.md"}
    b.add_agent("", tool_calls=[{"tool_call_id": "r", "function_name": "Read", "arguments": path}])
    b.add_observation([{"source_call_id": "r", "content": "EACCES", "extra": {"is_error": True}}])
    use = detect_skill_use(b.finish(), [PDF], "/root/.claude/skills", None)
    assert (use.read, use.invoked, use.failed) == ([], [], ["pdf-tools"])


def test_compiled_skill_handles_count_as_use() -> None:
    """A compiled skill is used through its runtime handle, whatever prefix the harness gives the tool."""
    from skillworks.trajectory import SkillHandleRef

    card = SkillHandleRef("card-writer", "run_card_writer", (("write_card", "scripts/write_card.sh"),))
    b = TrajectoryBuilder("codex", "0", "scripted/x")
    b.add_user("write a card")
    calls = [
        ("mcp__skillworks__run_card_writer", {"server": "skillworks", "tool": "run_card_writer", "arguments": {}}),
        ("mcp__skillworks__run_card_writer", {"operator": "write_card", "inputs": {"name": "Ada"}}),
        ("skillworks_run_card_writer", {"operator": "get_skill_asset", "inputs": {"path": "SKILL.md"}}),
    ]
    answers = ['{"status":"guidance"}', '{"status":"execute","output":{"exit_code":0}}', '{"status":"guidance"}']
    for i, ((name, args), answer) in enumerate(zip(calls, answers, strict=True)):
        b.add_agent("", tool_calls=[{"tool_call_id": f"c{i}", "function_name": name, "arguments": args}])
        b.add_observation({f"c{i}": answer})
    b.add_agent("", tool_calls=[{"tool_call_id": "c9", "function_name": "run_card_writer", "arguments": {}}])
    use = detect_skill_use(b.finish(), [], None, [], handles=[card])
    assert use.listed == ["card-writer"] and use.invoked == ["card-writer"] and use.read == ["card-writer"]
    assert use.scripts_run == ["card-writer/scripts/write_card.sh"]
    assert use.failed == ["card-writer"]  # the last call got no answer
    blocked = TrajectoryBuilder("builtin", "0", "scripted/x")
    blocked.add_user("x")
    blocked.add_agent("", tool_calls=[{"tool_call_id": "b", "function_name": "run_card_writer",
                                        "arguments": {"operator": "write_card"}}])  # fmt: skip
    blocked.add_observation({"b": '{"status":"blocked"}'})
    use = detect_skill_use(blocked.finish(), [], None, None, handles=[card])
    assert use.invoked == ["card-writer"] and use.scripts_run == []  # selected, but nothing ran
