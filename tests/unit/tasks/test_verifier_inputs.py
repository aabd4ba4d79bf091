"""verifier.isolation / verifier.inputs (and Harbor's top-level `artifacts`) at load (issue 30)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillworks.errors import TaskError
from skillworks.tasks import load_task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"


def _harbor(tmp_path: Path, verifier_lines: str = "", top: str = "") -> Path:
    task = tmp_path / "harbor-word-count"
    shutil.copytree(FIXTURES / "harbor-word-count", task)
    toml = task / "task.toml"
    text = toml.read_text().replace("[verifier]\n", f"[verifier]\n{verifier_lines}", 1)
    toml.write_text(top + text)
    return task


def test_default_is_fresh_with_the_workdir_as_the_only_output() -> None:
    task = load_task(FIXTURES / "md-csv-revenue")
    assert task.verifier_isolation == "fresh" and task.verifier_inputs == ()
    assert task.verifier_outputs == (task.environment.workdir,)


def test_inputs_and_harbor_artifacts_are_outputs(tmp_path: Path) -> None:
    top = 'artifacts = ["/srv/report.txt", {source = "/var/out"}, "/logs/artifacts/plot.png"]\n'
    task = load_task(_harbor(tmp_path, 'inputs = ["/srv/result"]\nisolation = "shared"\n', top))
    assert task.verifier_isolation == "shared"
    assert task.verifier_inputs == ("/srv/result", "/srv/report.txt", "/var/out")  # /logs/... left out


@pytest.mark.parametrize(
    ("inputs", "problem"),
    [
        ('["srv/result"]', "absolute, normalised"),
        ('["/srv/../etc"]', "absolute, normalised"),
        ('["/logs/verifier"]', "reserves"),
        ('["/"]', "reserves"),
    ],
)
def test_bad_inputs_are_one_line_errors_naming_the_file(tmp_path: Path, inputs: str, problem: str) -> None:
    task = _harbor(tmp_path, f"inputs = {inputs}\n")
    with pytest.raises(TaskError, match=problem) as info:
        load_task(task)
    assert "task.toml" in str(info.value) and "\n" not in str(info.value)


def test_unknown_isolation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="isolation"):
        load_task(_harbor(tmp_path, 'isolation = "none"\n'))
