"""No orphaned containers: labels, a registry of live containers, signal handling, `clean`.

Every container carries labels naming its run and its driver process::

    skillworks.run=<run id>  skillworks.pid=<driver pid>  skillworks.pid_start=<its start time>
    skillworks.host=<hostname>  skillworks.task=<task id>

- A trial's container is removed by `ContainerSandbox.stop()`.
- `container_session(run_id)` (an async context manager the runner wraps a run in) removes the
  run's containers when it exits, and on SIGINT / SIGTERM removes them at once, then unwinds the
  run (KeyboardInterrupt for SIGINT, SystemExit(143) for SIGTERM).
- An `atexit` hook removes whatever this process still has registered, and outside a session
  SIGTERM / SIGHUP (when their handlers are the default) remove them before the process dies.
- A driver killed with SIGKILL cannot clean up: `skillworks clean` removes containers whose driver
  process is gone (same host, pid dead or reused), and everything with `--all`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import json
import os
import shutil
import signal
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from skillworks.sandbox.container.runtime import ContainerRuntime, run_command, run_command_sync

LABEL_RUN = "skillworks.run"
LABEL_PID = "skillworks.pid"
LABEL_PID_START = "skillworks.pid_start"
LABEL_HOST = "skillworks.host"
LABEL_TASK = "skillworks.task"
LABEL_IMAGE = "skillworks.image"

_current_run: contextvars.ContextVar[str | None] = contextvars.ContextVar("skillworks_container_run", default=None)
_default_run_id: str | None = None


def process_start_time(pid: int) -> str | None:
    """The kernel's start time of `pid` (clock ticks since boot), None when it does not exist.
    With the pid it identifies a process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def current_run_id() -> str:
    """The run id of the enclosing `container_session`, else one id for this process."""
    global _default_run_id
    run_id = _current_run.get()
    if run_id:
        return run_id
    if _default_run_id is None:
        _default_run_id = f"adhoc-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    return _default_run_id


def container_labels(run_id: str, task_id: str) -> dict[str, str]:
    pid = os.getpid()
    return {
        LABEL_RUN: run_id,
        LABEL_PID: str(pid),
        LABEL_PID_START: process_start_time(pid) or "",
        LABEL_HOST: socket.gethostname(),
        LABEL_TASK: task_id,
    }


class ContainerRegistry:
    """The containers this process has started and not yet removed (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[str, ContainerRuntime] = {}
        self._runtimes: dict[tuple[object, ...], ContainerRuntime] = {}
        self._dirs: set[Path] = set()

    def add_dir(self, path: Path) -> None:
        """A host directory a sandbox made (its channel dir), removed with its containers."""
        with self._lock:
            self._dirs.add(path)

    def discard_dir(self, path: Path) -> None:
        with self._lock:
            self._dirs.discard(path)

    def add(self, runtime: ContainerRuntime, name: str) -> None:
        with self._lock:
            self._live[name] = runtime
            self._runtimes[(runtime.cli, runtime.global_flags)] = runtime
        install_fallback_handlers()

    def discard(self, name: str) -> None:
        with self._lock:
            self._live.pop(name, None)

    def live(self) -> dict[str, ContainerRuntime]:
        with self._lock:
            return dict(self._live)

    def runtimes(self) -> list[ContainerRuntime]:
        with self._lock:
            return list(self._runtimes.values())

    def remove_all_sync(self) -> None:
        """Blocking removal of every registered container (signal handlers, atexit)."""
        by_runtime: dict[ContainerRuntime, list[str]] = {}
        for name, runtime in self.live().items():
            by_runtime.setdefault(runtime, []).append(name)
        for runtime, names in by_runtime.items():
            run_command_sync(runtime.remove_argv(*names), timeout=120)
            for name in names:
                self.discard(name)
        with self._lock:
            dirs, self._dirs = set(self._dirs), set()
        for path in dirs:
            shutil.rmtree(path, ignore_errors=True)


REGISTRY = ContainerRegistry()
atexit.register(REGISTRY.remove_all_sync)
_fallback_installed = False


def _remove_then_die(signum: int, frame: FrameType | None) -> None:
    REGISTRY.remove_all_sync()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # terminate as the signal would have, without orphans


def install_fallback_handlers() -> None:
    """Outside a container_session, SIGTERM and SIGHUP would kill the process without running
    atexit hooks. Where their handlers are still the default (and only there: an application's
    own handlers are left alone), remove this process's containers first, then die of the signal."""
    global _fallback_installed
    if _fallback_installed or threading.current_thread() is not threading.main_thread():
        return
    _fallback_installed = True
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _remove_then_die)


