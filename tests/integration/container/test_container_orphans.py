"""No orphans: a driver interrupted (SIGINT, SIGTERM) removes its containers itself; a driver
killed with SIGKILL leaves them, and `skillworks clean` removes them (but not a live run's)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from skillworks.sandbox.container import ContainerOptions, ContainerRuntime, ContainerSandbox
from skillworks.sandbox.container.runtime import run_command_sync
from skillworks.tasks.model import Task

from .conftest import BASE_IMAGE, DEBIAN, FIXTURES, RUN_ID

pytestmark = [pytest.mark.podman, pytest.mark.slow]

DRIVER = Path(__file__).with_name("_driver.py")
SKILLWORKS = Path(sys.executable).with_name("skillworks")


def _containers(runtime: ContainerRuntime, run_id: str) -> list[str]:
    listed = run_command_sync(runtime.argv("ps", "-a", "-q", "--filter", f"label=skillworks.run={run_id}"))
    assert listed.ok, listed.stderr
    return listed.stdout.split()


def _channel_dirs(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"sw-ch-{pid}-*"))


def _start_driver(run_id: str, tmp_path: Path, mode: str = "session") -> subprocess.Popen[str]:
    env = {**os.environ, "SKILLWORKS_IMAGE_MAP": f"{DEBIAN}={BASE_IMAGE}"}
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), run_id, str(FIXTURES / "baked-skill"), str(tmp_path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"driver did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_driver_leaves_nothing(runtime: ContainerRuntime, tmp_path: Path, signum: int) -> None:
    run_id = f"orphan-{uuid.uuid4().hex[:8]}"
    proc = _start_driver(run_id, tmp_path)
    assert len(_containers(runtime, run_id)) == 2
    assert len(_channel_dirs(proc.pid)) == 2
    proc.send_signal(signum)
    proc.wait(timeout=60)
    # no `skillworks clean`: the driver removed its own containers (and host channel dirs)
    assert _containers(runtime, run_id) == []
    assert _channel_dirs(proc.pid) == []
    expected = 128 + signum if signum == signal.SIGTERM else None
    if expected is not None:
        assert proc.returncode == expected
    else:
        assert proc.returncode != 0
        assert proc.stderr is not None and "KeyboardInterrupt" in proc.stderr.read()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_interrupted_driver_without_session_leaves_nothing(
    runtime: ContainerRuntime, tmp_path: Path, signum: int
) -> None:
    """A library user without container_session: Ctrl-C unwinds (atexit), SIGTERM/SIGHUP are
    handled by the fallback handlers the backend installs where the defaults were in place."""
    run_id = f"orphan-{uuid.uuid4().hex[:8]}"
    proc = _start_driver(run_id, tmp_path, mode="nosession")
    assert len(_containers(runtime, run_id)) == 2
    proc.send_signal(signum)
    proc.wait(timeout=60)
    assert _containers(runtime, run_id) == []
    assert _channel_dirs(proc.pid) == []
    if signum != signal.SIGINT:
        assert proc.returncode == -signum  # still dies of the signal, as without skillworks


def test_killed_driver_is_cleaned_by_skillworks_clean(
    runtime: ContainerRuntime, options: ContainerOptions, baked_task: Task, tmp_path: Path
) -> None:
    run_id = f"orphan-{uuid.uuid4().hex[:8]}"
    proc = _start_driver(run_id, tmp_path / "driver")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert len(_containers(runtime, run_id)) == 2  # nothing could clean up
    assert len(_channel_dirs(proc.pid)) == 2

    import asyncio

    live = ContainerSandbox(
        baked_task, tmp_path / "live", options.merged(strip_skills=True, run_id=RUN_ID), runtime=runtime
    )
    asyncio.run(live.start())
    try:
        done = subprocess.run([str(SKILLWORKS), "clean"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert _containers(runtime, run_id) == []
        assert _channel_dirs(proc.pid) == []
        assert "removed container" in done.stdout and "removed temp dir" in done.stdout
        # a run whose driver is alive (this test process) is kept
        assert live.name is not None
        assert run_command_sync(runtime.argv("container", "inspect", live.name)).ok
        assert re.search(r"kept \d+ container\(s\)", done.stdout), done.stdout  # others' live runs are kept too
        # images skillworks built are listed by --images (dry run: nothing removed)
        assert live.image is not None
        listed = subprocess.run(
            [str(SKILLWORKS), "clean", "--images", "--dry-run"], capture_output=True, text=True, timeout=120
        )
        assert listed.returncode == 0, listed.stderr
        tag = live.image.tag
        assert any(line.endswith(tag) for line in listed.stdout.splitlines() if "would remove image" in line)
        assert run_command_sync(runtime.argv("image", "inspect", live.image.tag)).ok
        # --run removes one run's containers even while its driver lives
        by_run = subprocess.run([str(SKILLWORKS), "clean", "--run", RUN_ID], capture_output=True, text=True)
        assert by_run.returncode == 0 and f"removed container {live.name}" in by_run.stdout
        assert _containers(runtime, RUN_ID) == []
    finally:
        asyncio.run(live.stop())
