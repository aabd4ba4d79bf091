"""The compiler: artifacts for every shipped skill, the step graph's validation, package identity and stale
artifacts, the published JSON schema, and the `skillworks compile` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from skillworks.cli.main import app
from skillworks.compile import (
    BoundaryContract,
    StaleArtifactError,
    compile_skill,
    compile_to,
    contract_json_schema,
    load_compiled,
    load_compiled_dir,
)
from skillworks.compile.contract import SourceRef, Step
from skillworks.compile.lower import shell_problems, validate_graph
from skillworks.errors import SkillError
from skillworks.skills import discover_skills, load_skill

REPO = Path(__file__).resolve().parents[3]
LOAN = REPO / "examples/quickstart/loan-amortization/environment/skills/loan-amortization-schedules"


def test_every_shipped_skill_compiles_or_is_diagnosed() -> None:
    roots = discover_skills(REPO / "examples") + discover_skills(REPO / "tests/fixtures")
    compiled = 0
    for root in roots:
        try:
            package = load_skill(root)
        except SkillError:  # the defect fixtures are invalid skills on purpose: refused by the loader
            continue
        contract = compile_skill(package)
        BoundaryContract.model_validate_json(contract.model_dump_json())  # a valid artifact round-trips
        assert contract.package_hash == package.package_hash
        if contract.shape == "insufficient":
            assert contract.diagnostics
            assert contract.policy.action == ("execute" if contract.operators else "guide-only")
        compiled += 1
    assert compiled >= 30


def test_quickstart_skill_lowers_to_a_validated_graph_with_a_typed_operator() -> None:
    contract = compile_skill(load_skill(LOAN))
    assert (contract.shape, contract.type, contract.validation_level) == ("workflow", "solver-like", "validated")
    op = contract.operators[0]
    assert op.execution.script == "scripts/amortize.py"
    assert [p.name for p in op.params if p.required] == ["loans", "schedule"]
    assert {"--summary", "--id-col"} <= {p.flag for p in op.params}  # from the example and from argparse
    assert op.input_schema["required"] == ["loans", "schedule"]
    graph = contract.graph
    assert graph is not None and graph.valid
    assert [s.depends_on for s in graph.steps][:2] == [[], ["s1"]]
    runnable = [s for s in graph.steps if s.operator == "amortize"]
    assert runnable and runnable[0].source.file == "SKILL.md" and runnable[0].source.line_start > 1
    capsule = {a.path: a.sha256 for a in contract.fallback.assets}
    assert set(capsule) == {"SKILL.md", "scripts/amortize.py"}
    assert any("Final period" in c.text for c in contract.fallback.chunks)


def _step(sid: str, deps: list[str], inputs: list[str] = (), outputs: list[str] = ()) -> Step:  # type: ignore[assignment]
    return Step(
        id=sid,
        name=sid,
        type="instruction",
        depends_on=deps,
        inputs=list(inputs),
        outputs=list(outputs),
        source=SourceRef(file="SKILL.md", line_start=1, line_end=1),
    )


def test_graph_validation_finds_cycles_unknown_dependencies_and_unbound_inputs() -> None:
    assert validate_graph([_step("s1", []), _step("s2", ["s1"])]) == []
    assert any("cycle" in p for p in validate_graph([_step("s1", ["s2"]), _step("s2", ["s1"])]))
    assert any("unknown step s9" in p for p in validate_graph([_step("s1", ["s9"])]))
    unbound = validate_graph([_step("s1", [], inputs=["a.csv"]), _step("s2", ["s1"], outputs=["a.csv"])])
    assert any("produced only by a later step" in p for p in unbound)


def test_shell_blocks_must_parse_and_doc_placeholders_are_slots() -> None:
    assert shell_problems(["python3 x.py <input.json>", "ls -l | wc -l"]) == []
    problems = shell_problems(["echo 'unclosed", "ls"])
    assert len(problems) == 1 and "echo 'unclosed" in problems[0]


def _copy(tmp_path: Path) -> Path:
    skill = tmp_path / "src" / LOAN.name
    shutil.copytree(LOAN, skill)
    return skill


def test_a_stale_artifact_is_refused_naming_the_skill(tmp_path: Path) -> None:
    skill = _copy(tmp_path)
    out = tmp_path / "out"
    first = compile_to(skill, out)
    assert not first.reused and compile_to(skill, out).reused  # keyed by the package hash
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more rule.\n")
    with pytest.raises(StaleArtifactError, match="'loan-amortization-schedules' changed since it was compiled"):
        compile_to(skill, out)
    with pytest.raises(StaleArtifactError, match="loan-amortization-schedules"):
        load_compiled(out / skill.name, source=skill)
    again = compile_to(skill, out, recompile=True)
    assert not again.reused and load_compiled(out / skill.name, source=skill).contract == again.contract


def test_a_tampered_capsule_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    compile_to(_copy(tmp_path), out)
    script = out / LOAN.name / "capsule" / "scripts" / "amortize.py"
    script.write_text(script.read_text() + "\nimport os; os.system('id')\n")
    with pytest.raises(StaleArtifactError, match="does not match the contract's package hash"):
        load_compiled_dir(out)


def test_contract_validates_against_the_published_schema(tmp_path: Path) -> None:
    outcome = compile_to(_copy(tmp_path), tmp_path / "out")
    data = json.loads((outcome.path / "contract.json").read_text())
    jsonschema.validate(data, contract_json_schema())
    data["shape"] = "spellbook"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, contract_json_schema())


def test_cli_compile_json_and_explain(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(app, ["compile", str(REPO / "examples/quickstart"), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert {r["skill"] for r in records} == {
        "loan-amortization-schedules",
        "clinical-lab-si-units",
        "eu-vat-invoice-rendering",
        "iso-week-reporting",
    }
    assert all(r["shape"] == "workflow" and r["operators"] for r in records)
    assert (out / "contract.schema.json").is_file()
    result = runner.invoke(app, ["compile", str(LOAN), "-o", str(out), "--explain"])
    assert result.exit_code == 0 and "evidence" in result.output and "amortize" in result.output


def test_cli_compile_bad_input_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from skillworks.cli.main import main

    (tmp_path / "empty").mkdir()
    monkeypatch.setattr("sys.argv", ["skillworks", "compile", str(tmp_path / "empty"), "-o", str(tmp_path / "out")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no SKILL.md here or below" in err and str(tmp_path / "empty") in err
    assert not (tmp_path / "out").exists()  # nothing written when there is nothing to compile


def test_model_judgement_through_the_gateway(tmp_path: Path, labeled_skills: list[tuple[Path, str]]) -> None:
    """`--model` with the scripted provider (the one test double): the judgement goes through a real gateway,
    is used only where the structural evidence is close, and its tokens are the compile step's."""
    vague = next(root for root, label in labeled_skills if root.name == "think-harder")
    good = tmp_path / "good.yaml"
    good.write_text('- text: \'Answer: {"shape": "reference", "reason": "advice to read"}\'\n')
    outcome = compile_to(vague, tmp_path / "out", model=f"scripted/{good}")
    c = outcome.contract
    assert c.shape == "reference" and c.compile.judge_shape == "reference"
    assert c.compile.input_tokens > 0 and c.compile.output_tokens > 0
    assert (outcome.path / "judge-gateway.jsonl").read_text().strip()
    assert any(e.feature == "llm_judgement" and e.supports == "reference" for e in c.evidence)
    # a clear structural decision stays; an unreadable answer is a diagnostic, never a crash
    scripted_workflow = next(root for root, label in labeled_skills if root.name == "csv-to-parquet")
    clear = compile_to(scripted_workflow, tmp_path / "out2", model=f"scripted/{good}").contract
    assert clear.shape == "workflow" and clear.compile.judge_shape == "reference"
    garbled = tmp_path / "garbled.yaml"
    garbled.write_text("- text: 'I think it is a cookbook'\n")
    bad = compile_to(vague, tmp_path / "out3", model=f"scripted/{garbled}").contract
    assert bad.shape == "insufficient" and any("unusable" in d for d in bad.diagnostics)


def test_the_risk_scan_reads_a_whole_script(tmp_path: Path) -> None:
    """A destructive line after 100 kB of harmless code still marks the operator (the scan once stopped at 64 kB)."""
    skill = tmp_path / "big-script"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: big-script\ndescription: Cleans a build directory. Use to reset a build.\n---\n\n"
        "# Big script\n\nTo reset a build directory:\n\n1. Stop any build that is running.\n"
        "2. Clean the directory with the bundled script:\n\n   ```bash\n   bash scripts/clean.sh build/\n   ```\n\n"
        "3. Start the build again.\n"
    )
    (skill / "scripts" / "clean.sh").write_text("#!/bin/sh\n" + "echo step\n" * 12_000 + 'rm -rf "$1"\n')
    contract = compile_skill(load_skill(skill))
    [op] = [o for o in contract.operators if o.execution.script == "scripts/clean.sh"]
    assert "destructive" in op.risks
    assert any(e.startswith("destructive: scripts/clean.sh rm -rf") for e in op.risk_evidence)
