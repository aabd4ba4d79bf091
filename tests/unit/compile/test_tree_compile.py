"""Compiling a tree: an invalid skill becomes `insufficient` with a diagnostic and the rest compile; same-name
skills get distinct output directories and distinct handles; only executables become operators."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from skillworks.cli.main import app
from skillworks.compile import load_compiled_dir
from skillworks.compile.runtime import SkillRuntime, SubprocessExecutor

BODY = "\n# Tool\n\nRun `python3 scripts/tool.py INPUT.csv` to summarise a file.\n"


def _skill(root: Path, name: str, description: str, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{BODY}")
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_tree_with_invalid_and_same_name_skills_compiles_whole(tmp_path: Path) -> None:
    tool = {"scripts/tool.py": "import sys\nprint(open(sys.argv[1]).read()[:10])\n", "scripts/schema.xsd": "<x/>\n"}
    tree = tmp_path / "tree"
    _skill(tree / "a" / "tool", "tool", "Summarise a CSV file. Use for quick looks.", tool)
    _skill(tree / "b" / "tool", "tool", "Summarise a CSV file, another one. Use for quick looks.", tool)
    _skill(tree / "long-one", "long-one", "x" * 1068, tool)
    _skill(tree / "misnamed-dir", "other-name", "Summarise a CSV file. Use for quick looks.")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["compile", str(tree), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 of 4 skill(s) compiled (1 invalid, compiled as insufficient); 0 failed" in result.output
    assert "warning: long-one: invalid skill (" in result.output and "'description' is 1068 characters" in result.output
    dirs = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert len(dirs) == 4 and sum(d.startswith("tool--") for d in dirs) == 2
    skills = load_compiled_dir(out)
    long_one = next(s for s in skills if s.name == "long-one").contract
    assert long_one.shape == "insufficient" and long_one.policy.action == "execute"
    assert [o.execution.script for o in long_one.operators] == ["scripts/tool.py"]  # the .xsd is no operator
    misnamed = next(s for s in skills if s.name == "other-name").contract
    assert any("does not match its directory" in d for d in misnamed.diagnostics)
    assert not any(d.startswith("invalid skill") for d in misnamed.diagnostics)  # packaging, not content
    runtime = SkillRuntime(skills, SubprocessExecutor(tmp_path))
    assert len(runtime.handles) == 4 and all(len(h) <= 64 for h in runtime.handles)
    # a second run reuses every artifact under the same names
    again = CliRunner().invoke(app, ["compile", str(tree), "-o", str(out)])
    assert again.exit_code == 0 and again.output.count("up to date") == 4


def test_the_exit_status_counts_failed_skills(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "tree" / "tool", "tool", "Summarise a CSV file. Use for quick looks.")
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["compile", str(tmp_path / "tree"), "-o", str(out)]).exit_code == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nMore.\n")  # edited: stale artifact
    result = CliRunner().invoke(app, ["compile", str(tmp_path / "tree"), "-o", str(out)])
    assert result.exit_code == 1 and "changed since it was compiled" in result.output
