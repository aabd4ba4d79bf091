"""Real tasks as written, on the container backend (issue 10): symlinked verifier/oracle dirs (as in
BenchFlow's own examples), one image for identical environments, short build errors with the logs
kept, and no build step or working container left behind by Ctrl-C or kill -9 during a build."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from skillworks.sandbox.container import ContainerOptions, ContainerRuntime
from skillworks.sandbox.container.build_leftovers import leftover_builds
from skillworks.sandbox.container.image import BuildOptions, ensure_image
from skillworks.sandbox.container.runtime import run_command_sync
from skillworks.tasks import load_task

from .conftest import BASE_IMAGE, DEBIAN, task_copy

pytestmark = [pytest.mark.podman, pytest.mark.slow]

SKILLWORKS = Path(sys.executable).with_name("skillworks")


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", "SKILLWORKS_IMAGE_MAP": f"{DEBIAN}={BASE_IMAGE}"},
    )


def _popen(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "skillworks.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKILLWORKS_IMAGE_MAP": f"{DEBIAN}={BASE_IMAGE}"},
    )


def test_symlinked_oracle_and_verifier_dirs_are_followed(tmp_path: Path) -> None:
    """`solution -> ../shared/solution` used to arrive in the container as a dangling link."""
    task = task_copy(tmp_path)
    shared = tmp_path / "baked-skill" / "_shared"
    shared.mkdir()
    for name in ("solution", "tests"):
        (task / name).rename(shared / name)
        (task / name).symlink_to(Path("_shared") / name)
    proc = _cli("tasks", "check", str(task), "--oracle", "--env", "container")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    # a link that leaves the task dir is refused, in one line naming it
    outside = tmp_path / "elsewhere"
    (shared / "solution").rename(outside)
    (task / "solution").unlink()
    (task / "solution").symlink_to(outside)
    proc = _cli("run", str(task), "--agent", "nop", "--env", "container", "--out", str(tmp_path / "runs"))
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith(
        f"solution is a symlink to {outside}, outside the task directory; copy it into the task instead"
    ), proc.stderr


def test_identical_environments_share_one_image(
    runtime: ContainerRuntime, options: ContainerOptions, tmp_path: Path
) -> None:
    first = task_copy(tmp_path / "a").rename(tmp_path / "first-task")
    second = task_copy(tmp_path / "b").rename(tmp_path / "second-task")
    marker = f"LABEL skillworks.test={uuid.uuid4().hex}\n"  # a fresh environment: the first build builds
    for task in (first, second):
        with (task / "environment" / "Dockerfile").open("a") as fh:
            fh.write(marker)
    build = BuildOptions(image_map=options.image_map, strip_skills=True)
    a = asyncio.run(ensure_image(runtime, load_task(first), build))
    try:
        b = asyncio.run(ensure_image(runtime, load_task(second), build))
        assert a.tag == b.tag and a.tag.startswith("skillworks/env:")
        assert a.built and not b.built
    finally:
        run_command_sync(runtime.argv("rmi", "-f", a.tag))


def test_failed_build_is_short_and_the_oracle_logs_are_kept(tmp_path: Path) -> None:
    task = task_copy(tmp_path)
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo 'boom: the tool is missing' >&2 && exit 3\n")
    proc = _cli("tasks", "check", str(task), "--oracle", "--env", "container", "--json")
    assert proc.returncode == 1, proc.stderr
    import json

    (row,) = json.loads(proc.stdout)
    message = row["oracle"]["message"]
    assert "image build failed" in message and "boom: the tool is missing" in message, message
    assert "podman" not in message and "--cgroup-manager" not in message and len(message) < 1200, message
    trial_dir = Path(row["oracle"]["trial_dir"])
    assert trial_dir.is_dir() and (trial_dir / "error.log").is_file()
    shutil.rmtree(trial_dir.parents[1], ignore_errors=True)


def _sleep_task(tmp_path: Path, seconds: int) -> Path:
    task = task_copy(tmp_path)
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + f"RUN sleep {seconds}\n")
    return task


def _step_pids(seconds: int) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"^sleep {seconds}$"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def _wait_for_step(seconds: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 240
    while not _step_pids(seconds):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the build step never started"
        time.sleep(0.3)


def _build_logs_of(seconds: int) -> str:
    from skillworks.sandbox.container.image import cache_dir

    logs = [
        p for p in (cache_dir() / "build-logs").glob("*.log") if f"sleep {seconds}" in p.read_text(errors="replace")
    ]
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in logs) or "no build log found"


def test_ctrl_c_during_a_build_stops_the_step_and_removes_the_working_container(
    runtime: ContainerRuntime, tmp_path: Path
) -> None:
    seconds = 3000 + os.getpid() % 997  # unique to this test run
    task = _sleep_task(tmp_path, seconds)
    proc = _popen("run", str(task), "--agent", "nop", "--env", "container", "--out", str(tmp_path / "runs"))
    _wait_for_step(seconds, proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert _step_pids(seconds) == []
    left = [b for b in leftover_builds(runtime) if b.owner.startswith(f"{proc.pid}-")]
    assert left == [], _build_logs_of(seconds)  # what podman and skillworks' cleanup said, for diagnosis


def test_clean_removes_what_a_killed_build_left(runtime: ContainerRuntime, tmp_path: Path) -> None:
    seconds = 4000 + os.getpid() % 997
    task = _sleep_task(tmp_path, seconds)
    proc = _popen("run", str(task), "--agent", "nop", "--env", "container", "--out", str(tmp_path / "runs"))
    _wait_for_step(seconds, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    mine = [b for b in leftover_builds(runtime) if b.owner.startswith(f"{proc.pid}-")]
    assert mine and _step_pids(seconds), "kill -9 was expected to leave the build behind"
    import tempfile

    scratch = list(Path(tempfile.gettempdir()).glob(f"sw-*-{proc.pid}-*"))
    assert scratch
    done = subprocess.run([str(SKILLWORKS), "clean"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "removed build container" in done.stdout, done.stdout
    assert [b for b in leftover_builds(runtime) if b.owner.startswith(f"{proc.pid}-")] == []
    assert _step_pids(seconds) == []
    assert not [p for p in scratch if p.exists()]
