"""Attack tests of the one gate (skillworks.provision.gate) and of the leakage audit behind it, on a copy of
a real SkillsBench task (lake-warming-attribution: the verifier accepts slope 0.07-0.11 and a 40-60 %
contribution). Each answer-key form is planted in a copy of the task's own curated skill; `tasks check`'s
audit reports it as an error and the gate rejects the skill with a `leak-*` reason. No model is involved."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skillworks.check.leakage import audit_task_leakage
from skillworks.check.model import Severity
from skillworks.provision.gate import gate_skill
from skillworks.skills.package import load_skill
from skillworks.tasks import load_task

REAL_TASKS = next(
    (p / "shared" / "real-tasks" for p in Path(__file__).resolve().parents if (p / "shared" / "real-tasks").is_dir()),
    Path("/nonexistent"),
)
LAKE = REAL_TASKS / "lake-warming-attribution"
pytestmark = pytest.mark.skipif(not LAKE.is_dir(), reason="real SkillsBench tasks (/work/shared) absent")

SKILL = "trend-analysis"
HEREDOC_TEST_SH = (
    "python3 - <<'EOF'\nimport csv\nrow = next(csv.DictReader(open('/root/output/summary.csv')))\n"
    "assert row['station'] == 'Lake Geneva buoy 7'\nEOF\n"
)
DICT_TEST = "\nEXPECTED = {'lake': 'Lake Zurich', 'warming_label': 'heat-dominated warming'}\n"
EXPECTED_CSV = "variable,contribution\nHeat,49.2\nFlow,21.7\nWind,12.4\n"

# form -> (what is added to the copied task's verifier, text planted in the skill, file of the skill)
FORMS = {
    "range": (None, "For this lake the slope comes out at 0.07-0.11 per year.", "SKILL.md"),
    "inside-range": (None, "Expect a slope of about 0.09 per year.", "SKILL.md"),
    "units": (None, "The lake warms by 0.9 °C per decade.", "SKILL.md"),
    "ratio": (None, "Heat explains ≈0.49 of the warming.", "SKILL.md"),
    "sub-range": (None, "Heat's contribution is 0.4 to 0.6 of the total.", "SKILL.md"),
    "default-arg": (
        None,
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--contribution', type=float, default=49.0)\n",
        "scripts/report.py",
    ),
    "heredoc": ("test.sh", "Name the station 'Lake Geneva buoy 7' in the summary.", "SKILL.md"),
    "dict": ("test_outputs.py", "Label it 'heat-dominated warming' for 'Lake Zurich'.", "SKILL.md"),
    "expected-file": ("expected_dominant.csv", EXPECTED_CSV, "references/dominant.csv"),
}


def _copy(tmp: Path, form: str) -> tuple[Path, Path]:
    task = tmp / "task"
    shutil.copytree(LAKE, task, symlinks=True)
    verifier_change, planted, where = FORMS[form]
    tests = task / "tests"
    if verifier_change == "test.sh":
        text = (tests / "test.sh").read_text()
        (tests / "test.sh").write_text(text.replace("exit 0", HEREDOC_TEST_SH + "exit 0"))
    elif verifier_change == "test_outputs.py":
        with (tests / "test_outputs.py").open("a") as fh:
            fh.write(DICT_TEST + "\n\ndef test_labels():\n    assert EXPECTED['lake']\n")
    elif verifier_change is not None:
        (tests / verifier_change).write_text(EXPECTED_CSV)
    skill = task / "environment" / "skills" / SKILL
    target = skill / where
    target.parent.mkdir(parents=True, exist_ok=True)
    if where == "SKILL.md":
        target.write_text(target.read_text() + "\n" + planted + "\n")
    else:
        target.write_text(planted)
    return task, skill


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_leak_form_is_an_error_and_the_gate_rejects_it(tmp_path: Path, form: str) -> None:
    task_dir, skill_dir = _copy(tmp_path, form)
    task = load_task(task_dir)
    errors = [f for f in audit_task_leakage(task) if f.severity is Severity.ERROR]
    assert errors and all(f.rule_id.startswith("leak-") for f in errors), form
    assert any(f.file and skill_dir.name in f.file for f in errors)
    # the same skill as a produced skill: the gate rejects it (a produced skill is audited on its own)
    verdict = asyncio.run(gate_skill(load_skill(skill_dir), [task]))
    assert not verdict.passed and verdict.reasons[0].startswith("leak-"), (form, verdict.reasons)


def test_unmodified_copy_passes_the_gate(tmp_path: Path) -> None:
    task = load_task(LAKE)
    for skill in task.skills:
        verdict = asyncio.run(gate_skill(skill, [task]))
        assert verdict.passed, (skill.name, verdict.reasons)


def test_a_produced_copy_of_the_oracle_is_not_exempt(tmp_path: Path) -> None:
    """An oracle that runs a copy of a task's own skill file is exempt; a produced skill that copies the
    oracle is not: it is the answer."""
    task = load_task(LAKE)
    skill = tmp_path / "copied-oracle"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: copied-oracle\ndescription: Attribute lake warming to its drivers. Use when asked to "
        "explain a lake's warming trend.\n---\n# Lake warming\n\nRun `bash scripts/solve.sh`.\n"
    )
    shutil.copy(LAKE / "solution" / "solve.sh", skill / "scripts" / "solve.sh")
    verdict = asyncio.run(gate_skill(load_skill(skill), [task]))
    assert not verdict.passed and any(r.startswith("leak-") for r in verdict.reasons), verdict.reasons


def test_foreign_real_skills_are_no_answer_keys() -> None:
    """Held out from tuning: every real task's verifier against the other real tasks' curated skills (68
    pairs): unrelated skills must not be flagged as answer keys."""
    tasks = [load_task(p) for p in sorted(REAL_TASKS.iterdir()) if (p / "task.toml").is_file()]
    for task in tasks:
        foreign = [s for other in tasks if other.id != task.id for s in other.skills]
        errors = [f for f in audit_task_leakage(task, foreign) if f.severity is Severity.ERROR]
        assert errors == [], (task.id, [(f.file, f.message) for f in errors])
