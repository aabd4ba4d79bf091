"""The author's `metadata.compile` declaration wins over inference and is validated with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillworks.cli.main import app
from skillworks.compile import compile_skill, compile_to, load_compiled_dir
from skillworks.errors import UserError
from skillworks.skills import load_skill

BODY = """
# Report tool

Summarise a CSV file with the bundled script: `python3 scripts/report.py DATA.csv` prints totals per column.
Clean up with `python3 scripts/clean.py OUT_DIR` when the report is done. Both read only the given paths.
"""
REPORT = "import sys\nprint(open(sys.argv[1]).read()[:10])\n"
CLEAN = "import sys, shutil\nshutil.rmtree(sys.argv[1])\n"


def _skill(root: Path, compile_block: str) -> Path:
    (root / "scripts").mkdir(parents=True)
    meta = f"metadata:\n  compile:\n{compile_block}" if compile_block else ""
    (root / "SKILL.md").write_text(
        f"---\nname: {root.name}\ndescription: Summarise CSV files. Use for totals per column.\n{meta}---\n{BODY}"
    )
    (root / "scripts/report.py").write_text(REPORT)
    (root / "scripts/clean.py").write_text(CLEAN)
    return root


def test_the_declaration_fixes_shape_operators_names_and_risks(tmp_path: Path) -> None:
    inferred = compile_skill(load_skill(_skill(tmp_path / "plain", "")))
    assert {o.id for o in inferred.operators} == {"report", "clean"}
    block = (
        "    shape: dispatcher\n    operators: [report]\n"
        "    params: {report: {data: input_csv}}\n    risks: {report: [network]}\n"
    )
    declared = compile_skill(load_skill(_skill(tmp_path / "declared", block)))
    assert declared.shape == "dispatcher" and [o.id for o in declared.operators] == ["report"]
    [op] = declared.operators
    assert [p.name for p in op.params] == ["input_csv"] and op.input_schema["required"] == ["input_csv"]
    assert op.risks == ["network"] and "declared by the author" in op.risk_evidence[0]
    assert any(e.feature == "author_declaration" for e in declared.evidence)
    # the declared artifact survives the load-time re-derivation (the declaration is in the capsule)
    compile_to(tmp_path / "declared", tmp_path / "out")
    assert load_compiled_dir(tmp_path / "out")[0].contract.operators[0].params[0].name == "input_csv"


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("    shape: spellbook\n", "metadata.compile: shape"),
        ("    colour: blue\n", "metadata.compile: colour"),
        ("    operators: [reprot]\n", "names operator(s) reprot"),
        ("    params: {report: {nope: x}}\n", "no parameter nope"),
        ("    params: {report: {data: 'Bad Name'}}\n", "is not a parameter name"),
        ("    risks: {report: [explosive]}\n", "metadata.compile: risks"),
    ],
)
def test_a_bad_declaration_is_one_line(tmp_path: Path, block: str, problem: str) -> None:
    root = _skill(tmp_path / "bad", block)
    with pytest.raises(UserError, match=problem.replace("(", r"\(").replace(")", r"\)")) as exc:
        compile_skill(load_skill(root))
    assert "\n" not in str(exc.value) and "SKILL.md" in str(exc.value)
    result = CliRunner().invoke(app, ["compile", str(root), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and problem.split(":")[0] in result.output
