"""The gate on a replayed library (issue 25): `run --conditions evolved --skills-from DIR` serves a saved library
version to held-out tasks; each of its skills passes the gate against the trial's own task, so a library
that stored a held-out task's expected total (the "+100 pp, unflagged" replay) loses that skill, recorded
with its reason, while its clean skills are served. No sandbox or model: the provision step alone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from skillworks.evolve.source import SKILLS_FROM_KEY
from skillworks.experiment.plan import TrialSpec
from skillworks.experiment.spec import AgentConfig
from skillworks.experiment.trial import TrialEnvironment
from skillworks.provision import get_condition, provide_skills
from skillworks.provision.sources import SkillProvision, SourceRequest
from skillworks.tasks import load_task

FAMILY = Path(__file__).resolve().parents[3] / "examples" / "families" / "euro-ledgers"


def _md(name: str, body: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Read semicolon-separated ledger exports with European numbers. Use "
        f"when totalling a ledger CSV.\n---\n# Ledger totals\n\n{body}\n"
    )


def _provide(tmp_path: Path, library: Path, task_id: str) -> SkillProvision:
    spec = TrialSpec(load_task(FAMILY / task_id), "evolved", AgentConfig(name="oracle"), 0, 0)
    tenv = TrialEnvironment(run_id="r", run_dir=tmp_path / "run", experiment_extra={SKILLS_FROM_KEY: str(library)})
    trial_dir = tmp_path / "run" / "trials" / spec.trial_id
    trial_dir.mkdir(parents=True)
    return asyncio.run(provide_skills(get_condition("evolved"), SourceRequest(spec, tenv, trial_dir)))


def test_a_replayed_library_is_gated_against_the_held_out_task(tmp_path: Path) -> None:
    lib = tmp_path / "v5"
    (lib / "ledger-totals" / "references").mkdir(parents=True)
    (lib / "ledger-totals" / "SKILL.md").write_text(_md("ledger-totals", "See references/totals.md."))
    (lib / "ledger-totals" / "references" / "totals.md").write_text("March export: the total is 16038.81\n")
    (lib / "ledger-notes").mkdir()
    (lib / "ledger-notes" / "SKILL.md").write_text(_md("ledger-notes", "Remove the thousands dots, then sum."))
    held_out = _provide(tmp_path / "a", lib, "ledger-2")  # 16038.81 is ledger-2's expected total
    assert [s.name for s in held_out.skills] == ["ledger-notes"]
    (rejected,) = held_out.rejected
    assert rejected.skill == "ledger-totals" and rejected.reasons[0].startswith("leak-expected-value")
    (recorded,) = held_out.record["gate"]["rejected"]
    assert recorded["skill"] == "ledger-totals" and "ledger-2" in recorded["reasons"][0]
    assert held_out.record["gate"]["passed"][0].startswith("ledger-notes@")
    # the same library on another task of the family: that total is no answer there, both skills are served
    other = _provide(tmp_path / "b", lib, "ledger-3")
    assert sorted(s.name for s in other.skills) == ["ledger-notes", "ledger-totals"] and other.rejected == []
