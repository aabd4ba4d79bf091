"""`check --harness` without a CLI: a skill skillworks refuses is reported as not staged, harness names parse."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillworks.errors import UserError
from skillworks.harness_check import check_harnesses, harness_names, render_verdicts


def test_a_skill_skillworks_refuses_is_not_staged(tmp_path: Path) -> None:
    bad = tmp_path / "bad-skill"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\nbody\n")
    [v] = asyncio.run(check_harnesses(bad, ["claude-code"]))
    assert v.status == "not-staged" and "does not match its directory name" in (v.cli_said or "")
    assert "not-staged" in render_verdicts("bad-skill", [v])


def test_harness_names() -> None:
    assert harness_names("all") == ["claude-code", "codex", "gemini-cli", "opencode", "openhands"]
    assert harness_names("codex, claude-code") == ["codex", "claude-code"]
    with pytest.raises(UserError, match="unknown harness 'x'"):
        harness_names("codex,x")


def test_the_rule_that_should_have_caught_a_drop(tmp_path: Path) -> None:
    from skillworks.harness_check.probe import _should_have_caught
    from skillworks.skills.package import load_skill

    skill = tmp_path / "s"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\ndisable-model-invocation: true\n---\nbody\n")
    package = load_skill(skill)
    assert _should_have_caught(package, None).startswith("model-invocation-disabled")
    said = 'Shell command failed for pattern "!`bash x.sh`": [stderr] bash: x.sh: No such file'
    assert _should_have_caught(package, said).startswith("inline-shell-at-load")
