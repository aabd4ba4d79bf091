"""An answer key split between two skills (attack): the verifier of a copy of a real SkillsBench task checks two
labels (a pytest `EXPECTED` dict); skill A names one, skill B the other. Each alone passes the gate (a
lone domain phrase is vocabulary, not an answer); side by side, as a trial or a library gives them to an
agent, they are the answer key, and every producer rejects them: `gate_skills` (self-generated sources,
compiled, replay), a seed library, an evolve patch (the library stays byte-identical), creator packs.
The five real tasks' curated skills side by side stay clean. No model is involved."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skillworks.evolve.apply import apply_patch
from skillworks.evolve.patch import FileUpsert, Patch
from skillworks.provision.gate import gate_library, gate_skill, gate_skills
from skillworks.provision.selfgen.packs import review_packs
from skillworks.skills.package import load_skill
from skillworks.tasks import load_task
from skillworks.tasks.model import Task

from .test_gate_evolve_apply import _snapshot
from .test_gate_leak_forms import LAKE, REAL_TASKS, _copy

pytestmark = pytest.mark.skipif(not LAKE.is_dir(), reason="real SkillsBench tasks (/work/shared) absent")


def _md(name: str, line: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Label a lake's warming drivers. Use when summarising a lake warming "
        f"attribution.\n---\n# {name}\n\n{line}\n"
    )


PARTS = {
    "lake-names": "Write the lake as 'Lake Zurich' in the summary.",
    "warming-labels": "Call the result 'heat-dominated warming'.",
}


def _setup(tmp_path: Path) -> tuple[Task, Path]:
    task_dir, _ = _copy(tmp_path / "copy", "dict")  # its verifier: EXPECTED = {'lake': 'Lake Zurich', ...}
    lib = tmp_path / "lib"
    for name, line in PARTS.items():
        (lib / name).mkdir(parents=True)
        (lib / name / "SKILL.md").write_text(_md(name, line))
    return load_task(task_dir), lib


def test_each_half_passes_alone_and_both_are_rejected_side_by_side(tmp_path: Path) -> None:
    task, lib = _setup(tmp_path)
    skills = [load_skill(lib / name) for name in PARTS]
    for skill in skills:
        assert asyncio.run(gate_skill(skill, [task])).passed
    outcome = asyncio.run(gate_skills(skills, [task]))
    assert outcome.kept == [] and len(outcome.rejected) == 2
    for v in outcome.rejected:
        assert v.reasons[0].startswith("leak-expected-value") and "(held jointly)" in v.reasons[0], v.reasons
    seed = asyncio.run(gate_library(lib, [task]))  # a --seed-skills library
    assert seed.kept == [] and {v.skill for v in seed.rejected} == set(PARTS)


def test_a_patch_completing_a_split_key_is_rejected_byte_identical(tmp_path: Path) -> None:
    task, lib = _setup(tmp_path)
    prev = tmp_path / "library" / "v0"
    shutil.copytree(lib / "lake-names", prev / "lake-names")  # the first half is already in the library
    before = _snapshot(prev)
    patch = Patch(
        summary="labels",
        upsert_files=[
            FileUpsert(path="warming-labels/SKILL.md", content=_md("warming-labels", PARTS["warming-labels"]))
        ],
    )
    result = asyncio.run(apply_patch(prev, patch, prev.parent / "v1", gate_tasks=[task]))
    assert not result.accepted and result.reason is not None and "(held jointly)" in result.reason, result.reason
    assert "skill 'warming-labels'" in result.reason
    assert _snapshot(prev.parent / "v1") == before == _snapshot(prev)


def test_creator_packs_holding_a_split_key_are_withheld(tmp_path: Path) -> None:
    task, lib = _setup(tmp_path)
    reviews, staged = asyncio.run(review_packs(lib, task))
    assert staged == [] and [r.status for r in reviews] == ["answer_key", "answer_key"], reviews
    assert all("(held jointly)" in (r.reason or "") for r in reviews)


def test_the_real_tasks_curated_skills_side_by_side_stay_clean() -> None:
    for task_dir in sorted(p for p in REAL_TASKS.iterdir() if (p / "task.toml").is_file()):
        task = load_task(task_dir)
        outcome = asyncio.run(gate_skills(list(task.skills), [task]))
        assert outcome.rejected == [] and len(outcome.kept) == len(task.skills), (task.id, outcome.rejected)
