from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.check import audit_task_leakage, leakage_task_issues
from skillworks.check.model import Dimension, Severity
from skillworks.skills.package import load_skill
from skillworks.tasks.model import ScriptDir, Task

LEAKAGE = Path(__file__).resolve().parents[2] / "fixtures" / "leakage"
TASK = LEAKAGE / "task"
INSTRUCTION = (TASK / "instruction.md").read_text()


def _task(case: str, instruction: str = INSTRUCTION) -> Task:
    return Task(
        id="monthly-revenue",
        root=TASK,
        source_format="task.md",
        instruction=instruction,
        verifier=ScriptDir(dir=TASK / "tests", mount="/tests", entrypoint="test.sh"),
        oracle=ScriptDir(dir=TASK / "solution", mount="/solution", entrypoint="solve.sh"),
        skills=(load_skill(LEAKAGE / "skills" / case / "tabular-aggregation"),),
        content_hash="0" * 64,
    )


def test_clean_task_has_no_finding() -> None:
    assert audit_task_leakage(_task("clean")) == []


@pytest.mark.parametrize(
    ("case", "rule", "evidence"),
    [
        ("magic-number", "leak-magic-number", "0.9137"),
        ("output-path", "leak-path", "/app/output/monthly_totals.json"),
        ("oracle-line", "leak-oracle-command", "python3 /solution/aggregate.py --input /app/data/sales.csv"),
        ("expected-value", "leak-expected-value", "48213.75"),
    ],
)
def test_planted_leak_is_flagged_with_evidence(case: str, rule: str, evidence: str) -> None:
    findings = audit_task_leakage(_task(case))
    hits = [f for f in findings if f.rule_id == rule]
    assert hits, [(f.rule_id, f.evidence) for f in findings]
    hit = hits[0]
    assert hit.evidence is not None and hit.evidence.startswith(evidence)
    assert hit.dimension is Dimension.LEAKAGE
    assert hit.file == f"../skills/{case}/tabular-aggregation/SKILL.md" or hit.file.endswith(
        f"{case}/tabular-aggregation/SKILL.md"
    )
    assert hit.line is not None and hit.line > 4  # in the body, below the frontmatter


def test_identifier_from_the_oracle(tmp_path: Path) -> None:
    skill = tmp_path / "tabular-aggregation"
    skill.mkdir()
    text = (LEAKAGE / "skills" / "clean" / "tabular-aggregation" / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text + "\nCall `aggregate_monthly(rows, rate)` from your script.\n")
    task = _task("clean").model_copy(update={"skills": (load_skill(skill),)})
    assert [(f.rule_id, f.evidence) for f in audit_task_leakage(task)] == [("leak-identifier", "aggregate_monthly")]


def test_severity_levels_allow_gating() -> None:
    by_rule = {f.rule_id: f.severity for f in audit_task_leakage(_task("oracle-line"))}
    assert by_rule["leak-oracle-command"] is Severity.ERROR
    assert by_rule["leak-path"] is Severity.WARNING


def test_instruction_that_names_the_skill() -> None:
    findings = audit_task_leakage(_task("clean", INSTRUCTION + "\nUse the tabular-aggregation skill.\n"))
    assert [(f.rule_id, f.file, f.evidence) for f in findings] == [
        ("instruction-names-skill", "instruction", "tabular-aggregation")
    ]


def test_instruction_quality_checks() -> None:
    ids = {f.rule_id for f in audit_task_leakage(_task("clean", "Process the sales data for the team."))}
    assert ids == {"instruction-no-output-path", "instruction-no-success-criteria", "instruction-no-constraints"}


def test_task_without_oracle_or_verifier() -> None:
    task = _task("clean").model_copy(update={"oracle": None, "verifier": None})
    assert audit_task_leakage(task) == []


def test_as_tasks_check_issues() -> None:
    issues = leakage_task_issues(_task("oracle-line"))
    by_code = {i.code: i for i in issues}
    assert by_code["leak-oracle-command"].severity == "error"
    assert by_code["leak-path"].severity == "warning"
    assert by_code["leak-oracle-command"].path is not None
    assert by_code["leak-oracle-command"].path.endswith("oracle-line/tabular-aggregation/SKILL.md:23")
    assert "[python3 /solution/aggregate.py" in by_code["leak-oracle-command"].message
    assert leakage_task_issues(_task("clean")) == []


def _mini_task(
    tmp_path: Path, *, skill_script: str, oracle_files: dict[str, str], verifier_py: str, instruction: str
) -> Task:
    skill = tmp_path / "skills" / "report-tool"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: report-tool\ndescription: Builds reports. Use when a task asks for a report.\n---\n"
        "Run `scripts/report.py IN OUT`. Rows that cannot be parsed are reported as unreportable.\n"
    )
    (skill / "scripts" / "report.py").write_text(skill_script)
    oracle = tmp_path / "oracle"
    oracle.mkdir()
    for name, text in oracle_files.items():
        (oracle / name).write_text(text)
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    (verifier / "test_outputs.py").write_text(verifier_py)
    (verifier / "test.sh").write_text("python3 test_outputs.py\n")
    return Task(
        id="mini",
        root=tmp_path,
        source_format="task.md",
        instruction=instruction,
        verifier=ScriptDir(dir=verifier, mount="/verifier", entrypoint="test.sh"),
        oracle=ScriptDir(dir=oracle, mount="/oracle", entrypoint="solve.sh"),
        skills=(load_skill(skill),),
        content_hash="0" * 64,
    )


