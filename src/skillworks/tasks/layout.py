"""Pieces shared by the task loaders: the directory layout (verifier/oracle dirs and their mounts),
the workspace path, bundled skills, size strings and one-line messages from pydantic errors."""

from __future__ import annotations

import os
import re
import stat
import types
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ValidationError

from skillworks.errors import SkillError, TaskError
from skillworks.skills.package import SkillPackage, load_skill
from skillworks.tasks.model import DEFAULT_WORKDIR

VERIFIER_ENTRYPOINT = "test.sh"
ORACLE_ENTRYPOINT = "solve.sh"


@dataclass(frozen=True)
class DirChoice:
    """One candidate directory name and where its files are mounted inside the sandbox."""

    name: str
    mount: str


# Native name first: when it exists it is authoritative (fail-closed, no fall-back to the alias).
TASK_MD_VERIFIER_DIRS = (DirChoice("verifier", "/verifier"), DirChoice("tests", "/tests"))
TASK_MD_ORACLE_DIRS = (DirChoice("oracle", "/oracle"), DirChoice("solution", "/solution"))
HARBOR_VERIFIER_DIRS = (DirChoice("tests", "/tests"),)
HARBOR_ORACLE_DIRS = (DirChoice("solution", "/solution"),)

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT])I?B?\s*$", re.IGNORECASE)
_SIZE_FACTOR_MB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024.0}


def parse_size_mb(value: str, path: Path, key: str) -> int:
    """'4G' -> 4096, '512M' -> 512 (Harbor's deprecated `memory` / `storage` strings)."""
    match = _SIZE_RE.match(value)
    if not match:
        raise TaskError(f"{key} = {value!r} is not a size like '4G' or '512M'", path)
    return int(float(match.group(1)) * _SIZE_FACTOR_MB[match.group(2).upper()])


def select_dir(root: Path, choices: tuple[DirChoice, ...]) -> tuple[Path, DirChoice] | None:
    """The first candidate directory that exists (native name wins), or None. A candidate that is a
    symlink (BenchFlow's examples link shared verifiers and oracles) is followed when it stays inside
    the task directory, and the real directory is returned, so uploads copy files, not a dangling link."""
    for choice in choices:
        candidate = root / choice.name
        if candidate.is_dir():
            return inside_task(root, candidate), choice
    return None


# the dataset root given on the command line (`run DIR`, `tasks check DIR`): links from a task to a
# sibling task inside it are allowed (BenchFlow's examples share verifiers and oracles that way)
_DATASET_ROOT: ContextVar[Path | None] = ContextVar("skillworks_dataset_root", default=None)


@contextmanager
def dataset_root(path: Path | None) -> Iterator[None]:
    """While active, a task's links may also resolve inside `path` (a dir of tasks), not only its own dir."""
    token = _DATASET_ROOT.set(path.resolve() if path is not None and path.is_dir() else None)
    try:
        yield
    finally:
        _DATASET_ROOT.reset(token)


# task.md, task.toml and instruction.md hold an instruction and its settings, never data: past this
# they are refused before a byte is read (a 2 GB sparse instruction is never read nor copied)
TASK_FILE_MAX_BYTES = 1024 * 1024


