"""Resource limits of the local sandbox: a cgroup per trial (v2, else v1) where this process may
create one, else rlimits. What is not enforced is said, never assumed.

- cgroup v2: a child of this process's own cgroup with ``memory.max`` (+ ``memory.swap.max`` 0),
  ``pids.max`` and ``cpu.max``; needs the controllers delegated to that child.
- cgroup v1: a child of this process's cgroup in the memory, pids and cpu hierarchies
  (``memory.limit_in_bytes`` + ``memory.memsw.limit_in_bytes``, ``pids.max``, CFS quota).
- rlimits (fallback): ``RLIMIT_DATA`` for memory and ``RLIMIT_NPROC`` for processes, set on each
  bwrap; no cpu limit. RLIMIT_NPROC counts every process of the host user and the kernel ignores
  it for root, so as root it is reported as not enforced.

Every process of every exec joins the trial's cgroup before bwrap starts (``preexec``), so a fork
bomb inside a trial stops at the trial's ``pids`` limit; ``close`` kills what is left and removes
the cgroup. A run killed with SIGKILL cannot close its trials' cgroups: they are named
``skillworks-<pid>-<random>`` so that `skillworks clean` finds those whose process is gone
(``leftover_cgroups``, ``remove_cgroups``)."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PIDS_LIMIT = 1024
_CPU_PERIOD_US = 100_000
_CONTROLLERS = ("memory", "pids", "cpu")
_NAME_RE = re.compile(r"^skillworks-(\d+)-[0-9a-f]{10}$")


@dataclass(frozen=True)
class LimitRequest:
    memory_mb: int | None = None
    cpus: float | None = None
    pids: int | None = DEFAULT_PIDS_LIMIT

    def wanted(self) -> tuple[str, ...]:
        named = {"memory": self.memory_mb, "cpus": self.cpus, "pids": self.pids}
        return tuple(name for name, value in named.items() if value)


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def _cgroup_mounts() -> tuple[Path | None, dict[str, Path]]:
    """This process's own cgroup directory: (v2 dir, {v1 controller: dir}); only those reachable."""
    own_v2: str | None = None
    own_v1: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            hid, names, path = line.split(":", 2)
            if hid == "0" and names == "":
                own_v2 = path
            for name in names.split(","):
                own_v1[name] = path
    v2: Path | None = None
    v1: dict[str, Path] = {}
    for root, point, fstype, options in _cgroup_mountinfo():

        def inside(path: str | None, root: str = root, point: str = point) -> Path | None:
            if path is None or not (root == "/" or path == root or path.startswith(root + "/")):
                return None
            rel = path[len(root) :] if root != "/" else path
            return Path(point + rel) if rel not in ("", "/") else Path(point)

        if fstype == "cgroup2" and v2 is None:
            v2 = inside(own_v2)
        elif fstype == "cgroup":
            for name in _CONTROLLERS:
                if name in options and name not in v1:
                    found = inside(own_v1.get(name))
                    if found is not None:
                        v1[name] = found
    return v2, v1


def _cgroup_mountinfo() -> list[tuple[str, str, str, list[str]]]:
    """(root, mount point, fs type, super options) of every cgroup/cgroup2 mount of this process."""
    mounts: list[tuple[str, str, str, list[str]]] = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                mounts.append((fields[3], fields[4], tail[0], tail[2].split(",")))
    return mounts


