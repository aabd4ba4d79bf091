"""Skills baked into a task image (`COPY skills ...`): visible unless stripped, and the post-staging
audit proves which."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.sandbox.container import ContainerOptions, ContainerRuntime, ContainerSandbox
from skillworks.skills.staging import audit_skills, stage_skills
from skillworks.tasks.model import Task

from .conftest import RUN_ID

pytestmark = [pytest.mark.podman]

CLAUDE_SKILLS = "/root/.claude/skills"
CODEX_SKILLS = "/root/.agents/skills"


async def test_baked_skill_absent_when_stripped(stripped: ContainerSandbox, baked_task: Task) -> None:
    assert stripped.image is not None
    assert stripped.image.stripped_skill_copies == stripped.image.baked_skill_copies
    assert len(stripped.image.stripped_skill_copies) == 2
    record = await audit_skills(stripped, "none", [], CLAUDE_SKILLS)
    assert record.ok, record.problems
    assert record.visible == []
    # not anywhere else either: neither the COPY'd file nor the skill's text
    assert not await stripped.path_exists("/etc/skill-copy/SKILL.md")
    found = await stripped.exec(
        "grep -rlsF 'name: count-lines' / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; echo done",
        timeout=120,
    )
    assert found.stdout.strip() == "done", found.stdout
    # the rest of the context is still there
    assert (await stripped.exec("cat /app/data.txt")).stdout.split() == ["alpha", "beta", "gamma"]


async def test_baked_skill_visible_without_stripping_and_audit_catches_it(
    baked_task: Task, options: ContainerOptions, runtime: ContainerRuntime, tmp_path: Path
) -> None:
    sandbox = ContainerSandbox(baked_task, tmp_path, options.merged(strip_skills=False, run_id=RUN_ID), runtime=runtime)
    async with sandbox:
        assert sandbox.image is not None and sandbox.image.stripped_skill_copies == ()
        leak = await audit_skills(sandbox, "none", [], CLAUDE_SKILLS)
        assert not leak.ok
        stray = "stray SKILL.md visible at /etc/skill-copy/SKILL.md (outside every skill dir)"
        assert leak.problems == [
            stray,
            f"unexpected skill count-lines ({baked_task.skills[0].package_hash[:12]}) visible at "
            f"{CLAUDE_SKILLS}/count-lines",
        ]
        assert leak.stray_skill_md == ["/etc/skill-copy/SKILL.md"]
        # the curated condition for claude-code: the baked copy in the skill dir is exactly the staged
        # skill, but the second copy the Dockerfile makes elsewhere is still found
        curated = await audit_skills(sandbox, "curated", baked_task.skills, CLAUDE_SKILLS)
        assert curated.problems == [stray]


async def test_stage_into_stripped_image_for_another_harness(
    stripped: ContainerSandbox, baked_task: Task, tmp_path: Path
) -> None:
    """Curated for a harness with another skill path: staged there, and nothing else visible."""
    await stage_skills(stripped, baked_task.skills, CODEX_SKILLS, tmp_path)
    record = await audit_skills(stripped, "curated", baked_task.skills, CODEX_SKILLS)
    assert record.ok, record.problems
    assert [v.path for v in record.visible] == [f"{CODEX_SKILLS}/count-lines"]
