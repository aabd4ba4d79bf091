"""The one way files leave a sandbox: a tar stream of the sandbox's tree, written to a host directory
by ``copy_from_tar`` without ever following a link.

Every download (verifier logs, agent logs, harness native logs, the workspace, generated skills) and the
copy of the agent's outputs into the verifier's fresh sandbox go through here. The rules:

- only regular files and directories are written; a symbolic link is dropped with a record (``links=
  "drop"``, every download to the host: a link in a run dir would point at the host's files) or re-created
  as a link (``links="keep"``, the outputs copy: it is then resolved inside the verifier's sandbox, never
  on the host); hard links, FIFOs, devices and sockets are skipped with a record;
- a source path that is itself a link is not followed (recorded), and nothing is ever written through a
  link: each parent directory is opened with ``O_NOFOLLOW`` from the destination's root;
- sizes are capped (one file, the whole copy, the number of entries); a sparse file counts at its
  apparent size, so a 3 GB sparse file is skipped (recorded), never inflated on the host; a stream that
  goes on past the budget is stopped (recorded);
- names with ``..`` or absolute names are refused.

The tar stream comes from the backend: ``<runtime> cp <container>:<path> -`` for containers, and
``write_host_tar`` (an ``lstat`` walk that opens files with ``O_NOFOLLOW``) for the local sandbox's host
directories."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Literal, cast

LinkPolicy = Literal["keep", "drop"]
MAX_RECORDS = 200  # skipped entries listed one by one; beyond that only counted
_CHUNK = 1 << 20


@dataclass(frozen=True)
class CopyLimits:
    """What one copy may write: per file, in total, and how many entries."""

    max_file_bytes: int = 512 << 20
    max_total_bytes: int = 2 << 30
    max_entries: int = 200_000
    stream_slack: int = 256 << 20  # tar headers and skipped members' data, beyond max_total_bytes

    @property
    def stream_budget(self) -> int:
        """How much of a tar stream is read at most (skipped members' data counts too)."""
        return self.max_total_bytes + self.stream_slack


DEFAULT_LIMITS = CopyLimits()


@dataclass
class CopyRecord:
    """What a copy did: files and bytes written, and every entry it did not copy (path: reason)."""

    files: int = 0
    bytes: int = 0
    entries: int = 0
    skipped: list[str] = field(default_factory=list)
    more_skipped: int = 0

    def skip(self, path: str, reason: str) -> None:
        if len(self.skipped) < MAX_RECORDS:
            self.skipped.append(f"{path}: {reason}")
        else:
            self.more_skipped += 1

    def merge(self, other: CopyRecord) -> None:
        self.files += other.files
        self.bytes += other.bytes
        self.entries += other.entries
        for line in other.skipped:
            path, _, reason = line.partition(": ")
            self.skip(path, reason)
        self.more_skipped += other.more_skipped

    def lines(self) -> list[str]:
        more = [f"... and {self.more_skipped} more"] if self.more_skipped else []
        return [*self.skipped, *more]


class _Budget:
    """A reader that stops a stream once `budget` bytes were read (raises _OverBudget)."""

    def __init__(self, raw: IO[bytes], budget: int) -> None:
        self.raw, self.budget, self.read_bytes = raw, budget, 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.read_bytes += len(data)
        if self.read_bytes > self.budget:
            raise _OverBudget
        return data


class _OverBudget(Exception):
    pass


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return f"symbolic link to {member.linkname!r}"
    if member.islnk():
        return "hard link"
    if member.isfifo():
        return "FIFO"
    if member.ischr() or member.isblk():
        return "device"
    return f"unsupported entry type {member.type!r}"


def _safe_parts(name: str) -> tuple[str, ...] | None:
    parts = tuple(p for p in PurePosixPath(name.lstrip("/")).parts if p not in ("", "."))
    if any(p == ".." for p in parts):
        return None
    return parts


def _open_dir(root_fd: int, parts: tuple[str, ...], create: bool) -> int:
    """An fd of directory root/parts, each component opened without following links (created when
    missing and `create`). Raises OSError (ELOOP, ENOTDIR) when a component is a link or a file."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _remove_entry(dir_fd: int, name: str) -> None:
    """Remove what is at `name` (a file or link; never followed) so a new entry can take its place."""
    with contextlib.suppress(FileNotFoundError):
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a directory is in the way", name)
        os.unlink(name, dir_fd=dir_fd)


def copy_from_tar(
    stream: IO[bytes],
    dst: Path,
    *,
    root_name: str,
    links: LinkPolicy = "drop",
    limits: CopyLimits = DEFAULT_LIMITS,
    shown_as: str | None = None,
) -> CopyRecord:
    """Write the tree of a tar stream whose top entry is `root_name` (a file or a directory) to `dst`
    (which must not exist), by the rules of this module. Records name entries as `shown_as`/<rel>
    (default `root_name`). Returns the record; raises FileNotFoundError when the stream holds nothing."""
    record = CopyRecord()
    shown = (shown_as or root_name).rstrip("/") or "/"
    budget = cast(IO[bytes], _Budget(stream, limits.stream_budget))
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    parent_fd = os.open(dst.parent, os.O_RDONLY | os.O_DIRECTORY)
    root_fd: int | None = None
    seen_root = False
    try:
        with tarfile.open(fileobj=budget, mode="r|") as tar:
            for member in tar:
                record.entries += 1
                parts = _safe_parts(member.name)
                if parts is None or not parts:
                    record.skip(f"{shown}/{member.name}", "unsafe name")
                    continue
                if parts[0] != root_name:
                    # the runtime followed a link at the source path itself: its target is not copied
                    record.skip(shown, "is a link (not followed)")
                    break
                rel = parts[1:]
                where = "/".join((shown, *rel)) if rel else shown
                if record.entries > limits.max_entries:
                    record.skip(where, f"over the limit of {limits.max_entries} entries; the copy stopped")
                    break
                if not rel:  # the source itself
                    seen_root = True
                    if member.isdir():
                        os.mkdir(dst.name, 0o755, dir_fd=parent_fd)
                        root_fd = os.open(dst.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
                        continue
                    if member.isreg():
                        _write_member(tar, member, parent_fd, dst.name, where, record, limits)
                        break
                    if member.issym() and links == "keep":
                        os.symlink(member.linkname, dst.name, dir_fd=parent_fd)
                        break
                    record.skip(where, f"{_kind(member)}: not copied")
                    break
                if root_fd is None:
                    record.skip(where, "outside the copied directory")
                    continue
                try:
                    dir_fd = _open_dir(root_fd, rel[:-1], create=True)
                except OSError:
                    record.skip(where, "its parent is a link or a file: not written through")
                    continue
                try:
                    name = rel[-1]
                    if member.isdir():
                        try:
                            os.mkdir(name, 0o755, dir_fd=dir_fd)
                        except FileExistsError:
                            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                            if not stat.S_ISDIR(st.st_mode):
                                record.skip(where, "a link or file of the same name came first")
                    elif member.isreg():
                        _write_member(tar, member, dir_fd, name, where, record, limits)
                    elif member.issym() and links == "keep":
                        _remove_entry(dir_fd, name)
                        os.symlink(member.linkname, name, dir_fd=dir_fd)
                    else:
                        record.skip(where, f"{_kind(member)}: not copied")
                except OSError as exc:
                    record.skip(where, f"not written ({exc.strerror or exc})")
                finally:
                    os.close(dir_fd)
    except _OverBudget:
        record.skip(shown, f"the copy stopped after {limits.stream_budget} bytes of stream (over the size cap)")
    except tarfile.ReadError as exc:
        if record.entries == 0:
            raise FileNotFoundError(f"{shown}: nothing to copy ({exc})") from None
        record.skip(shown, f"the stream ended early ({exc})")
    finally:
        if root_fd is not None:
            os.close(root_fd)
        os.close(parent_fd)
    if not seen_root and record.entries == 0:
        raise FileNotFoundError(f"{shown}: nothing to copy")
    return record


def _write_member(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    dir_fd: int,
    name: str,
    where: str,
    record: CopyRecord,
    limits: CopyLimits,
) -> None:
    if member.size > limits.max_file_bytes:
        record.skip(where, f"{member.size} bytes: over the cap of {limits.max_file_bytes} bytes per file")
        return
    if record.bytes + member.size > limits.max_total_bytes:
        record.skip(where, f"{member.size} bytes: the copy's cap of {limits.max_total_bytes} bytes is reached")
        return
    source = tar.extractfile(member)
    if source is None:
        record.skip(where, "unreadable entry")
        return
    _remove_entry(dir_fd, name)
    mode = (member.mode & 0o777) | 0o600
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(_CHUNK):
            out.write(chunk)
        os.utime(out.fileno(), (member.mtime, member.mtime))
    record.files += 1
    record.bytes += member.size


# --- the local sandbox's side: a tar stream of a host directory, links never followed ----------------


def write_host_tar(path: Path, out: IO[bytes], *, arcname: str, limits: CopyLimits = DEFAULT_LIMITS) -> CopyRecord:
    """A tar stream (to `out`) of host `path` under `arcname`, walked with lstat: links go in as links,
    FIFOs and devices as their headers (never opened), files opened with O_NOFOLLOW; sockets and files
    over the per-file cap are left out (recorded). Raises FileNotFoundError when `path` does not exist."""
    record = CopyRecord()
    os.lstat(path)  # FileNotFoundError before any output
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for host, name in _walk(path, arcname):
            try:
                st = os.lstat(host)
            except FileNotFoundError:
                continue
            if stat.S_ISSOCK(st.st_mode):
                record.skip(name, "socket: not copied")
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > limits.max_file_bytes:
                record.skip(name, f"{st.st_size} bytes: over the cap of {limits.max_file_bytes} bytes per file")
                continue
            info = tar.gettarinfo(str(host), arcname=name)
            if info is None:
                record.skip(name, "unsupported file type: not copied")
                continue
            if info.isreg():
                try:
                    fd = os.open(host, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError as exc:
                    record.skip(name, f"not readable ({exc.strerror})")
                    continue
                with os.fdopen(fd, "rb") as fh:
                    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                        record.skip(name, "changed type while copied: not copied")
                        continue
                    tar.addfile(info, fh)
            else:
                tar.addfile(info)
    return record


def _walk(path: Path, arcname: str) -> Iterator[tuple[Path, str]]:
    yield path, arcname
    if path.is_symlink() or not path.is_dir():
        return
    stack = [(path, arcname)]
    while stack:
        host, name = stack.pop()
        try:
            entries = sorted(os.scandir(host), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            child, child_name = Path(entry.path), f"{name}/{entry.name}"
            yield child, child_name
            if entry.is_dir(follow_symlinks=False):
                stack.append((child, child_name))


def no_link_below(root: Path, path: Path) -> bool:
    """Whether every component of `path` below `root` (the last one excepted) is a real directory, not
    a link: a host path of the sandbox reached without following anything the agent could have made."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return False
    probe = root
    for part in rel.parts[:-1]:
        probe = probe / part
        if probe.is_symlink() or not probe.is_dir():
            return False
    return True


def note_skipped(record: CopyRecord, dst: Path) -> None:
    """Keep the record of what a download did not copy next to it (`<dst>.skipped.txt`), and log it."""
    lines = record.lines()
    if not lines:
        return
    import logging

    logging.getLogger(__name__).warning("not copied from the sandbox to %s: %s", dst, "; ".join(lines[:5]))
    with contextlib.suppress(OSError):
        Path(f"{dst}.skipped.txt").write_text("".join(f"{line}\n" for line in lines))


def place(staging: Path, dst: Path) -> None:
    """Move a finished copy into place: a new `dst`, merged into an existing directory, or replacing a file."""
    if not dst.exists() and not dst.is_symlink():
        os.replace(staging, dst)
    elif dst.is_dir() and staging.is_dir() and not staging.is_symlink():
        shutil.copytree(staging, dst, symlinks=True, dirs_exist_ok=True)
    else:
        if dst.is_dir() and not dst.is_symlink():
            shutil.rmtree(dst)
        else:
            dst.unlink()
        os.replace(staging, dst)