@dataclass
class TrialLimits:
    """The limits of one trial's sandbox. See the module docstring."""

    request: LimitRequest
    mechanism: str = "none"
    enforced: set[str] = field(default_factory=set)
    _dirs: list[Path] = field(default_factory=list)
    _procs: list[str] = field(default_factory=list)
    _rlimits: list[tuple[int, int]] = field(default_factory=list)

    @property
    def not_enforced(self) -> list[str]:
        return [name for name in self.request.wanted() if name not in self.enforced]

    def describe(self) -> str:
        wanted = self.request.wanted()
        if not self.not_enforced:
            return f"local sandbox limits ({', '.join(wanted)}) enforced with {self.mechanism}"
        return (
            f"local sandbox limits NOT enforced on this host: {', '.join(self.not_enforced)} "
            f"(mechanism: {self.mechanism}; run as root with a writable cgroup file system, or use --env container)"
        )

    @classmethod
    def create(cls, request: LimitRequest) -> TrialLimits:
        limits = cls(request)
        v2, v1 = _cgroup_mounts()
        if v2 is not None and limits._try_v2(v2):
            return limits
        if v1 and limits._try_v1(v1):
            return limits
        limits._use_rlimits()
        return limits

    def _name(self) -> str:
        return f"skillworks-{os.getpid()}-{uuid.uuid4().hex[:10]}"

    def _try_v2(self, parent: Path) -> bool:
        child = parent / self._name()
        try:
            child.mkdir()
        except OSError:
            return False
        controllers = set((child / "cgroup.controllers").read_text().split())
        if not {"memory", "pids"} <= controllers:
            _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
            controllers = set((child / "cgroup.controllers").read_text().split())
        r = self.request
        if "memory" in controllers and r.memory_mb and _write(child / "memory.max", str(r.memory_mb << 20)):
            _write(child / "memory.swap.max", "0")
            self.enforced.add("memory")
        if "pids" in controllers and r.pids and _write(child / "pids.max", str(r.pids)):
            self.enforced.add("pids")
        quota = f"{int((r.cpus or 0) * _CPU_PERIOD_US)} {_CPU_PERIOD_US}"
        if "cpu" in controllers and r.cpus and _write(child / "cpu.max", quota):
            self.enforced.add("cpus")
        if not self.enforced and r.wanted():
            child.rmdir()
            return False
        self.mechanism = "cgroup v2"
        self._set_dirs([child])
        return True

    def _try_v1(self, dirs: dict[str, Path]) -> bool:
        r, name = self.request, self._name()
        plan = {"memory": r.memory_mb, "pids": r.pids, "cpu": r.cpus}
        for controller, value in plan.items():
            parent = dirs.get(controller)
            if not value or parent is None:
                continue
            child = parent / name
            try:
                child.mkdir()
            except OSError:
                continue
            self._set_dirs([*self._dirs, child])
            if controller == "memory" and r.memory_mb:
                limit = str(r.memory_mb * 1024 * 1024)
                if _write(child / "memory.limit_in_bytes", limit):
                    _write(child / "memory.memsw.limit_in_bytes", limit)  # absent without swap accounting
                    self.enforced.add("memory")
            elif controller == "pids" and r.pids and _write(child / "pids.max", str(r.pids)):
                self.enforced.add("pids")
            elif controller == "cpu" and r.cpus:
                period_ok = _write(child / "cpu.cfs_period_us", str(_CPU_PERIOD_US))
                if period_ok and _write(child / "cpu.cfs_quota_us", str(int(r.cpus * _CPU_PERIOD_US))):
                    self.enforced.add("cpus")
        if not self._dirs:
            return False
        self.mechanism = "cgroup v1"
        missing = self.not_enforced
        if "memory" in missing or "pids" in missing:
            self._use_rlimits()  # complete what the cgroups could not
            self.mechanism = "cgroup v1 + rlimits"
        return True

    def _use_rlimits(self) -> None:
        r = self.request
        if "memory" not in self.enforced and r.memory_mb:
            self._rlimits.append((resource.RLIMIT_DATA, r.memory_mb * 1024 * 1024))
            self.enforced.add("memory")
        if "pids" not in self.enforced and r.pids:
            self._rlimits.append((resource.RLIMIT_NPROC, r.pids))
            if os.geteuid() != 0:  # the kernel does not apply RLIMIT_NPROC to root
                self.enforced.add("pids")
        if self.mechanism == "none":
            self.mechanism = "rlimits"

    def preexec(self) -> None:
        """Runs in the child between fork and exec of bwrap: join the cgroups, set the rlimits. Only
        plain system calls (no Python-level lock another thread could hold at fork time)."""
        pid = b"%d" % os.getpid()
        for procs in self._procs:
            try:
                fd = os.open(procs, os.O_WRONLY)
            except OSError:
                continue
            try:
                os.write(fd, pid)
            except OSError:
                pass
            finally:
                os.close(fd)
        for which, value in self._rlimits:
            try:
                _soft, hard = resource.getrlimit(which)
                cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(which, (cap, cap))
            except (ValueError, OSError):
                pass

    def _set_dirs(self, dirs: list[Path]) -> None:
        self._dirs = dirs
        self._procs = [str(d / "cgroup.procs") for d in dirs]

    def close(self) -> None:
        """Kill whatever still runs in the trial's cgroups and remove them."""
        for directory in self._dirs:
            _kill_and_remove(directory)
        self._set_dirs([])


def _kill_and_remove(directory: Path) -> bool:
    """Kill every process of a trial cgroup, then remove it (retrying while the kernel reaps them)."""
    if not _write(directory / "cgroup.kill", "1"):
        for _ in range(3):
            with contextlib.suppress(OSError):
                for pid in (directory / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
    for _ in range(50):
        try:
            directory.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.05)
    return False


def _cgroup_roots() -> list[Path]:
    """Mount points of the cgroup2 hierarchy and of the v1 hierarchies trial cgroups are made in."""
    return sorted(
        {
            Path(point)
            for _root, point, fstype, options in _cgroup_mountinfo()
            if fstype == "cgroup2" or any(c in options for c in _CONTROLLERS)
        }
    )


def leftover_cgroups() -> list[Path]:
    """Trial cgroups whose skillworks process is gone (a run killed with SIGKILL skips `close`)."""
    found: list[Path] = []
    for root in _cgroup_roots():
        for current, dirnames, _files in os.walk(root):
            for name in list(dirnames):
                match = _NAME_RE.match(name)
                if match is None:
                    continue
                dirnames.remove(name)  # a trial's cgroup holds only the trial
                if not Path(f"/proc/{match.group(1)}").exists():
                    found.append(Path(current) / name)
    return found


def remove_cgroups(directories: list[Path]) -> list[str]:
    """Kill what still runs in these trial cgroups and remove them. Returns errors (one line each)."""
    return [f"could not remove cgroup {d}" for d in directories if not _kill_and_remove(d)]


_STATUS: dict[LimitRequest, str] = {}


def limits_status(request: LimitRequest) -> tuple[bool, str]:
    """Whether `request` would be fully enforced for a local sandbox here, and the sentence to say
    so (created and removed once per process, then cached)."""
    if request not in _STATUS:
        probe = TrialLimits.create(request)
        try:
            _STATUS[request] = probe.describe()
        finally:
            probe.close()
    text = _STATUS[request]
    return "NOT enforced" not in text, text
