"""Staging skills for a trial, and the post-staging audit that the agent sees exactly those skills.

The audit looks at what is *visible inside the sandbox* (downloaded back to the host), not at what we
meant to copy: a skill baked into an image, left in a home directory or copied twice is caught here.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from skillworks._tempdirs import temp_prefix
from skillworks.errors import StagingError
from skillworks.skills.package import SkillPackage, discover_skills, hash_directory

if TYPE_CHECKING:
    from skillworks.sandbox.base import Sandbox

# Where harnesses look for skills, relative to $HOME, /root and the workspace (real SkillsBench images
# `COPY skills` into all of these). The audit checks every one, so a skill leaking into any harness's
# view is found whichever agent runs.
HOME_SKILL_DIRS = (
    ".claude/skills",
    ".agents/skills",
    ".codex/skills",
    ".gemini/skills",
    ".qwen/skills",
    ".goose/skills",
    ".factory/skills",
    ".github/skills",
    ".opencode/skill",
    ".opencode/skills",
    ".config/opencode/skills",
    ".config/opencode/skill",
    ".openhands/skills",
    ".skills",
)
WORKSPACE_SKILL_DIRS = (*HOME_SKILL_DIRS, "skills")
ABSOLUTE_SKILL_DIRS = ("/skills", "/etc/claude-code/skills", "/etc/claude-code/.claude/skills")
# Not searched for stray SKILL.md files: the OS's own trees (and virtual file systems), skillworks' mounts.
SYSTEM_DIRS = (
    "/proc",
    "/sys",
    "/dev",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/run",
    "/var/lib",
    "/var/cache",
    "/nix",
    "/snap",
    # the harness CLIs and host tools skillworks mounts read-only: skills bundled with a CLI are the
    # harness's own (recorded as harness_skills after the run), not a leak of the condition's skills
    "/opt/skillworks",
)
_STRAY_LIMIT = 50


class StagedSkill(BaseModel):
    name: str
    package_hash: str
    path: str | None = Field(default=None, description="where it is visible inside the sandbox")


class HarnessSkill(BaseModel):
    """A skill the harness provides itself (not staged by skillworks): under `none` it is a skill too."""

    name: str
    origin: str = Field(description="e.g. 'bundled with claude-code 2.1.328'")
    sha256: str | None = Field(default=None, description="of its SKILL.md, where the file was readable")
    path: str | None = Field(default=None, description="where the harness keeps it, when known")


class StagingRecord(BaseModel):
    """Contents of a trial's skills.json."""

    condition: str
    skills_dir: str | None = Field(description="where the agent's harness reads skills, inside the sandbox")
    expected: list[StagedSkill]
    visible: list[StagedSkill]
    dirs_checked: list[str]
    ok: bool
    problems: list[str] = Field(default_factory=list)
    stray_skill_md: list[str] = Field(
        default_factory=list, description="SKILL.md files found outside the skill dirs (system dirs not searched)"
    )
    skipped: list[str] = Field(
        default_factory=list, description="files of staged skills not copied (named pipes, sockets, devices)"
    )
    warnings: list[str] = Field(default_factory=list)
    handles: list[str] = Field(
        default_factory=list,
        description="tools that stand for skills, given to the agent instead of files (the compiled condition's "
        "run_<skill> handles; where their artifacts lie in the sandbox: the trial's compiled-skills.json)",
    )
    harness_skills: list[HarnessSkill] | None = Field(
        default=None,
        description="skills the agent's harness brought itself (bundled with the CLI), as it listed them after "
        "the run; [] when it brought none, None when the agent does not say",
    )


def copy_skills(skills: Sequence[SkillPackage], dest: Path) -> None:
    """Copy each skill package to dest/<name>. Any failure raises: no `cp ... || true`."""
    dest.mkdir(parents=True, exist_ok=True)
    for skill in skills:
        target = dest / skill.name
        if target.exists():
            raise StagingError(f"two skills named {skill.name!r} in one condition")
        skipped = {skill.root / rel for rel in skill.skipped_files}  # pipes, sockets, devices: never copied

        def ignore(directory: str, names: list[str], skipped: set[Path] = skipped) -> list[str]:
            return [n for n in names if n in (".git", "__pycache__") or Path(directory) / n in skipped]

        shutil.copytree(skill.root, target, symlinks=False, ignore=ignore)
        copied = hash_directory(target)
        if copied != skill.package_hash:
            raise StagingError(f"skill {skill.name!r} changed while staging (hash {copied[:12]} != {skill.short_hash})")


def candidate_skill_dirs(home: str, workdir: str, skills_dir: str | None) -> list[str]:
    """Every skill dir of every harness under $HOME, /root and the workspace, without duplicates
    (HOME may be the workspace, or /root)."""
    dirs = [skills_dir] if skills_dir else []
    dirs += [f"{home.rstrip('/')}/{d}" for d in HOME_SKILL_DIRS]
    dirs += [f"/root/{d}" for d in HOME_SKILL_DIRS]
    dirs += [f"{workdir.rstrip('/')}/{d}" for d in WORKSPACE_SKILL_DIRS]
    dirs += list(ABSOLUTE_SKILL_DIRS)
    return list(dict.fromkeys(dirs))


