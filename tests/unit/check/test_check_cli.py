from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillworks.cli.main import app

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "skills"
runner = CliRunner()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args], capture_output=True, text=True, timeout=120
    )


def test_clean_tree_passes_with_table() -> None:
    result = runner.invoke(app, ["check", str(FIXTURES / "clean")])
    assert result.exit_code == 0, result.output
    assert "csv-dedupe" in result.output and "pass" in result.output and "FAIL" not in result.output


def test_defect_fails_the_gate_and_shows_the_rule() -> None:
    result = runner.invoke(app, ["check", str(FIXTURES / "defects" / "sec-destructive-shell")])
    assert result.exit_code == 1
    assert "sec-destructive-shell" in result.output and "FAIL" in result.output


def test_fail_under_flag() -> None:
    case = str(FIXTURES / "defects" / "description-no-when")
    assert runner.invoke(app, ["check", case, "--fail-under", "100"]).exit_code == 1
    assert runner.invoke(app, ["check", case, "--fail-under", "50"]).exit_code == 0


def test_json_and_sarif_to_stdout_and_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(FIXTURES / "clean"), "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.output)["passed"] is True
    out = tmp_path / "report.sarif"
    result = runner.invoke(app, ["check", str(FIXTURES / "defects" / "sec-secret"), "-f", "sarif", "-o", str(out)])
    assert result.exit_code == 1
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_missing_path_is_one_line_error_exit_2(tmp_path: Path) -> None:
    proc = _cli("check", str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {tmp_path / 'nope'}: path does not exist"


def test_regular_file_that_is_not_skill_md(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("x")
    proc = _cli("check", str(f))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {f}: not a directory or SKILL.md file"


def test_bad_format_and_fail_under_and_judge_flags() -> None:
    case = str(FIXTURES / "clean")
    proc = _cli("check", case, "--format", "xml")
    assert (
        proc.returncode == 2
        and proc.stderr.strip() == "error: --format must be one of table, json, sarif, text, not 'xml'"
    )
    proc = _cli("check", case, "--fail-under", "101")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --fail-under must be between 0 and 100, not 101"
    proc = _cli("check", case, "--judge", " , ")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --judge needs at least one model name"
    proc = _cli("check", case, "--triage", " ")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --triage needs a model name"
    proc = _cli("check", case, "--workers", "0")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --workers must be at least 1, not 0"


def test_unwritable_output(tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "out.json"
    proc = _cli("check", str(FIXTURES / "clean"), "-f", "json", "-o", str(target))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(f"error: {target}: cannot write the report:")


def test_summary_table_labels_the_security_count_and_fits_80_columns() -> None:
    result = runner.invoke(
        app, ["check", str(FIXTURES / "defects" / "sec-destructive-shell"), "--no-lint"], env={"COLUMNS": "80"}
    )
    assert "security" in result.output and "findings" in result.output
    lines = result.output.splitlines()
    header = next(i for i, line in enumerate(lines) if "findings" in line)
    assert "security" in lines[header - 1] and "gate" in lines[header]  # the count is labelled as such
    assert all(len(line) <= 80 for line in lines[header - 1 : header + 3])


def test_text_output_fits_80_columns_and_gives_the_reason() -> None:
    from skillworks.check import check_skills
    from skillworks.check.text_output import to_text

    report = check_skills([FIXTURES / "defects" / "sec-secret", FIXTURES / "defects" / "description-no-keywords"])
    text = to_text(report, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "error    sec-secret  SKILL.md:" in text and "why: in the instructions" in text
    assert "description-no-keywords" not in text.split("\n\n", 1)[1]  # an info finding, hidden by default
    assert "info finding(s) hidden" in text
    assert "description-no-keywords" in to_text(report, verbose=True, width=80)


def test_text_report_is_written_in_chunks_exactly_as_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI streams the text report (a mirror-sized scan prints ~25 MB); what it prints is to_text's text."""
    import skillworks.cli.check_cmd as check_cmd
    from skillworks.check import check_skills
    from skillworks.check.text_output import to_text

    cases = [FIXTURES / "defects" / "sec-secret", FIXTURES / "defects" / "description-no-keywords"]
    expected = to_text(check_skills(cases), verbose=True, width=80) + "\n"
    for size in (1, 3, len(expected.splitlines()), 10_000):
        monkeypatch.setattr(check_cmd, "TEXT_CHUNK_LINES", size)
        result = runner.invoke(app, ["check", *map(str, cases), "--verbose"], env={"COLUMNS": "80"})
        assert result.output == expected, size
