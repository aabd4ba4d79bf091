"""False-alarm patterns found by reading samples of the most frequent structural findings on real skills
(benchmarks/data/structural-labels.csv), each with fixture text written for this test."""

from __future__ import annotations

from pathlib import Path

from skillworks.check import check_skills
from skillworks.check.model import Severity

FRONTMATTER = "---\nname: {name}\ndescription: Builds status reports from task lists. Use when asked for a report.\n"


def _skill(tmp_path: Path, name: str, extra_frontmatter: str, body: str) -> Path:
    d = tmp_path / name
    (d / "references").mkdir(parents=True)
    (d / "references" / "present.md").write_text("# Present\n", encoding="utf-8")
    (d / "SKILL.md").write_text(FRONTMATTER.format(name=name) + extra_frontmatter + "---\n" + body, encoding="utf-8")
    return d


def test_paths_shown_as_examples_for_other_skills_are_not_missing_references(tmp_path: Path) -> None:
    body = (
        "# Skill author\n\nSee [the present notes](references/present.md).\n\n"
        "## Bundled files\n\n"
        "- **Examples**: `references/finance.md` for schemas, `references/nda.md` for a contract template\n"
        "- Put long guides in references, e.g. `references/api_docs.md`.\n"
        "A `references/schema.md` file documenting the tables would be helpful to store in the skill.\n\n"
        "A sample SKILL.md:\n\n```markdown\n# Docx editor\nFor tracked changes see [REDLINES.md](REDLINES.md).\n```\n"
    )
    report = check_skills([_skill(tmp_path, "skill-author", "", body)], lint=False)
    assert [f.evidence for f in report.skills[0].findings if f.rule_id == "reference-missing"] == []


def test_the_skills_own_missing_files_are_still_reported(tmp_path: Path) -> None:
    body = (
        "# Reporter\n\n"
        "- **Examples**: [EXAMPLES.md](EXAMPLES.md) holds worked examples\n"  # a link claims the file exists
        "Read `references/api.md` before calling the service.\n"
        "For the full list see references/regions.md (e.g. `eastus`).\n\n"
        "```bash\npython scripts/build.py tasks.json\n```\n"  # a command in a code block uses the skill's file
    )
    report = check_skills([_skill(tmp_path, "reporter", "", body)], lint=False)
    missing = sorted(f.evidence or "" for f in report.skills[0].findings if f.rule_id == "reference-missing")
    assert missing == ["EXAMPLES.md", "references/api.md", "references/regions.md", "scripts/build.py"]


def test_flow_style_frontmatter_warns_and_is_an_error_only_with_strict(tmp_path: Path) -> None:
    d = _skill(tmp_path, "flow-meta", 'metadata: {"emoji": "x"}\n', "# Flow\n\nVerify the output.\n")
    (hit,) = [f for f in check_skills([d], lint=False).skills[0].findings if f.rule_id == "frontmatter-not-strict-yaml"]
    assert hit.severity is Severity.WARNING and "--strict" in (hit.reason or "")
    strict = check_skills([d], lint=False, strict=True)
    assert [f.severity for f in strict.skills[0].blocking] == [Severity.ERROR] and not strict.passed


def test_duplicate_frontmatter_keys_stay_a_blocking_error(tmp_path: Path) -> None:
    d = _skill(tmp_path, "dup-meta", "metadata:\n  version: '1'\n  version: '2'\n", "# Dup\n\nVerify the output.\n")
    report = check_skills([d], lint=False)
    assert [(f.rule_id, f.severity) for f in report.skills[0].blocking] == [
        ("frontmatter-not-strict-yaml", Severity.ERROR)
    ]


def test_modules_the_skills_scripts_import_are_not_judged_as_scripts(tmp_path: Path) -> None:
    """As in Anthropic's docx/pptx skills: a package of helpers under scripts/ that the documented script
    imports. Its __init__.py and its helper modules need no usage text, exit status or mention in SKILL.md;
    a script nobody mentions or imports still does."""
    d = _skill(tmp_path, "report-tool", "", "# Report tool\n\nRun `python scripts/build.py --help` first.\n")
    scripts = d / "scripts"
    (scripts / "office" / "helpers").mkdir(parents=True)
    (scripts / "build.py").write_text(
        '"""Build the report."""\nimport argparse\nimport sys\n\nfrom office.helpers.merge import merge\n'
        "from office import layout\n\n\ndef main() -> int:\n"
        "    parser = argparse.ArgumentParser()\n    parser.parse_args()\n    return merge()\n\n\n"
        'if __name__ == "__main__":\n    sys.exit(main())\n',
        encoding="utf-8",
    )
    (scripts / "office" / "__init__.py").write_text("", encoding="utf-8")
    (scripts / "office" / "helpers" / "__init__.py").write_text("from .merge import merge\n", encoding="utf-8")
    (scripts / "office" / "helpers" / "merge.py").write_text(
        "import re\n\ntry:\n    import lxml\nexcept ImportError:\n    lxml = None\n\nPATTERN = re.compile('x')\n\n\n"
        "def merge() -> int:\n    return 0\n",
        encoding="utf-8",
    )
    (scripts / "office" / "layout.py").write_text("WIDTH = 80\n", encoding="utf-8")
    (scripts / "stray.py").write_text("import sys\n\nprint(sys.argv[1])\n", encoding="utf-8")
    (scripts / "unused_lib.py").write_text("def helper() -> None:\n    pass\n", encoding="utf-8")
    report = check_skills([d], lint=False)
    found = {(f.rule_id, f.file) for f in report.skills[0].findings if f.rule_id.startswith("script-")}
    assert found == {
        ("script-unreferenced", "scripts/stray.py"),
        ("script-no-usage", "scripts/stray.py"),
        ("script-no-error-handling", "scripts/stray.py"),
        ("script-unreferenced", "scripts/unused_lib.py"),  # imported by nothing: dead code SKILL.md never names
    }