def sweep_run_sync(run_id: str) -> None:
    """Remove every container labelled with `run_id`, with every runtime this process used."""
    for runtime in REGISTRY.runtimes():
        listed = run_command_sync(runtime.argv("ps", "-a", "-q", "--filter", f"label={LABEL_RUN}={run_id}"))
        ids = listed.stdout.split()
        if ids:
            run_command_sync(runtime.remove_argv(*ids), timeout=120)


async def sweep_run(run_id: str) -> None:
    for runtime in REGISTRY.runtimes():
        listed = await run_command(runtime.argv("ps", "-a", "-q", "--filter", f"label={LABEL_RUN}={run_id}"))
        ids = listed.stdout.split()
        if ids:
            await run_command(runtime.remove_argv(*ids), timeout=120)


@dataclass
class ContainerSession:
    run_id: str
    signal_received: int | None = None


@contextlib.contextmanager
def labelled_run(run_id: str) -> Iterator[None]:
    """Label the containers started inside with `run_id`, without the session's signal handling and
    sweep: for a process that runs some trials of a run whose session lives elsewhere (a Ray worker)."""
    token = _current_run.set(run_id)
    try:
        yield
    finally:
        _current_run.reset(token)


@contextlib.asynccontextmanager
async def container_session(run_id: str) -> AsyncIterator[ContainerSession]:
    """Scope a run: containers started inside carry `run_id`; on exit, SIGINT or SIGTERM every
    container of the run is removed. Must be entered from the task that runs the trials."""
    session = ContainerSession(run_id)
    token = _current_run.set(run_id)
    loop = asyncio.get_running_loop()
    owner = asyncio.current_task()
    installed: list[int] = []

    def on_signal(signum: int) -> None:
        if session.signal_received is None:
            session.signal_received = signum
            REGISTRY.remove_all_sync()
            sweep_run_sync(run_id)
            if owner is not None:
                owner.cancel()
        else:  # a second Ctrl-C: stop waiting for a graceful unwind
            REGISTRY.remove_all_sync()
            os._exit(128 + signum)

    previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.getsignal(sig)
            loop.add_signal_handler(sig, on_signal, int(sig))
            installed.append(int(sig))
    completed = False
    try:
        yield session
        completed = True
    except asyncio.CancelledError:
        if session.signal_received is None:
            raise
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
            handler = previous.get(signum)
            if handler is not None:
                signal.signal(signum, handler)
        _current_run.reset(token)
        # after a normal end every trial removed its own container (a failed removal stays in the
        # registry, for the atexit hook); the sweep by label is for runs that were cut short
        if not completed or session.signal_received is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(sweep_run(run_id))
    if session.signal_received == signal.SIGINT:
        raise KeyboardInterrupt
    if session.signal_received is not None:
        raise SystemExit(128 + session.signal_received)


# ---------------------------------------------------------------- skillworks clean


@dataclass
class CleanReport:
    removed_containers: list[str] = field(default_factory=list)
    kept_containers: list[str] = field(default_factory=list)  # driver still alive (or other host)
    removed_images: list[str] = field(default_factory=list)
    removed_dirs: list[str] = field(default_factory=list)  # temp dirs (scratch, gateway, channel) of dead drivers
    removed_builds: list[str] = field(default_factory=list)  # working containers of interrupted builds
    removed_cgroups: list[str] = field(default_factory=list)  # local-sandbox trial cgroups of dead drivers
    kept_images: list[str] = field(default_factory=list)  # still used by a container
    errors: list[str] = field(default_factory=list)


CHANNEL_DIR_PREFIX = "sw-ch-"


def channel_dir_prefix() -> str:
    """Prefix of this process's channel dirs in the temp dir: `sw-ch-<pid>-`."""
    return f"{CHANNEL_DIR_PREFIX}{os.getpid()}-"


def _clean_temp_dirs(report: CleanReport, dry_run: bool) -> None:
    """Temp dirs of dead drivers (trial scratch, gateway sockets, channel dirs, build contexts), e.g.
    after kill -9: every `sw-<kind>-<pid>-...` dir whose pid is gone."""
    from skillworks._tempdirs import dead_temp_dirs

    for path in dead_temp_dirs():
        report.removed_dirs.append(str(path))
        if not dry_run:
            shutil.rmtree(path, ignore_errors=True)


