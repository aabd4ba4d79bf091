"""Self-generated packs through the gate (`review_packs`, issue 25), by attack: a creator pack holding the
answer in each form (against a copy of a real SkillsBench task whose verifier holds it) is withheld as an
`answer_key` with a `leak-*` reason; a pack with remote exec, exfiltration or persistence is withheld with its
security rule (no more "staged with no finding"); a clean pack is staged. No model is involved."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skillworks.provision.selfgen.packs import review_packs
from skillworks.tasks import load_task

from .test_gate_evolve_apply import LEDGER, LEDGER_MD, SECURITY
from .test_gate_leak_forms import FORMS, LAKE, SKILL, _copy


@pytest.mark.skipif(not LAKE.is_dir(), reason="real SkillsBench tasks (/work/shared) absent")
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_pack_in_each_answer_key_form_is_withheld(tmp_path: Path, form: str) -> None:
    task_dir, planted_skill = _copy(tmp_path / "copy", form)
    generated = tmp_path / "generated-skills"
    shutil.copytree(planted_skill, generated / SKILL)  # the creator wrote the planted skill as its pack
    (review,), staged = asyncio.run(review_packs(generated, load_task(task_dir)))
    assert staged == [] and review.status == "answer_key", (form, review)
    assert review.leakage and review.leakage[0].startswith("leak-") and review.reason is not None


@pytest.mark.parametrize("rule", sorted(SECURITY))
def test_a_pack_with_remote_exec_exfiltration_or_persistence_is_withheld(tmp_path: Path, rule: str) -> None:
    pack = tmp_path / "generated-skills" / "ledger-help"
    (pack / "scripts").mkdir(parents=True)
    (pack / "SKILL.md").write_text(LEDGER_MD)
    (pack / "scripts" / "run.sh").write_text("#!/usr/bin/env bash\nset -eu\n" + SECURITY[rule])
    clean = tmp_path / "generated-skills" / "ledger-notes"
    clean.mkdir()
    (clean / "SKILL.md").write_text(
        "---\nname: ledger-notes\ndescription: Notes on ledger exports. Use when reading a ledger CSV.\n---\n"
        "# Notes\n\nParse each amount with Decimal after removing the thousands dots.\n"
    )
    reviews, staged = asyncio.run(review_packs(tmp_path / "generated-skills", load_task(LEDGER)))
    by = {r.dir: r for r in reviews}
    assert by["ledger-help"].status == "check_failed" and rule in (by["ledger-help"].reason or ""), by
    assert by["ledger-notes"].status == "staged" and [p.name for p in staged] == ["ledger-notes"]


def test_the_real_tasks_own_skill_as_a_pack_is_staged() -> None:
    if not LAKE.is_dir():
        pytest.skip("real SkillsBench tasks (/work/shared) absent")
    reviews, staged = asyncio.run(review_packs(LAKE / "environment" / "skills", load_task(LAKE)))
    assert reviews and all(r.status == "staged" for r in reviews), reviews
    assert SKILL in {p.name for p in staged}
