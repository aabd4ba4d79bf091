"""Safe, atomic application of a skill patch to a library version.

SkillFlow applies the model's patch paths as given; here every patch is checked first and rejected as a
whole, with a recorded reason, when it has: an absolute path, a ``..`` component, a path through a symlink,
a write outside the library root (or outside a skill directory), non-UTF-8 content, a file or a library
over the size/count limits, a SKILL.md that fails the spec (an error-severity `skillworks check` finding),
a delete of a path that does not exist, or a skill the gate rejects (`skillworks.provision.gate`:
blocking security findings, an answer key for any task the new version will be used on). Paths that
cannot be written as given (a file where the patch
needs a directory or the reverse, a name longer than the file system allows, a path in a directory the
package hash ignores such as ``.git``) are rejected too. A rejected patch leaves the library unchanged.

A whole skill is deleted with its directory name (``delete_paths: ["<skill>"]``); a skill directory the
patch leaves without any file is removed.

Atomicity: version ``v<t>`` is built in a temporary sibling directory from a copy of ``v<t-1>`` and
renamed into place only when complete, so a crash mid-apply leaves every earlier version intact (and no
``v<t>``); the previous version is never written to.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from skillworks.evolve.patch import Patch
from skillworks.skills.package import IGNORED_PARTS, hash_directory, iter_package_files
from skillworks.tasks.model import Task

MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 200
MAX_LIBRARY_BYTES = 4 * 1024 * 1024
MAX_NAME_BYTES = 255  # NAME_MAX of the usual file systems
MAX_PATH_CHARS = 1024
# what the file system says when a patch's own paths conflict (a file where it needs a directory, ...)
_PATCH_ERRNOS = frozenset({errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ENOENT, errno.ENAMETOOLONG})


@dataclass(frozen=True)
class Limits:
    file_bytes: int = MAX_FILE_BYTES
    files: int = MAX_FILES
    library_bytes: int = MAX_LIBRARY_BYTES


@dataclass
class ApplyResult:
    accepted: bool
    reason: str | None
    library_hash: str
    skills: int


class PatchRejected(Exception):
    pass


def library_skills(root: Path) -> list[Path]:
    """Skill directories of a library: its top-level dirs that hold a SKILL.md."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and (p / "SKILL.md").is_file())


def library_hash(root: Path) -> str:
    return hash_directory(root)


def _check_path(root: Path, raw: str, *, skill_dir_ok: bool = False) -> PurePosixPath:
    if not raw or raw.strip() != raw or "\0" in raw or "\\" in raw or len(raw) > MAX_PATH_CHARS:
        raise PatchRejected(f"invalid path {raw[:80]!r}")
    path = PurePosixPath(raw)
    if path.is_absolute() or raw.startswith("~") or (len(raw) > 1 and raw[1] == ":"):
        raise PatchRejected(f"absolute path {raw!r}")
    if ".." in path.parts:
        raise PatchRejected(f"path with '..': {raw!r}")
    if path.parts in ((), (".",)) or any(part == "." for part in path.parts):
        raise PatchRejected(f"invalid path {raw!r}")
    if any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in path.parts):
        raise PatchRejected(f"path component longer than {MAX_NAME_BYTES} bytes: {raw[:80]!r}")
    if any(part in IGNORED_PARTS for part in path.parts):
        raise PatchRejected(f"path in a directory skill packages ignore ({', '.join(sorted(IGNORED_PARTS))}): {raw!r}")
    current = root
    for part in path.parts:
        current = current / part
        if current.is_symlink():
            raise PatchRejected(f"path through a symlink: {raw!r}")
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise PatchRejected(f"write outside the library root: {raw!r}")
    if len(path.parts) < 2 and not (skill_dir_ok and (root / path).is_dir()):
        raise PatchRejected(f"write outside a skill directory (expected <skill>/<file>): {raw!r}")
    return path


def _validate(prev: Path, patch: Patch, limits: Limits) -> None:
    total = 0
    for up in patch.upsert_files:
        _check_path(prev, up.path)
        try:
            data = up.content.encode("utf-8")
        except UnicodeEncodeError:
            raise PatchRejected(f"non-UTF-8 content in {up.path!r}") from None
        if len(data) > limits.file_bytes:
            raise PatchRejected(f"file over the size limit: {up.path!r} is {len(data)} bytes (max {limits.file_bytes})")
        total += len(data)
    # cheap bounds before anything is written (the library as a whole is checked after the write)
    if len(patch.upsert_files) > limits.files:
        raise PatchRejected(f"library over the file-count limit: the patch writes {len(patch.upsert_files)} files")
    if total > limits.library_bytes:
        raise PatchRejected(f"library over the size limit: the patch writes {total} bytes")
    deleted: list[PurePosixPath] = []
    for raw in patch.delete_paths:
        path = _check_path(prev, raw, skill_dir_ok=True)
        gone = any(path == d or path.is_relative_to(d) for d in deleted)
        if gone or not (prev / path).exists():
            raise PatchRejected(f"delete of a path that does not exist: {raw!r}")
        deleted.append(path)