def _clean_builds(runtime: ContainerRuntime, report: CleanReport, all_runs: bool, dry_run: bool) -> None:
    """Working containers (and still running steps) of builds whose driver is gone."""
    from skillworks.sandbox.container.build_leftovers import leftover_builds, owner_alive, remove_builds

    doomed = [b for b in leftover_builds(runtime) if all_runs or not owner_alive(b.owner)]
    report.removed_builds = [b.name or b.container_id[:12] for b in doomed]
    if doomed and not dry_run:
        report.errors.extend(remove_builds(runtime, doomed))


def _driver_alive(labels: dict[str, str]) -> bool:
    """True when the container's driver process still runs, or when we cannot tell (other host)."""
    host = labels.get(LABEL_HOST)
    if host and host != socket.gethostname():
        return True
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return False
    started = process_start_time(pid)
    if started is None:
        return False
    expected = labels.get(LABEL_PID_START)
    return not expected or expected == started


def clean(
    runtime: ContainerRuntime | None,
    *,
    all_runs: bool = False,
    run_id: str | None = None,
    images: bool = False,
    dry_run: bool = False,
) -> CleanReport:
    """Remove containers of dead drivers (all of them with `all_runs`, or only one run), and with
    `images` the images skillworks built that no remaining container uses. Without a container
    runtime (`None`), only what local runs leave: temp dirs and trial cgroups."""
    report = CleanReport()
    if runtime is not None:
        _clean_containers(runtime, report, all_runs, run_id, dry_run)
    if run_id is None:  # builds, temp dirs and cgroups belong to a process, not to one run
        if runtime is not None:
            _clean_builds(runtime, report, all_runs, dry_run)
        _clean_temp_dirs(report, dry_run)
        _clean_cgroups(report, dry_run)
    if images and runtime is not None:
        _clean_images(runtime, report, dry_run)
    return report


def _clean_containers(
    runtime: ContainerRuntime, report: CleanReport, all_runs: bool, run_id: str | None, dry_run: bool
) -> None:
    selector = f"label={LABEL_RUN}={run_id}" if run_id else f"label={LABEL_RUN}"
    listed = run_command_sync(runtime.argv("ps", "-a", "-q", "--no-trunc", "--filter", selector))
    if not listed.ok:
        report.errors.append(listed.error_line())
        return
    ids = listed.stdout.split()
    doomed: list[str] = []
    if ids:
        inspected = run_command_sync(runtime.argv("inspect", "--format", "{{.Name}} {{json .Config.Labels}}", *ids))
        for line in inspected.stdout.splitlines():
            name, _, raw = line.strip().partition(" ")
            try:
                labels = json.loads(raw) or {}
            except json.JSONDecodeError:
                continue
            name = name.lstrip("/")
            if all_runs or run_id or not _driver_alive(labels):
                doomed.append(name)
            else:
                report.kept_containers.append(name)
    if doomed and not dry_run:
        removed = run_command_sync(runtime.remove_argv(*doomed), timeout=300)
        if not removed.ok:
            report.errors.append(removed.error_line())
    report.removed_containers = doomed


def _clean_cgroups(report: CleanReport, dry_run: bool) -> None:
    """Cgroups of local-sandbox trials whose run was killed (kill -9 skips their removal)."""
    from skillworks.sandbox._limits import leftover_cgroups, remove_cgroups

    doomed = leftover_cgroups()
    report.removed_cgroups = [str(d) for d in doomed]
    if doomed and not dry_run:
        report.errors.extend(remove_cgroups(doomed))


def _clean_images(runtime: ContainerRuntime, report: CleanReport, dry_run: bool) -> None:
    listed = run_command_sync(
        runtime.argv(
            "images", "--no-trunc", "--filter", f"label={LABEL_IMAGE}=1", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}"
        )
    )
    refs: list[str] = []
    for line in listed.stdout.splitlines():
        image_id, _, ref = line.strip().partition(" ")
        if image_id:  # by tag (an image may carry several); untagged leftovers by id
            refs.append(image_id if "<none>" in ref or not ref else ref)
    for ref in dict.fromkeys(refs):
        if dry_run:
            report.removed_images.append(ref)
            continue
        result = run_command_sync(runtime.argv("rmi", ref), timeout=120)
        (report.removed_images if result.ok else report.kept_images).append(ref)


def wait_gone(runtime: ContainerRuntime, run_id: str, timeout: float = 10.0) -> bool:
    """Poll until no container of `run_id` exists (for tests and the benchmark)."""
    deadline = time.monotonic() + timeout
    while True:
        listed = run_command_sync(runtime.argv("ps", "-a", "-q", "--filter", f"label={LABEL_RUN}={run_id}"))
        if listed.ok and not listed.stdout.split():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
