"""`.skillworks-ignore` (#27): an author's reviewed false alarms are suppressed with their reason and reported
as suppressed (text, JSON, SARIF); expired entries stop suppressing and warn; malformed files are one-line
errors naming the file. The skill is the clean csv-dedupe fixture with a sample credential in a test fixture
script the author reviewed (a realistic false alarm: `sec-secret`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillworks.check import check_skills, to_json, to_sarif
from skillworks.check.model import Severity
from skillworks.check.suppress import IGNORE_FILE
from skillworks.check.text_output import to_text
from skillworks.errors import UserError

_FIXTURE = (
    '"""Sample rows for the dedupe demo; the key is the documented sample from the provider\'s docs."""\n\n'
    'SAMPLE_KEY = "AKIA' + "Q3EGRTZ7BV2KXWNP" + '"\nROWS = [("a", 1), ("a", 1)]\n'
)


def _skill(clean_copy: Path, ignore: str | None, name: str = IGNORE_FILE) -> Path:
    (clean_copy / "scripts" / "sample_rows.py").write_text(_FIXTURE, encoding="utf-8")
    if ignore is not None:
        (clean_copy / name).write_text(ignore, encoding="utf-8")
    return clean_copy


_YAML = (
    "# reviewed false alarms\n- rule: sec-secret\n  path: scripts/sample_*.py\n"
    "  reason: the provider's documented sample key, not a credential\n  expires: 2999-01-01\n"
)


def _secret(report_skill: object) -> list[object]:
    return [f for f in report_skill.findings if f.rule_id == "sec-secret"]  # type: ignore[attr-defined]


def test_without_the_file_the_sample_key_blocks(clean_copy: Path) -> None:
    report = check_skills([_skill(clean_copy, None)], lint=False)
    assert any(f.severity is Severity.ERROR for f in _secret(report.skills[0]))
    assert not report.passed


def test_yaml_entry_suppresses_and_is_reported_in_every_format(clean_copy: Path) -> None:
    report = check_skills([_skill(clean_copy, _YAML)], lint=False)
    s = report.skills[0]
    assert _secret(s) == [] and report.passed and s.ignore_warnings == []
    assert [(x.finding.rule_id, x.finding.file, x.reason) for x in s.suppressed] == [
        ("sec-secret", "scripts/sample_rows.py", "the provider's documented sample key, not a credential")
    ]
    text = to_text(report, width=120)
    assert "suppressed sec-secret  scripts/sample_rows.py:3" in text and "documented sample key" in text
    out = json.loads(to_json(report))["skills"][0]
    assert out["suppressed"][0]["rule"] == "sec-secret"
    assert out["suppressed"][0]["suppressed_reason"].startswith("the provider's")
    assert out["suppressed"][0]["suppressed_until"] == "2999-01-01"
    assert not any(f["rule"] == "sec-secret" for f in out["findings"])
    results = to_sarif(report, base=clean_copy)["runs"][0]["results"]
    sup = [r for r in results if r.get("suppressions")]
    assert [r["ruleId"] for r in sup] == ["sec-secret"]
    assert sup[0]["suppressions"][0]["kind"] == "external"
    assert sup[0]["suppressions"][0]["justification"].startswith("the provider's")


def test_toml_entry_at_the_scanned_root_with_a_path_under_it(clean_copy: Path) -> None:
    _skill(clean_copy, None)
    root = clean_copy.parent
    (root / IGNORE_FILE).write_text(
        '[[suppress]]\nrule = "sec-*"\npath = "csv-dedupe/**/sample_rows.py"\nreason = "reviewed sample"\n',
        encoding="utf-8",
    )
    report = check_skills([root], lint=False)
    assert _secret(report.skills[0]) == []
    assert report.skills[0].suppressed[0].source == str(root / IGNORE_FILE)


def test_an_entry_for_another_rule_or_path_suppresses_nothing(clean_copy: Path) -> None:
    ignore = (
        "suppress:\n  - rule: sec-exfiltration\n    path: scripts/*.py\n    reason: x\n"
        "  - rule: sec-secret\n    path: references/*\n    reason: y\n"
    )
    report = check_skills([_skill(clean_copy, ignore)], lint=False)
    assert _secret(report.skills[0]) and report.skills[0].suppressed == []
    assert [w.split(": ", 1)[1] for w in report.skills[0].ignore_warnings] == [
        "entry 1 (sec-exfiltration scripts/*.py) matches no finding; remove it if it is stale",
        "entry 2 (sec-secret references/*) matches no finding; remove it if it is stale",
    ]


def test_expired_entry_stops_suppressing_and_warns(clean_copy: Path) -> None:
    report = check_skills([_skill(clean_copy, _YAML.replace("2999-01-01", "2020-06-30"))], lint=False)
    s = report.skills[0]
    assert _secret(s) and s.suppressed == [] and not report.passed
    assert len(s.ignore_warnings) == 1 and "expired on 2020-06-30" in s.ignore_warnings[0]  # not also "unused"
    assert "warning: " in to_text(report, width=200) and "expired on 2020-06-30" in to_text(report, width=200)
    assert json.loads(to_json(report))["skills"][0]["ignore_warnings"] == s.ignore_warnings
    notes = to_sarif(report)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("expired" in n["message"]["text"] for n in notes)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("- rule: sec-secret\n  path: scripts/*.py\n", "entry 1: reason is required"),
        ("- rule: sec-secret\n  path: scripts/*.py\n  reason: '  '\n", "entry 1: reason must not be empty"),
        ("- rule: sec-secrets\n  path: x\n  reason: typo\n", "unknown rule 'sec-secrets'"),
        ("- rule: sec-secret\n  path: x\n  reason: r\n  expires: soon\n", "entry 1: expires"),
        ("- rule: sec-secret\n  path: x\n  reason: r\n  line: 3\n", "entry 1: line"),
        ("- rule: [sec-secret\n", "not valid YAML"),
        ('[[suppress]]\nrule = "sec-secret"\npath = \n', "not valid TOML"),
        ("rules:\n  - rule: sec-secret\n", "unknown key(s) rules"),
        ("just a sentence\n", "expected a list of entries"),
    ],
)
def test_malformed_file_is_a_one_line_error_naming_it(clean_copy: Path, text: str, problem: str) -> None:
    skill = _skill(clean_copy, text)
    with pytest.raises(UserError) as exc:
        check_skills([skill], lint=False)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(str(skill / IGNORE_FILE)) and problem in message, message


def test_the_cli_prints_the_one_line_and_exits_2(clean_copy: Path) -> None:
    skill = _skill(clean_copy, "- rule: sec-secret\n  path: scripts/*.py\n")
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "check", "--no-lint", str(skill)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {skill / IGNORE_FILE}: entry 1: reason is required"
    # --no-ignore-file reads none: the scan runs (and the sample key blocks)
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "check", "--no-lint", "--no-ignore-file", str(skill)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "sec-secret" in proc.stdout


def test_ignore_files_off_reads_none(clean_copy: Path) -> None:
    report = check_skills([_skill(clean_copy, _YAML)], lint=False, ignore_files=False)
    assert _secret(report.skills[0]) and report.skills[0].suppressed == []
