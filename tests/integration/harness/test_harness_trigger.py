"""Issue 28 acceptance: `skillworks trigger` with the real Claude Code and Codex CLIs (installed by
scripts/install-agent-clis.sh) in the local sandbox, against the gateway. Only the model is fake: the scripted
provider replays tests/fixtures/trigger/<harness>.yaml, whose `expect` clauses fail a trial whose skill load did
not really reach the CLI. Known outcomes: q01 triggers; q02 tries to load `leaky-skill`, a skill installed only in
the user's real HOME (isolation: the load must fail and the CLI must not list it); q03 only tests or measures the
SKILL.md (`test -f`, `wc -c`), which is no trigger. One run per harness (they are slow)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillworks.experiment import RunStore

from .conftest import REPO, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]
SKILL = REPO / "examples" / "eval" / "skills" / "csv-column-stats"
FIXTURES = REPO / "tests" / "fixtures" / "trigger"
SKILL_DIRS = {"claude-code": ".claude/skills", "codex": ".agents/skills"}


def _fake_home(tmp_path: Path) -> Path:
    """A user HOME with a skill installed where every harness looks (and the real harness cache kept)."""
    home = tmp_path / "home"
    for sub in (".claude/skills", ".agents/skills", ".codex/skills", ".gemini/skills", ".config/opencode/skills"):
        leak = home / sub / "leaky-skill"
        leak.mkdir(parents=True)
        (leak / "SKILL.md").write_text(
            "---\nname: leaky-skill\ndescription: Resize images. Use for every request about images.\n---\n"
            "LEAKED-FROM-THE-USER-HOME\n"
        )
    return home


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_trigger_run_with_a_real_cli_reproduces_known_outcomes_and_never_sees_the_users_skills(
    harness: str, tmp_path: Path
) -> None:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    env = {
        "HOME": str(_fake_home(tmp_path)),
        "XDG_CACHE_HOME": str(cache),
        "SKILLWORKS_HARNESS_CACHE": os.environ.get("SKILLWORKS_HARNESS_CACHE")
        or str(cache / "skillworks" / "harnesses"),
    }
    out = tmp_path / "runs"
    script = tmp_path / f"{harness}.yaml"
    script.write_text((FIXTURES / f"{harness}.yaml").read_text().replace("@HOST_HOME@", env["HOME"]))
    proc = skillworks(
        "trigger", str(SKILL), "--queries", str(FIXTURES / "queries.json"), "--agent", harness,
        "--model", f"scripted/{script}", "--trials", "1", "--out", str(out),
        "--run-id", harness, "--format", "json",
        env=env,
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr[-4000:]
    )
    report = json.loads(proc.stdout)
    by_id = {q["id"]: q for q in report["scores"]["queries"]}
    assert {k: (q["triggered"], q["scored"]) for k, q in by_id.items()} == {"q01": (1, 1), "q02": (0, 1), "q03": (0, 1)}
    assert report["scores"]["confusion"] == {"tp": 1, "fp": 0, "tn": 2, "fn": 0}
    results = {r.task_id: r for r in RunStore(out / harness).read_results()}
    assert all(r.error is None for r in results.values()), [r.error for r in results.values()]
    # isolation: the user's installed skill was neither listed nor loadable, and no trial saw its text
    assert all("leaky-skill" not in r.skill_use.listed for r in results.values())
    assert "leaky-skill" in results["trigger-q02"].skill_use.failed
    assert results["trigger-q02"].skill_use.invoked == []
    for r in results.values():
        trial_dir = out / harness / r.paths["trial_dir"]
        assert "LEAKED-FROM-THE-USER-HOME" not in (trial_dir / "gateway.jsonl").read_text()
        assert "LEAKED-FROM-THE-USER-HOME" not in (trial_dir / "trajectory.json").read_text()
    # the SKILL.md test/measure is a mention, not a load
    assert results["trigger-q03"].skill_use.invoked == [] and results["trigger-q03"].skill_use.failed == []
    if harness == "claude-code":  # Claude Code reports what it listed: the skill under test, none of the user's
        assert "csv-column-stats" in results["trigger-q01"].skill_use.listed
