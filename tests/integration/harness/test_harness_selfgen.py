"""Issue 12: the self-generated condition with real agent CLIs (Claude Code, Codex). Only the model is fake:
the `scripted` provider replays tests/fixtures/selfgen/<harness>.yaml, whose `expect` clauses fail the trial
if the CLI did not send what a real run would (the creator's instruction, the pack written, the total)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.experiment import RunStore

from .conftest import REPO, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]

TASK = REPO / "tests" / "fixtures" / "tasks_sandbox" / "selfgen-sum"


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_self_generated_with_a_real_cli(tmp_path: Path, harness: str) -> None:
    script = REPO / "tests" / "fixtures" / "selfgen" / f"{harness}.yaml"
    proc = skillworks(
        "run", str(TASK), "--agent", harness, "--model", f"scripted/{script}", "--conditions", "self-generated",
        "--out", str(tmp_path), "--run-id", harness,
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    (r,) = RunStore(tmp_path / harness).read_results()
    assert r.error is None, r.error
    # the creator's marker in its own workspace is not in the solver's (verifier test), the total is right
    assert r.reward == 1.0 and {t.name: t.status for t in r.tests}["test_no_creator_state"] == "passed"
    assert r.skill_source is not None and r.skill_source.usage is not None
    assert r.skills_staged[0].startswith("number-summing@")
    assert [p["status"] for p in r.skill_source.record["packs"]] == ["staged"]
    assert r.skill_source.usage.calls == 2 and r.usage.calls == 2  # creator and solver calls kept apart
    creator = tmp_path / harness / r.skill_source.record["creator_dir"]
    audit = json.loads((creator / "skills.json").read_text())
    assert [v["name"] for v in audit["visible"]] == ["skill-authoring"]
    assert "number-summing/scripts/sum.py" in r.skill_use.scripts_run


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_evolve_with_a_real_cli(tmp_path: Path, harness: str) -> None:
    """`skillworks evolve` is harness-independent: the same patch call and library staging with a real CLI."""
    import shutil

    family = tmp_path / "fam"
    for tid in ("ledger-1", "ledger-2"):
        shutil.copytree(REPO / "examples" / "families" / "euro-ledgers" / tid, family / tid)
    (family / "family.yaml").write_text("order: [ledger-1, ledger-2]\n")
    script = REPO / "tests" / "fixtures" / "selfgen" / f"evolve-{harness}.yaml"
    proc = skillworks(
        "evolve", str(family), "--agent", harness, "--model", f"scripted/{script}", "--out", str(tmp_path),
        "--run-id", "ev",
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    results = {(r.task_id, r.condition): r for r in RunStore(tmp_path / "ev").read_results()}
    assert all(r.error is None for r in results.values()), [r.error for r in results.values()]
    assert results[("ledger-1", "evolved")].reward == 0.0 and results[("ledger-2", "evolved")].reward == 1.0
    assert results[("ledger-2", "vanilla")].reward == 0.0
    assert results[("ledger-2", "evolved")].skills_staged[0].startswith("european-number-csv@")
    assert results[("ledger-2", "evolved")].skill_use.read == ["european-number-csv"]
    summary = json.loads((tmp_path / "ev" / "evolve_summary.json").read_text())
    assert summary["use_pct"] == pytest.approx(50.0)


def test_bundled_creator_skill_with_codex(tmp_path: Path) -> None:
    """`--creator-skill bundled`: no authoring skill is staged; Codex is told to use its own skill-creator."""
    script = REPO / "tests" / "fixtures" / "selfgen" / "codex.yaml"
    proc = skillworks(
        "run", str(TASK), "--agent", "codex", "--model", f"scripted/{script}", "--conditions", "self-generated",
        "--creator-skill", "bundled", "--out", str(tmp_path), "--run-id", "bundled",
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    (r,) = RunStore(tmp_path / "bundled").read_results()
    assert r.error is None and r.reward == 1.0, r.error
    assert r.skill_source is not None and r.skill_source.record["authoring_skill"] == "bundled:skill-creator"
    creator = tmp_path / "bundled" / r.skill_source.record["creator_dir"]
    assert json.loads((creator / "skills.json").read_text())["visible"] == []
    assert "bundled `skill-creator` skill" in (creator / "trajectory.json").read_text()
    spec = json.loads((tmp_path / "bundled" / "experiment.json").read_text())
    assert spec["extra"]["self_generated"]["creator_skill"] == "bundled"