SCRIPT = "import sys\n\ndef build_report_rows(rows):\n    return [r for r in rows if r]\n\nif __name__ == '__main__':\n    build_report_rows(sys.argv)\n"


def test_an_oracle_running_a_copy_of_the_skills_own_script_is_not_leakage(tmp_path: Path) -> None:
    task = _mini_task(
        tmp_path,
        skill_script=SCRIPT,
        oracle_files={"report.py": SCRIPT, "solve.sh": "python3 /oracle/report.py /app/in.csv /app/out.csv\n"},
        verifier_py="def test_kind(row):\n    assert row['kind'] == 'unreportable'\n",
        instruction="Write the report of /app/in.csv to /app/out.csv.",
    )
    assert [f.rule_id for f in audit_task_leakage(task) if f.rule_id.startswith("leak-")] == []


def test_the_same_identifier_in_an_oracle_of_its_own_is_flagged(tmp_path: Path) -> None:
    task = _mini_task(
        tmp_path,
        skill_script=SCRIPT,
        oracle_files={
            "solve.py": "def build_report_rows(rows):\n    return sorted(rows)\n",
            "solve.sh": "python3 solve.py\n",
        },
        verifier_py="def test_total(total):\n    assert total == '1,234.50 EUR'\n",
        instruction="Write the report.",
    )
    assert [f.rule_id for f in audit_task_leakage(task) if f.rule_id.startswith("leak-")] == ["leak-identifier"]


def test_a_value_the_instruction_states_is_specification_not_leakage(tmp_path: Path) -> None:
    verifier = "def test_total(total):\n    assert total == '1,234.50 EUR'\n"
    stated = _mini_task(
        tmp_path / "a",
        skill_script=SCRIPT + "# totals look like 1,234.50 EUR\n",
        oracle_files={"solve.sh": "true\n"},
        verifier_py=verifier,
        instruction="The total for the sample must read 1,234.50 EUR.",
    )
    assert [f for f in audit_task_leakage(stated) if f.rule_id == "leak-expected-value"] == []
    hidden = _mini_task(
        tmp_path / "b",
        skill_script=SCRIPT + "# totals look like 1,234.50 EUR\n",
        oracle_files={"solve.sh": "true\n"},
        verifier_py=verifier,
        instruction="Write the total.",
    )
    assert [f.rule_id for f in audit_task_leakage(hidden) if f.rule_id == "leak-expected-value"] == [
        "leak-expected-value"
    ]


def test_shared_boilerplate_is_one_info_finding_not_an_error(tmp_path: Path) -> None:
    """Code lines the oracle shares with the skill, with no task path or expected value in them, are how the
    technique is written (issue #11: `scaler = StandardScaler()` failed real tasks)."""
    code = "scaler = StandardScaler()\nX_scaled = scaler.fit_transform(features)\ny_pred = model.predict(X_scaled)\n"
    task = _mini_task(
        tmp_path,
        skill_script=SCRIPT + "\n" + code,
        oracle_files={"solve.sh": "python3 - <<'EOF'\n" + code + "EOF\n"},
        verifier_py="def test_r2(r2):\n    assert r2 > 0.8\n",
        instruction="Fit the model on /app/data.csv and write /app/out.json.",
    )
    found = [f for f in audit_task_leakage(task) if f.rule_id == "leak-oracle-command"]
    assert len(found) == 1 and found[0].severity is Severity.INFO
    assert "3 line(s)" in found[0].message and found[0].evidence == "scaler = StandardScaler()"
    assert found[0].file is not None and found[0].file.endswith("scripts/report.py")
    assert found[0].line == 9


def test_tool_vocabulary_the_verifier_requires_is_not_an_answer(tmp_path: Path) -> None:
    verifier = "def test_rule(rule_text):\n    assert 'http.method' in rule_text\n    assert 'http_uri' in rule_text\n"
    task = _mini_task(
        tmp_path,
        skill_script=SCRIPT + "# match with http.method and http_uri sticky buffers\n",
        oracle_files={"solve.sh": "true\n"},
        verifier_py=verifier,
        instruction="Write the rule.",
    )
    assert [f for f in audit_task_leakage(task) if f.rule_id == "leak-expected-value"] == []