async def _check_skills(root: Path, touched: set[str]) -> None:
    from skillworks.check.model import Severity
    from skillworks.check.scan import check_skills_async
    from skillworks.errors import SkillError
    from skillworks.skills.package import load_skill

    for name in sorted(touched):
        skill = root / name
        if skill.is_dir() and not any(p.is_file() or p.is_symlink() for p in skill.rglob("*")):
            shutil.rmtree(skill)  # the patch deleted every file of the skill: the skill is gone
        if not skill.exists():
            continue  # the patch deleted the whole skill
        try:
            load_skill(skill)
        except SkillError as exc:
            raise PatchRejected(f"SKILL.md of {name!r} fails the spec: {exc.message}") from None
        report = (await check_skills_async([skill], lint=False)).skills[0]
        errors = [f for f in report.findings if f.severity is Severity.ERROR]
        if errors:
            raise PatchRejected(f"SKILL.md of {name!r} fails the spec: {errors[0].rule_id}: {errors[0].message}")


def _write(root: Path, patch: Patch) -> None:
    for raw in patch.delete_paths:
        target = root / raw
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    for up in patch.upsert_files:
        target = root / up.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(up.content.encode("utf-8"))
        except OSError as exc:
            if exc.errno not in _PATCH_ERRNOS:
                raise  # the machine's problem (disk full, I/O error), not the patch's
            raise PatchRejected(f"cannot write {up.path!r} ({exc.strerror}): the patch's paths conflict") from None


def _check_limits(root: Path, limits: Limits) -> None:
    files = iter_package_files(root)
    if len(files) > limits.files:
        raise PatchRejected(f"library over the file-count limit: {len(files)} files (max {limits.files})")
    total = sum(f.stat().st_size for f in files)
    if total > limits.library_bytes:
        raise PatchRejected(f"library over the size limit: {total} bytes (max {limits.library_bytes})")


async def _gate(root: Path, touched: set[str], tasks: Sequence[Task]) -> None:
    """The gate (`skillworks.provision.gate`) for every skill the patch wrote, against the tasks the library
    will be used on: the first reason it gives rejects the patch (it starts with the deciding rule id)."""
    from skillworks.provision.gate import gate_skill, joint_rejections
    from skillworks.skills.package import load_skill

    for name in sorted(touched):
        if (root / name).is_dir():
            verdict = await gate_skill(root / name, tasks)
            if not verdict.passed:
                raise PatchRejected(f"{verdict.reasons[0]} (skill {name!r})")
    # the new version's skills side by side: an answer key split over two skills (one the patch wrote)
    skills = [load_skill(p) for p in library_skills(root)]
    for i, reason in sorted(joint_rejections(skills, tasks).items()):
        if skills[i].root.name in touched:
            raise PatchRejected(f"{reason} (skill {skills[i].root.name!r})")


async def apply_patch(
    prev: Path, patch: Patch | None, dest: Path, limits: Limits = Limits(), gate_tasks: Sequence[Task] = ()
) -> ApplyResult:
    """Write library version `dest` = `prev` + `patch` (or an unchanged copy when the patch is None or
    rejected). `dest` must not exist; `prev` is only read. Every skill the patch writes passes the gate
    against `gate_tasks` (the tasks the new version will be used on)."""
    if dest.exists():
        raise FileExistsError(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    work = tmp / "lib"
    reason: str | None = None
    try:
        shutil.copytree(prev, work, symlinks=True)
        if patch is not None:
            try:
                _validate(prev, patch, limits)
                _write(work, patch)
                _check_limits(work, limits)
                touched = {
                    PurePosixPath(p).parts[0] for p in [*(u.path for u in patch.upsert_files), *patch.delete_paths]
                }
                await _check_skills(work, touched)
                await _gate(work, touched, gate_tasks)
            except PatchRejected as exc:
                reason = str(exc)
                shutil.rmtree(work)
                shutil.copytree(prev, work, symlinks=True)
        os.rename(work, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ApplyResult(
        accepted=patch is not None and reason is None,
        reason=reason,
        library_hash=library_hash(dest),
        skills=len(library_skills(dest)),
    )