def read_task_text(path: Path, limit: int = TASK_FILE_MAX_BYTES) -> str:
    """The UTF-8 text of a task file; a TaskError naming it when it is not a regular file, is larger
    than `limit` (checked with stat first) or is not UTF-8."""
    try:
        info = path.stat()
    except OSError as exc:
        raise TaskError(f"{path.name} cannot be read: {os.strerror(exc.errno or 0)}", path) from None
    if not stat.S_ISREG(info.st_mode):
        raise TaskError(f"{path.name} is not a regular file", path)
    if info.st_size > limit:
        raise TaskError(f"{path.name} is {info.st_size} bytes, over the {limit}-byte limit for task files", path)
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TaskError(f"{path.name} grew past the {limit}-byte limit for task files", path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TaskError(f"{path.name} is not valid UTF-8", path) from None


def dataset_root_of(task_dir: Path, given: Iterable[Path | str]) -> Path | None:
    """The path given on the command line that holds `task_dir` (the nearest), or None."""
    real = task_dir.resolve()
    holders = [Path(g).resolve() for g in given]
    holders = [h for h in holders if h == real or h in real.parents]
    return max(holders, key=lambda h: len(h.parts)) if holders else None


def _allowed(real: Path, root: Path) -> bool:
    bounds = [root.resolve()]
    dataset = _DATASET_ROOT.get()
    if dataset is not None and (bounds[0] == dataset or dataset in bounds[0].parents):
        bounds.append(dataset)
    return any(real == b or b in real.parents for b in bounds)


def _bound(root: Path) -> str:
    dataset = _DATASET_ROOT.get()
    return "the task directory" if dataset is None or dataset == root.resolve() else "the dataset root"


def inside_task(root: Path, path: Path) -> Path:
    """`path` with its symlinks resolved; a TaskError when it resolves outside the task directory
    `root` and outside the active ``dataset_root`` (the task would depend on files that are not part
    of the dataset, and uploads would carry them)."""
    real = path.resolve()
    if not _allowed(real, root):
        raise TaskError(
            f"{path.relative_to(root).as_posix()} is a symlink to {real}, outside {_bound(root)}; "
            "copy it into the task instead",
            path,
        )
    return real


def check_links_inside(root: Path, directory: Path) -> None:
    """Every symlink under `directory` must resolve inside the task dir `root` (it is followed on upload)."""
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            if path.is_symlink():
                try:
                    real = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    raise TaskError(f"symlink {name} -> {os.readlink(path)} is broken or loops", path) from None
                if not _allowed(real, root):
                    raise TaskError(
                        f"symlink {name} points outside {_bound(root)} ({real}); copy the file into the task",
                        path,
                    )


def require_entrypoint(directory: Path, entrypoint: str, role: str) -> Path:
    """The entrypoint script inside a selected verifier/oracle dir; an error when it is missing."""
    script = directory / entrypoint
    if not script.is_file():
        if not any(directory.iterdir()):
            raise TaskError(
                f"{role} directory {directory.name}/ is empty; it must contain {entrypoint} "
                "(an existing native directory is authoritative: there is no fall-back to its alias)",
                directory,
            )
        raise TaskError(f"{role} directory {directory.name}/ has no {entrypoint}", directory)
    return script


def _logical_lines(dockerfile: Path) -> list[str]:
    try:
        text = dockerfile.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    return logical


def dockerfile_workdir(dockerfile: Path) -> str | None:
    """The last WORKDIR of the final build stage, resolved against earlier ones; None when absent
    or when it uses a build variable we cannot resolve."""
    workdir: str | None = None
    for line in _logical_lines(dockerfile):
        parts = line.split(None, 1)
        if not parts:
            continue
        instruction = parts[0].upper()
        if instruction == "FROM":
            workdir = None
        elif instruction == "WORKDIR" and len(parts) == 2:
            value = parts[1].strip().strip("\"'")
            if workdir is not None and not value.startswith("/"):
                value = str(PurePosixPath(workdir) / value)
            workdir = value
    if workdir is None or "$" in workdir or not workdir.startswith("/"):
        return None
    return workdir


def dockerfile_skill_copies(dockerfile: Path) -> list[str]:
    """Destinations of COPY/ADD instructions whose source is the bundled `skills` dir. SkillsBench
    images bake skills in this way (e.g. `COPY skills /root/.claude/skills`), so the agent would see
    them in every condition unless the runner accounts for it."""
    destinations: list[str] = []
    for line in _logical_lines(dockerfile):
        parts = line.split()
        if len(parts) < 3 or parts[0].upper() not in ("COPY", "ADD"):
            continue
        args = [a for a in parts[1:] if not a.startswith("--")]
        if len(args) < 2:
            continue
        sources, dest = args[:-1], args[-1]
        if any(src.strip("\"'").rstrip("/").removeprefix("./") in ("skills", "skills/*") for src in sources):
            destinations.append(dest.strip("\"'"))
    return destinations


# where the harness puts its own files (logs, verifier, oracle) or the kernel's: never a workspace
RESERVED_DIRS = ("/logs", "/tests", "/verifier", "/oracle", "/solution", "/proc", "/sys", "/dev")


def workdir_problem(workdir: str) -> str | None:
    """Why `workdir` cannot be a task's workspace (not absolute, not normalised, a reserved dir), or None."""
    if not workdir.startswith("/"):
        return "must be an absolute path"
    if any(ord(c) < 0x20 or c == "\x7f" for c in workdir):
        return "must not hold control characters"
    parts = workdir.split("/")[1:]
    normal = "/" + "/".join(p for p in parts if p not in ("", "."))
    if ".." in parts or (normal != workdir.rstrip("/") and workdir != "/"):
        return "must be normalised (no '.', '..' or '//' components)"
    if workdir == "/":
        return "must not be / (the verifier's and the harness's dirs live there)"
    for reserved in RESERVED_DIRS:
        if normal == reserved or normal.startswith(reserved + "/"):
            return f"must not be in {reserved} (reserved for the harness)"
    return None


def resolve_workdir(declared: str | None, dockerfile: Path | None) -> str:
    """Declared workdir, else the Dockerfile's last WORKDIR, else /app."""
    if declared:
        return declared
    if dockerfile is not None:
        found = dockerfile_workdir(dockerfile)
        if found:
            return found
    return DEFAULT_WORKDIR


def load_bundled_skills(env_dir: Path | None) -> tuple[SkillPackage, ...]:
    """Skills shipped with the task under environment/skills/<name>/ (each needs a valid SKILL.md)."""
    if env_dir is None:
        return ()
    skills_dir = env_dir / "skills"
    if not skills_dir.is_dir():
        return ()
    skills: list[SkillPackage] = []
    for child in sorted(skills_dir.iterdir()):
        if not child.is_dir() or child.name.startswith("."):
            continue
        try:
            skills.append(load_skill(child))
        except SkillError as exc:
            raise TaskError(f"bundled skill {child.name!r} is invalid: {exc.message}", exc.path) from None
    return tuple(skills)


def nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = nested_model(arg)
            if found is not None:
                return found
    return None


def _allowed_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None or not isinstance(part, str):
            return []
        field = next(
            (f for n, f in current.model_fields.items() if n == part or f.alias == part),
            None,
        )
        current = nested_model(field.annotation) if field is not None else None
    if current is None:
        return []
    return sorted(f.alias or n for n, f in current.model_fields.items())


def validation_message(exc: ValidationError, model: type[BaseModel], rename: dict[str, str] | None = None) -> str:
    """One line from the first pydantic error: the dotted key and the problem (allowed keys on typos).
    `rename` maps top-level field names to the spelling the file uses (sandbox -> environment)."""
    error = exc.errors()[0]
    loc = tuple(error["loc"])
    shown = [str(p) for p in loc]
    if shown and rename:
        shown[0] = rename.get(shown[0], shown[0])
    where = ".".join(shown) or "config"
    if error["type"] == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        return f"unknown key {where!r}; allowed keys: {', '.join(allowed)}"
    msg = str(error["msg"]).removeprefix("Value error, ")
    more = len(exc.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"{where}: {msg}{suffix}"
