from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from skillworks.check import (
    CheckReport,
    CheckReportOut,
    JudgeCriterion,
    JudgeReport,
    SkillReport,
    check_skills,
    iter_json,
    iter_sarif,
    to_json,
    to_sarif,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
CASES = [
    FIXTURES / "skills" / "clean",
    FIXTURES / "skills" / "defects" / "sec-secret",
    FIXTURES / "skills" / "defects" / "lint-shell",
    FIXTURES / "skills" / "defects" / "frontmatter-invalid-yaml",
    FIXTURES / "skills" / "defects" / "skill-md-missing",
]


def test_sarif_validates_against_the_official_2_1_0_schema() -> None:
    assert SCHEMA["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    report = check_skills(CASES)
    sarif = to_sarif(report, base=FIXTURES.parent.parent)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    run = sarif["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    results = run["results"]
    assert {"sec-secret", "lint-shell", "frontmatter-invalid-yaml", "skill-md-missing"} <= {
        r["ruleId"] for r in results
    }
    for r in results:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        assert not loc["artifactLocation"]["uri"].startswith("/")  # relative to the repository root
        assert loc["region"]["startLine"] >= 1
    secret = next(r for r in results if r["ruleId"] == "sec-secret")
    assert secret["level"] == "error"
    assert secret["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "tests/fixtures/skills/defects/sec-secret/report-builder/SKILL.md"
    )
    sec_rule = run["tool"]["driver"]["rules"][rule_ids.index("sec-secret")]
    assert sec_rule["properties"]["security-severity"] == "8.0"


def test_schema_rejects_a_broken_sarif_log() -> None:
    """The vendored schema really constrains the output (guards against a vacuous validation)."""
    sarif = to_sarif(check_skills([CASES[1]]), base=FIXTURES.parent.parent)
    sarif["runs"][0]["results"][0]["level"] = "fatal"
    assert list(jsonschema.Draft4Validator(SCHEMA).iter_errors(sarif))


def test_json_report_reads_back_with_its_schema() -> None:
    report = check_skills(CASES)
    text = to_json(report)
    back = CheckReportOut.model_validate_json(text)
    assert back.passed is False and back.fail_under == 70
    assert len(back.skills) == len(report.skills)
    by_name = {s.path: s for s in back.skills}
    clean = next(s for s in back.skills if s.name == "csv-dedupe")
    assert (
        clean.passed
        and clean.score >= 90
        and set(clean.scores) == {"correctness", "discoverability", "reliability", "efficiency"}
    )
    assert any(f.rule == "sec-secret" and f.line for s in by_name.values() for f in s.findings)
    data = json.loads(text)
    data["skills"][0]["unexpected"] = 1
    try:
        CheckReportOut.model_validate(data)
    except Exception as exc:
        assert "unexpected" in str(exc)
    else:
        raise AssertionError("unknown keys must be rejected")


def _all_defects() -> CheckReport:
    return check_skills([FIXTURES / "skills" / "clean", *sorted((FIXTURES / "skills" / "defects").iterdir())])


def test_streamed_json_is_the_report_dumped_whole() -> None:
    """`check --format json` writes `iter_json`'s pieces (one per skill): the same bytes as `to_json`."""
    report = _all_defects()
    report.skills[0].judge = JudgeReport(
        models=["m1", "m2"],
        criteria=[JudgeCriterion(criterion="clarity", scores={"m1": 7.0, "m2": 8.5}, mean=7.75, spread=1.5)],
        mean=7.75,
        errors={"m3": "no answer — timed out"},
    )
    pieces = list(iter_json(report))
    assert len(pieces) == len(report.skills) + 2
    text = "".join(pieces)
    assert text == to_json(report)
    assert any(not c.isascii() for c in text)  # non-ASCII evidence passes through unchanged


def test_streamed_sarif_is_the_log_dumped_whole() -> None:
    report = _all_defects()
    base = FIXTURES.parent.parent
    assert "".join(iter_sarif(report, base=base)) == json.dumps(to_sarif(report, base=base), indent=2)
    empty = CheckReport(skills=[SkillReport(root=FIXTURES / "skills" / "clean", name="clean")], fail_under=70)
    text = "".join(iter_sarif(empty, base=base))
    assert text == json.dumps(to_sarif(empty, base=base), indent=2)
    assert json.loads(text)["runs"][0]["results"] == []


def test_a_failed_report_write_keeps_the_earlier_report(tmp_path: Path) -> None:
    from skillworks.cli.check_cmd import _write_report
    from skillworks.errors import UserError

    out = tmp_path / "report.json"
    out.write_text("earlier report\n")

    def pieces() -> Iterator[str]:
        yield '{"skills": ['
        raise OSError(28, "No space left on device")

    with pytest.raises(UserError, match="cannot write the report: No space left on device"):
        _write_report(pieces(), out)
    assert out.read_text() == "earlier report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no partial file left behind
    _write_report(iter(["{}"]), out)
    assert out.read_text() == "{}\n"
