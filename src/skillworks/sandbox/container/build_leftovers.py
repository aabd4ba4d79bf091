"""What an interrupted image build leaves behind, and how to remove it.

A `podman build` runs each RUN step in a *working container* (a storage-only container, listed by
`podman ps --external`) whose process is not a child of the build command in any way a signal to
the build reaches: killing the build leaves the step running and the working container on disk.

skillworks tags each of its builds with a build argument ``SKILLWORKS_BUILD_OWNER=<pid>-<pid start
time>-<random>`` (podman records build arguments in the working container's ``buildah.json``; an
argument the Dockerfile does not declare changes nothing in the image). That names the owner of
every working container, and a step's processes carry ``HOSTNAME=<working container id[:12]>`` in
their environment, so:

- an interrupted build (Ctrl-C, timeout) is stopped with SIGTERM first, then whatever of it still
  runs is killed, then its working containers are removed (`stop_build`);
- `skillworks clean` removes the working containers (and kills the steps) of builds whose driver
  process is gone (`leftover_builds` + `remove_builds`).

Docker builds run in the daemon (BuildKit cancels them when the client goes away): nothing to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from skillworks.sandbox.container.cleanup import process_start_time
from skillworks.sandbox.container.runtime import ContainerRuntime, run_command_sync

BUILD_OWNER_ARG = "SKILLWORKS_BUILD_OWNER"
TERM_GRACE_SEC = 3.0


def new_owner_token() -> str:
    """`<pid>-<its start time>-<random>`: which process started a build (pid reuse cannot fool it)."""
    pid = os.getpid()
    return f"{pid}-{process_start_time(pid) or 0}-{uuid.uuid4().hex[:8]}"


def owner_alive(token: str) -> bool:
    parts = token.split("-")
    if len(parts) != 3 or not parts[0].isdigit():
        return False
    return process_start_time(int(parts[0])) == parts[1]


@dataclass(frozen=True)
class BuildLeftover:
    container_id: str
    name: str
    owner: str


def _storage(runtime: ContainerRuntime) -> Path | None:
    """Where podman keeps its containers' metadata (`<graph root>/<driver>-containers`)."""
    info = run_command_sync(
        runtime.argv("info", "--format", "{{.Store.GraphRoot}}\t{{.Store.GraphDriverName}}"), timeout=60
    )
    root, _, driver = info.stdout.strip().partition("\t")
    if not info.ok or not root or not driver:
        return None
    return Path(root) / f"{driver}-containers"


def leftover_builds(runtime: ContainerRuntime, owner: str | None = None) -> list[BuildLeftover]:
    """Working containers of skillworks builds (of one `owner` token, else of every owner)."""
    if runtime.kind != "podman":
        return []
    storage = _storage(runtime)
    if storage is None or not storage.is_dir():
        return []
    found: list[BuildLeftover] = []
    for meta in sorted(storage.glob("*/userdata/buildah.json")):
        try:
            data = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue
        token = str((data.get("Args") or {}).get(BUILD_OWNER_ARG) or "")
        if not token or (owner is not None and token != owner):
            continue
        found.append(
            BuildLeftover(
                str(data.get("container-id") or meta.parents[1].name), data.get("container-name") or "", token
            )
        )
    return found


def _step_pids(container_ids: set[str]) -> list[int]:
    """Processes of RUN steps in these working containers (their HOSTNAME is the id's first 12 chars)."""
    short = {f"HOSTNAME={c[:12]}".encode() for c in container_ids}
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cgroup = (entry / "cgroup").read_text()
            if "buildah" not in cgroup:
                continue
            env = set((entry / "environ").read_bytes().split(b"\0"))
        except OSError:
            continue
        if env & short:
            pids.append(int(entry.name))
    return pids


def _kill_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def remove_builds(runtime: ContainerRuntime, leftovers: list[BuildLeftover]) -> list[str]:
    """Kill what still runs in these working containers (frozen first, so nothing forks meanwhile),
    then remove them, one by one (one that cannot be removed does not keep the others). Returns errors
    (one line each)."""
    if not leftovers:
        return []
    ids = {b.container_id for b in leftovers}
    for _ in range(2):
        pids = _step_pids(ids)
        if not pids:
            break
        _kill_all(pids, signal.SIGSTOP)
        _kill_all(_step_pids(ids), signal.SIGKILL)
    errors: list[str] = []
    for cid in sorted(ids):
        removed = run_command_sync(runtime.remove_argv(cid), timeout=120)
        if not removed.ok:
            errors.append(f"could not remove build container {cid[:12]}: {removed.error_line()}")
    return errors


def _remove_owned(runtime: ContainerRuntime, owner: str, attempts: int = 5) -> list[str]:
    """Remove every working container of `owner`, re-listing until none is left: a build that got
    SIGTERM may still be committing a step or removing its own containers when the first pass runs."""
    errors: list[str] = []
    for attempt in range(attempts):
        leftovers = leftover_builds(runtime, owner)
        if not leftovers:
            return []
        errors = remove_builds(runtime, leftovers)
        if attempt < attempts - 1:
            time.sleep(0.5 * (attempt + 1))
    still = leftover_builds(runtime, owner)
    if not still:
        return []
    names = ", ".join(b.name or b.container_id[:12] for b in still)
    return [*errors, f"build containers left behind: {names} (`skillworks clean` removes them)"]


async def stop_build(
    proc: asyncio.subprocess.Process, runtime: ContainerRuntime, owner: str, log_path: Path | None = None
) -> list[str]:
    """Stop a running build: SIGTERM to its process group, a short grace, SIGKILL; then kill its
    steps and remove its working containers. Returns what could not be cleaned up (also appended to
    the build log when one is given)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), TERM_GRACE_SEC)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.shield(proc.wait())
    # the build command is gone; its step may not be (it is not in the build's process group)
    errors = await asyncio.shield(asyncio.to_thread(_remove_owned, runtime, owner))
    if errors and log_path is not None:
        with contextlib.suppress(OSError), log_path.open("a", encoding="utf-8") as log:
            log.write("".join(f"skillworks: {e}\n" for e in errors))
    return errors
