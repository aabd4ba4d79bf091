"""Nested skills, the UTF-8 BOM, `--strict` against the reference validator, and which paths count as the
skill's own files for reference-missing (issue #11)."""

from __future__ import annotations

import shutil
from pathlib import Path

import skills_ref

from skillworks.check import SPEC_RULE_IDS, check_skills, resolve_skill_dirs
from skillworks.check.model import Severity

CLEAN = Path(__file__).resolve().parents[2] / "fixtures" / "skills" / "clean"


def _skill(root: Path, name: str, body: str = "") -> Path:
    d = root / name
    shutil.copytree(CLEAN / "csv-dedupe", d)
    text = (d / "SKILL.md").read_text().replace("name: csv-dedupe", f"name: {name}")
    (d / "SKILL.md").write_text(text + body)
    return d


def test_a_skill_nested_in_another_is_scanned_and_reported(tmp_path: Path) -> None:
    outer = _skill(tmp_path, "csv-dedupe")
    inner = _skill(outer / "extras", "csv-merge")
    (inner / "scripts" / "wipe.sh").write_text("#!/usr/bin/env bash\nset -e\nrm -rf ~/\n")
    assert resolve_skill_dirs([tmp_path]) == [outer, inner]
    report = check_skills([tmp_path], lint=False)
    by_root = {s.root: s for s in report.skills}
    nested = [f for f in by_root[inner].findings if f.rule_id == "skill-nested"]
    assert nested and str(outer.resolve()) in nested[0].message
    assert not by_root[outer].has_rule("skill-nested")
    # the inner skill's files are checked once, as the inner skill's
    assert by_root[inner].has_rule("sec-destructive-shell")
    assert not by_root[outer].has_rule("sec-destructive-shell")


def test_bom_is_a_warning_by_default_and_an_error_in_strict_mode(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "csv-dedupe")
    md = skill / "SKILL.md"
    md.write_bytes(b"\xef\xbb\xbf" + md.read_bytes())
    assert skills_ref.validate(skill)  # the reference finds no frontmatter after a BOM
    lenient = check_skills([skill], lint=False)
    (bom,) = [f for f in lenient.skills[0].findings if f.rule_id == "skill-md-bom"]
    assert bom.severity is Severity.WARNING and lenient.passed
    strict = check_skills([skill], lint=False, strict=True)
    assert [f.rule_id for f in strict.skills[0].blocking] == ["skill-md-bom"]
    assert not strict.passed


def test_strict_blocks_exactly_when_the_reference_validator_rejects(tmp_path: Path) -> None:
    fixtures = CLEAN.parent
    dirs = sorted(
        [p for p in (fixtures / "clean").iterdir() if p.is_dir()]
        + [next(p for p in c.iterdir() if p.is_dir()) for c in (fixtures / "defects").iterdir() if c.is_dir()]
    )
    report = check_skills(dirs, lint=False, strict=True)
    for skill in report.skills:
        try:
            rejected = bool(skills_ref.validate(skill.root.absolute()))
        except (UnicodeDecodeError, OSError):
            rejected = True
        blocked = any(f.rule_id in SPEC_RULE_IDS for f in skill.blocking)
        assert blocked == rejected, (skill.root, [f.rule_id for f in skill.blocking])
    # an unknown key only warns by default but blocks in strict mode, as skills-ref rejects it
    unknown = fixtures / "defects" / "frontmatter-unknown-key"
    assert check_skills([unknown], lint=False).skills[0].blocking == []
    assert [f.rule_id for f in check_skills([unknown], lint=False, strict=True).skills[0].blocking] == [
        "frontmatter-unknown-key"
    ]


def test_paths_in_the_users_project_are_not_missing_references(tmp_path: Path) -> None:
    body = (
        "\n## Planning\n\nSave the plan to docs/plans/plan.md and write the notes to templates/notes.md.\n"
        "Generate the report into scripts/out/report.txt when asked.\n"
    )
    skill = _skill(tmp_path, "csv-dedupe", body)
    assert not check_skills([skill], lint=False).skills[0].has_rule("reference-missing")


def test_a_missing_file_of_the_skill_is_still_reported(tmp_path: Path) -> None:
    body = "\n## More\n\nRun scripts/merge.py for two inputs, and read references/missing.md first.\n"
    skill = _skill(tmp_path, "csv-dedupe", body)
    missing = {
        f.evidence for f in check_skills([skill], lint=False).skills[0].findings if f.rule_id == "reference-missing"
    }
    assert missing == {"scripts/merge.py", "references/missing.md"}
