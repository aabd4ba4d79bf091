"""`skillworks tasks check` (the command, not only the audit behind it) on COPIES of real SkillsBench tasks:
each answer-key form planted in a copy (heredoc, pytest dict, expected file, range, units, ratio, argparse
default, ...) is an error-severity `leak-*` issue naming the skill's file, the command exits 1; the unmodified
real tasks have no error issue at all and exit 0. The copies are made in tmp (nothing is copied into the repo);
skipped when /work/shared/real-tasks is absent. No model is involved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skillworks.cli.main import app

from .test_gate_leak_forms import FORMS, REAL_TASKS, SKILL, _copy

pytestmark = pytest.mark.skipif(not REAL_TASKS.is_dir(), reason="real SkillsBench tasks (/work/shared) absent")
runner = CliRunner()


def _check(*paths: Path) -> tuple[int, list[dict[str, Any]]]:
    result = runner.invoke(app, ["tasks", "check", "--json", *map(str, paths)])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_tasks_check_reports_each_leak_form_as_an_error(tmp_path: Path, form: str) -> None:
    task_dir, _ = _copy(tmp_path, form)
    code, (row,) = _check(task_dir)
    errors = [i for i in row["issues"] if i["severity"] == "error"]
    assert code == 1 and row["status"] == "error", (form, row)
    assert errors and all(str(i["code"]).startswith("leak-") for i in errors), (form, errors)
    planted = FORMS[form][2]
    assert any(f"skills/{SKILL}/{planted}" in str(i["path"]) for i in errors), (form, errors)


def test_tasks_check_reports_an_answer_key_split_between_two_curated_skills(tmp_path: Path) -> None:
    task_dir, _ = _copy(tmp_path, "dict")  # the verifier checks 'Lake Zurich' and 'heat-dominated warming'
    skills = task_dir / "environment" / "skills"
    for name, line in (("trend-analysis", "Write the lake as 'Lake Zurich'."), ("pca-decomposition", "")):
        md = skills / name / "SKILL.md"
        text = md.read_text().replace("Label it 'heat-dominated warming' for 'Lake Zurich'.", "")
        md.write_text(text + "\n" + (line or "Call the result 'heat-dominated warming'.") + "\n")
    code, (row,) = _check(task_dir)
    errors = [i for i in row["issues"] if i["severity"] == "error"]
    assert code == 1 and errors and all(str(i["code"]).startswith("leak-") for i in errors), row
    assert any("trend-analysis + " in str(i["message"]) or " + trend-analysis" in str(i["message"]) for i in errors)


def test_tasks_check_finds_no_error_on_the_unmodified_real_tasks() -> None:
    code, rows = _check(REAL_TASKS)
    assert len(rows) >= 5
    errors = [(r["task"], i) for r in rows for i in r["issues"] if i["severity"] == "error"]
    assert code == 0 and errors == []
