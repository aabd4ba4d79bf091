"""Issue 28 acceptance: `skillworks check SKILL --harness …` starts the real installed CLIs offline (scripted
provider, isolated home) with the skill staged as a user installs it. Pinned quirk of Claude Code 2.1.328: a skill
with `disable-model-invocation: true` is listed, but the model's load is refused — while static `check` passes it;
the verdict names the rule that should have caught it. A plain skill is listed and loaded by Claude Code and Codex,
Codex showing its description untrimmed. Verdicts are cached by skill hash and CLI version."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import REPO, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]
LISTED = REPO / "examples" / "eval" / "skills" / "csv-column-stats"


def test_check_harness_on_a_listed_and_a_refused_skill(tmp_path: Path) -> None:
    refused = tmp_path / "user-only-report"
    refused.mkdir()
    (refused / "SKILL.md").write_text(
        "---\nname: user-only-report\ndescription: Build the weekly status report from the team's notes. Use when "
        "the user asks for the weekly report.\ndisable-model-invocation: true\n---\n\n# Weekly report\n\n"
        "1. Read notes/*.md.\n2. Group the items by project.\n3. Write report.md with one section per project.\n"
    )
    env = {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "SKILLWORKS_HARNESS_CACHE": os.environ.get("SKILLWORKS_HARNESS_CACHE")
        or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "skillworks" / "harnesses"),
    }
    proc = skillworks("check", str(LISTED), str(refused), "--harness", "claude-code,codex", "--format", "json", env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]  # one harness did not load one skill
    docs = [json.loads(chunk) for chunk in proc.stdout.replace("}\n{", "}\n\x00{").split("\x00")]
    by = {(d["skill"], v["harness"]): v for d in docs for v in d["harnesses"]}
    ok_cc, ok_cx = by["csv-column-stats", "claude-code"], by["csv-column-stats", "codex"]
    assert (ok_cc["status"], ok_cc["listed"], ok_cc["loaded"], ok_cc["version"]) == ("loaded", True, True, "2.1.328")
    assert ok_cx["status"] == "loaded" and ok_cx["trimmed"] is False
    assert ok_cx["description_shown"].startswith("Summarise one numeric column of a CSV file")
    bad = by["user-only-report", "claude-code"]
    assert (bad["status"], bad["listed"], bad["loaded"], bad["static_valid"]) == (
        "listed-not-loaded",
        True,
        False,
        True,
    )
    assert "disable-model-invocation" in bad["cli_said"]
    assert bad["should_have_caught"].startswith("model-invocation-disabled")
    assert by["user-only-report", "codex"]["status"] == "loaded"  # Codex has no such rule: the file is read
    # the second check is answered from the cache (same skill hash, same CLI versions), with the same verdicts
    again = skillworks("check", str(refused), "--harness", "claude-code", "--format", "json", env=env)
    [cached] = json.loads(again.stdout)["harnesses"]
    assert cached["cached"] is True and cached["status"] == "listed-not-loaded"


def test_check_harness_rejects_an_unknown_harness() -> None:
    proc = skillworks("check", str(LISTED), "--harness", "claude-code,vim")
    assert proc.returncode == 2 and "unknown harness 'vim'" in proc.stderr and "Traceback" not in proc.stderr