def test_a_few_of_many_expected_values_warn_most_of_them_block(tmp_path: Path) -> None:
    verifier = "def test_consts(c):\n" + "".join(
        f"    assert c['K{i}'] == {value}\n" for i, value in enumerate((28811, 28812, 1073901710, 2147774616))
    )
    few = _mini_task(
        tmp_path / "few",
        skill_script=SCRIPT + "# K0 = 28811\n",
        oracle_files={"solve.sh": "true\n"},
        verifier_py=verifier,
        instruction="Write the constants.",
    )
    (hit,) = [f for f in audit_task_leakage(few) if f.rule_id == "leak-expected-value"]
    assert hit.severity is Severity.WARNING and "1 of the verifier's 4" in hit.message
    most = _mini_task(
        tmp_path / "most",
        skill_script=SCRIPT + "# K0 = 28811, K1 = 28812, K2 = 1073901710\n",
        oracle_files={"solve.sh": "true\n"},
        verifier_py=verifier,
        instruction="Write the constants.",
    )
    hits = [f for f in audit_task_leakage(most) if f.rule_id == "leak-expected-value"]
    assert len(hits) == 3 and all(f.severity is Severity.ERROR for f in hits)


def test_info_findings_stay_info_in_tasks_check_and_are_not_repeated() -> None:
    issues = leakage_task_issues(_task("clean", "Process the sales data for the team."))
    assert {i.severity for i in issues if i.code == "instruction-no-constraints"} == {"info"}
    assert not any("(info)" in i.message for i in issues)
    keys = [(i.code, i.path, i.message) for i in issues]
    assert len(keys) == len(set(keys))


# ../shared/real-tasks next to the repository (or next to a parent of a worktree)
REAL_TASKS = next(
    (
        p / "shared" / "real-tasks"
        for p in Path(__file__).resolve().parents[3:]
        if (p / "shared" / "real-tasks").is_dir()
    ),
    Path("/nonexistent"),
)


@pytest.mark.skipif(not REAL_TASKS.is_dir(), reason="real SkillsBench tasks (../shared/real-tasks) absent")
def test_real_skillsbench_tasks_have_no_leakage_error() -> None:
    """Read by hand (issue #11): none of these curated skills hands over the answer; shared code, public data
    sources and tool vocabulary must not fail them."""
    from skillworks.tasks import load_task

    tasks = sorted(p for p in REAL_TASKS.iterdir() if (p / "task.toml").is_file())
    assert len(tasks) >= 5
    for task_dir in tasks:
        errors = [f for f in audit_task_leakage(load_task(task_dir)) if f.severity is Severity.ERROR]
        assert errors == [], (task_dir.name, [(f.rule_id, f.evidence) for f in errors])


RANGE_VERIFIER = (
    "def test_trend(result):\n"
    "    assert 0.07 <= result['slope'] <= 0.11\n"
    "    assert 60 > result['share'] > 40\n"
    "    assert 0 <= result['p'] <= 1\n"
    "    assert result['station'] == 'LK-0042-north'\n"
    "    assert result['method'] == 'theil-sen robust'\n"
)


@pytest.mark.parametrize(
    ("note", "found"),
    [
        ("# The warming trend comes out at 0.07-0.11 degC per decade.\n", [("0.07", "0.11")]),
        ("# Expect a slope between 0.07 and 0.11; the share is 40–60 %.\n", [("0.07", "0.11"), ("40", "60")]),
        ("# Slopes usually fall between 0.05 and 0.2 per decade; p is 0 to 1.\n", []),
        ("# Keep 0.07 as the step.\n# Clip at 0.11.\n", []),  # not given as a range
    ],
)
def test_a_range_the_verifier_accepts_is_an_answer(tmp_path: Path, note: str, found: list[tuple[str, str]]) -> None:
    """A generated pack wrote "slope 0.07–0.11" for a verifier checking `0.07 <= slope <= 0.11`: one check's
    answer, so an error (with the bounds reported once), whatever share of the other expected values it has."""
    task = _mini_task(
        tmp_path,
        skill_script=SCRIPT + note,
        oracle_files={"solve.sh": "true\n"},
        verifier_py=RANGE_VERIFIER,
        instruction="Estimate the lake's warming trend and the share explained by air temperature.",
    )
    ranges = [f for f in audit_task_leakage(task) if "the range the verifier accepts" in f.message]
    assert [tuple(f.message.split(" gives ")[1].split(", ")[0].split(" to ")) for f in ranges] == found
    assert all(f.severity is Severity.ERROR and f.file == "skills/report-tool/scripts/report.py" for f in ranges)
    singles = [f.evidence for f in audit_task_leakage(task) if f.rule_id == "leak-expected-value" and f not in ranges]
    assert not {b for pair in found for b in pair} & set(singles)


def test_a_range_the_instruction_states_is_specification(tmp_path: Path) -> None:
    task = _mini_task(
        tmp_path,
        skill_script=SCRIPT + "# A plausible slope is 0.07-0.11 per decade.\n",
        oracle_files={"solve.sh": "true\n"},
        verifier_py=RANGE_VERIFIER,
        instruction="Estimate the lake's warming trend; a plausible slope is between 0.07 and 0.11 degC per decade.",
    )
    assert not [f for f in audit_task_leakage(task) if "the range the verifier accepts" in f.message]
