"""Host-side file helpers of the local sandbox: seeding, safe copies, teardown, user database."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

AGENT_UID = 1000
# top-level names of environment/ that never reach the workspace
_NOT_SEEDED = ("skills", "Dockerfile", ".dockerignore")


def seed_ignore(root: Path) -> object:
    def ignore(directory: str, names: list[str]) -> list[str]:
        if Path(directory) != root:
            return []
        return [n for n in names if n in _NOT_SEEDED or n.startswith(("docker-compose", "Dockerfile"))]

    return ignore


def make_writable(func: object, path: str, _exc: object) -> None:
    """rmtree error hook: the agent may have left read-only directories behind."""
    parent = os.path.dirname(path)
    with contextlib.suppress(OSError):
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        if not os.path.islink(path):
            os.chmod(path, os.lstat(path).st_mode | stat.S_IWUSR | stat.S_IXUSR)
    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, onerror=make_writable)
        else:
            os.unlink(path)


def user_db(host_file: Path, entry: str, uid_field: int) -> str:
    """/etc/passwd or /etc/group with the agent's entry (uid/gid 1000) replacing any host one."""
    lines = host_file.read_text(errors="replace").splitlines() if host_file.is_file() else []
    kept = [
        line
        for line in lines
        if line.split(":")[0] != "agent"
        and not (len(line.split(":")) > uid_field and line.split(":")[uid_field] == str(AGENT_UID))
    ]
    return "\n".join([*kept, entry]) + "\n"


def unlink_colliding_symlinks(src: Path, target: Path) -> None:
    """Before copying `src` over an existing `target`, drop symlinks (the agent may have planted
    them) where `src` has entries, so the copy never writes through a link to a host path."""
    if not target.is_dir():
        return
    for directory, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(directory, src)
        for name in [*dirnames, *filenames]:
            candidate = target / rel / name
            if candidate.is_symlink():
                candidate.unlink()


_ROOT_ONLY: dict[Path, list[tuple[Path, bool]]] = {}


def root_only_entries(top: Path) -> list[tuple[Path, bool]]:
    """(path, is_dir) of every entry under `top` that is not world-readable (a file without o+r, a
    directory without o+rx): /etc/shadow, /etc/gshadow, /etc/ssl/private, database configs... The
    local sandbox masks them, since its user may map to the host's root. Scanned once per process."""
    if top not in _ROOT_ONLY:
        found: list[tuple[Path, bool]] = []
        for directory, dirnames, filenames in os.walk(top):
            for name in [*dirnames, *filenames]:
                path = Path(directory) / name
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    continue
                is_dir = stat.S_ISDIR(st.st_mode)
                need = 0o005 if is_dir else 0o004
                if st.st_mode & need != need:
                    found.append((path, is_dir))
            dirnames[:] = [d for d in dirnames if (Path(directory) / d, True) not in found]
        _ROOT_ONLY[top] = found
    return _ROOT_ONLY[top]
