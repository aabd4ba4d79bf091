"""The post-staging audit sees what the agent sees: a skill that reaches the sandbox by any route other
than staging (a symlink planted in the workspace, a copy in a harness directory) fails the audit."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skillworks.sandbox import create_sandbox
from skillworks.skills import audit_skills, load_skill, stage_skills
from skillworks.tasks import load_task

pytestmark = [pytest.mark.bwrap]


def _task_with_env(tmp_path: Path, quickstart: Path, plant: str) -> Path:
    task = tmp_path / "task"
    shutil.copytree(quickstart / "lab-units-to-si", task)
    skill = task / "environment" / "skills" / "clinical-lab-si-units"
    if plant == "symlink":
        (task / "environment" / ".agents" / "skills").mkdir(parents=True)
        (task / "environment" / ".agents" / "skills" / "lab").symlink_to(skill)
    elif plant == "copy":
        shutil.copytree(skill, task / "environment" / ".claude" / "skills" / "clinical-lab-si-units")
    return task


async def _audit(task_dir: Path, tmp_path: Path, staged: list[str]) -> list[str]:
    task = load_task(task_dir)
    sandbox = create_sandbox("local", task, tmp_path / "scratch", hide_paths=[task.root])
    await sandbox.start()
    try:
        skills = [s for s in task.skills if s.name in staged]
        skills_dir = f"{sandbox.home}/.agents/skills"
        await stage_skills(sandbox, skills, skills_dir, tmp_path / "scratch")
        record = await audit_skills(sandbox, "none" if not staged else "curated", skills, skills_dir)
        return record.problems
    finally:
        await sandbox.stop()


@pytest.mark.parametrize("plant", ["symlink", "copy"])
def test_a_skill_planted_in_the_workspace_fails_the_none_audit(tmp_path: Path, quickstart: Path, plant: str) -> None:
    problems = asyncio.run(_audit(_task_with_env(tmp_path, quickstart, plant), tmp_path, []))
    assert problems, "the planted skill went unnoticed"
    expected = "symlink in a skill location" if plant == "symlink" else "unexpected skill clinical-lab-si-units"
    assert any(expected in p for p in problems), problems


def test_clean_curated_staging_passes(tmp_path: Path, quickstart: Path) -> None:
    assert asyncio.run(_audit(_task_with_env(tmp_path, quickstart, "none"), tmp_path, ["clinical-lab-si-units"])) == []


def test_load_skill_of_a_quickstart_skill(quickstart: Path) -> None:
    skill = load_skill(quickstart / "lab-units-to-si" / "environment" / "skills" / "clinical-lab-si-units")
    assert skill.assets


@pytest.mark.parametrize("where", [".goose/skills", ".github/skills", ".opencode/skill", ".qwen/skills"])
def test_every_harness_skill_dir_of_real_images_is_audited(tmp_path: Path, quickstart: Path, where: str) -> None:
    """SkillsBench images copy skills into ten harness dirs; one under the workspace is caught under `none`."""
    task = _task_with_env(tmp_path, quickstart, "none")
    skill = task / "environment" / "skills" / "clinical-lab-si-units"
    shutil.copytree(skill, task / "environment" / where / "clinical-lab-si-units")
    problems = asyncio.run(_audit(task, tmp_path, []))
    assert any("unexpected skill clinical-lab-si-units" in p and where in p for p in problems), problems


def test_a_stray_skill_md_anywhere_fails_the_audit(tmp_path: Path, quickstart: Path) -> None:
    task = _task_with_env(tmp_path, quickstart, "none")
    stray = task / "environment" / "notes" / "howto"
    stray.mkdir(parents=True)
    shutil.copy(task / "environment" / "skills" / "clinical-lab-si-units" / "SKILL.md", stray / "SKILL.md")
    problems = asyncio.run(_audit(task, tmp_path, []))
    assert any(
        p.startswith("stray SKILL.md visible at") and p.endswith("notes/howto/SKILL.md (outside every skill dir)")
        for p in problems
    ), problems


def test_skill_dirs_are_deduplicated_when_home_is_the_workspace() -> None:
    from skillworks.skills.staging import candidate_skill_dirs

    dirs = candidate_skill_dirs("/root", "/root", "/root/.claude/skills")
    assert len(dirs) == len(set(dirs))
    for expected in (
        "/root/.claude/skills",
        "/etc/claude-code/.claude/skills",
        "/root/.codex/skills",
        "/root/.opencode/skill",
        "/root/.goose/skills",
        "/root/.factory/skills",
        "/root/.agents/skills",
        "/root/.github/skills",
        "/root/.gemini/skills",
        "/root/.qwen/skills",
        "/root/skills",
    ):
        assert expected in dirs
    assert "/app/.goose/skills" in candidate_skill_dirs("/home/agent", "/app", None)