def _survey_script(dirs: Sequence[str]) -> str:
    """One shell command (one round trip on any backend): `D<path>` for each skill dir that exists,
    then `S<path>` for SKILL.md files anywhere else outside the system dirs, then `F` when the search
    ran (NUL-separated; POSIX find, so busybox images work too)."""
    prune = " -o ".join(f"-path {shlex.quote(d)}" for d in [*SYSTEM_DIRS, *dirs])
    exists = " ".join(shlex.quote(d) for d in dirs)
    return (
        f'for p in {exists}; do [ -e "$p" ] && printf "D%s\\0" "$p"; done; '
        "if command -v find >/dev/null 2>&1; then "
        f"find / \\( {prune} \\) -prune -o -name SKILL.md -exec printf 'S%s\\0' {{}} + 2>/dev/null | head -c 65536; "
        "printf 'F\\0'; fi; exit 0"
    )


async def _survey(sandbox: Sandbox, dirs: Sequence[str]) -> tuple[set[str], list[str] | None]:
    """(existing skill dirs, stray SKILL.md paths or None when the search could not run)."""
    result = await sandbox.exec(_survey_script(dirs), user="root", timeout=120)
    items = result.stdout.split("\0") if result.ok else []
    if not result.ok:  # no shell at all: ask for each dir
        return {d for d in dirs if await sandbox.path_exists(d)}, None
    existing = {item[1:] for item in items if item.startswith("D")}
    if "F" not in items:
        return existing, None
    return existing, sorted(item[1:] for item in items if item.startswith("S"))


async def stage_skills(sandbox: Sandbox, skills: Sequence[SkillPackage], skills_dir: str | None, scratch: Path) -> None:
    """Copy `skills` into the sandbox at `skills_dir` (a harness's skill path)."""
    if not skills:
        return
    if skills_dir is None:
        raise StagingError("this agent declares no skill directory, so skills cannot be staged for it")
    staging = scratch / "staged-skills"
    copy_skills(skills, staging)
    for skill in skills:
        await sandbox.upload(staging / skill.name, f"{skills_dir}/{skill.name}")


async def audit_skills(
    sandbox: Sandbox, condition: str, expected: Sequence[SkillPackage], skills_dir: str | None
) -> StagingRecord:
    """Download every place a harness could find skills, look for stray SKILL.md files anywhere else,
    and compare with what the condition wants: any difference is a problem (a staging error)."""
    dirs = candidate_skill_dirs(sandbox.home, sandbox.workdir, skills_dir)
    visible: list[StagedSkill] = []
    problems: list[str] = []
    warnings: list[str] = []
    existing, found = await _survey(sandbox, dirs)
    if found is None:
        warnings.append("could not search the sandbox for stray SKILL.md files (no find); skill dirs checked")
    stray = found or []
    for path in stray[:_STRAY_LIMIT]:
        problems.append(f"stray SKILL.md visible at {path} (outside every skill dir)")
    if len(stray) > _STRAY_LIMIT:
        problems.append(f"... and {len(stray) - _STRAY_LIMIT} more stray SKILL.md files")
    with tempfile.TemporaryDirectory(prefix=temp_prefix("audit")) as tmp:
        for i, remote in enumerate(dirs):
            if remote not in existing:
                continue
            local = Path(tmp) / str(i)
            await sandbox.download(remote, local, links="keep")
            # Links are kept as links here (never followed out of the sandbox), so what a link points
            # at cannot be audited: a link anywhere in a skill location is itself a staging problem.
            for link in _symlinks(local):
                rel = link.relative_to(local).as_posix()
                problems.append(
                    f"symlink in a skill location cannot be audited: {remote if rel == '.' else f'{remote}/{rel}'}"
                )
            for skill_root in discover_skills(local):
                rel = skill_root.relative_to(local).as_posix()
                where = remote if rel == "." else f"{remote}/{rel}"
                visible.append(StagedSkill(name=skill_root.name, package_hash=hash_directory(skill_root), path=where))
    want = [StagedSkill(name=s.name, package_hash=s.package_hash, path=f"{skills_dir}/{s.name}") for s in expected]
    seen = {(v.name, v.package_hash, v.path) for v in visible}
    for w in want:
        if (w.name, w.package_hash, w.path) not in seen:
            problems.append(f"expected skill {w.name} ({w.package_hash[:12]}) is not visible at {w.path}")
    wanted = {(w.name, w.package_hash, w.path) for w in want}
    for v in visible:
        if (v.name, v.package_hash, v.path) not in wanted:
            problems.append(f"unexpected skill {v.name} ({v.package_hash[:12]}) visible at {v.path}")
    skipped = [f"{s.name}/{rel}" for s in expected for rel in s.skipped_files]
    if skipped:
        warnings.append(f"not staged (not regular files): {', '.join(skipped)}")
    return StagingRecord(
        condition=condition,
        skills_dir=skills_dir,
        expected=want,
        visible=visible,
        dirs_checked=dirs,
        ok=not problems,
        problems=problems,
        stray_skill_md=stray,
        skipped=skipped,
        warnings=warnings,
    )


def _symlinks(root: Path) -> list[Path]:
    if root.is_symlink():
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            if path.is_symlink():
                found.append(path)
    return found
