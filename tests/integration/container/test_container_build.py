"""Image builds: cache per content hash, force_build, and the one-line errors (build failure,
missing Dockerfile, unknown base image, unreachable runtime, unsupported network policy)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from skillworks.errors import SandboxUnavailable, TaskError, UserError
from skillworks.sandbox.container import (
    ContainerOptions,
    ContainerRuntime,
    ContainerSandbox,
    ImageBuildError,
    ensure_image,
)
from skillworks.sandbox.container.image import BuildOptions
from skillworks.sandbox.container.runtime import run_command_sync
from skillworks.tasks.loader import load_task
from skillworks.tasks.model import NetworkPolicy, Task

from .conftest import BASE_IMAGE, RUN_ID

pytestmark = [pytest.mark.podman]

SKILLWORKS = Path(sys.executable).with_name("skillworks")


def _write_task(root: Path, dockerfile: str, files: dict[str, str] | None = None) -> Task:
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text(dockerfile)
    for name, text in (files or {}).items():
        (root / "environment" / name).write_text(text)
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    (root / "task.md").write_text(
        "---\nschema_version: '1.3'\nenvironment:\n  network_mode: no-network\n  build_timeout_sec: 120\n---\n\n"
        "Do nothing.\n"
    )
    return load_task(root)


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text, text
    return text


async def test_cache_hit_force_build_and_content_change(
    runtime: ContainerRuntime, options: ContainerOptions, tmp_path: Path
) -> None:
    token = uuid.uuid4().hex  # fresh content: nothing cached from earlier test runs
    task = _write_task(tmp_path / "t", f"FROM {BASE_IMAGE}\nCOPY hello.txt /srv/hello.txt\n", {"hello.txt": token})
    build = BuildOptions(options.image_map)
    first = await ensure_image(runtime, task, build)
    assert first.tag.startswith("skillworks/env:") and len(first.tag.rsplit(":", 1)[1]) == 16
    started = time.monotonic()
    again = await ensure_image(runtime, task, build)
    assert not again.built and again.tag == first.tag
    assert time.monotonic() - started < 1.0
    forced = await ensure_image(runtime, task, BuildOptions(options.image_map, force_build=True))
    assert forced.built and forced.tag == first.tag
    again_forced = await ensure_image(runtime, task, BuildOptions(options.image_map, force_build=True))
    assert not again_forced.built  # force_build rebuilds once per process, not per trial
    (tmp_path / "t" / "environment" / "hello.txt").write_text(token + "v2")
    changed = await ensure_image(runtime, task, build)
    assert changed.built and changed.tag != first.tag
    assert run_command_sync(runtime.argv("rmi", first.tag, changed.tag)).ok


async def test_build_failure_is_one_line_with_the_log(
    runtime: ContainerRuntime, options: ContainerOptions, tmp_path: Path
) -> None:
    task = _write_task(tmp_path / "broken", f"FROM {BASE_IMAGE}\nRUN echo step-about-to-fail && exit 7\n")
    sandbox = ContainerSandbox(task, tmp_path / "s", options.merged(run_id=RUN_ID), runtime=runtime)
    with pytest.raises(ImageBuildError) as info:
        await sandbox.start()
    message = _one_line(info.value)
    assert message.startswith(str(task.environment.dockerfile))
    assert "image build failed" in message and "full log: " in message
    log_path = Path(message.rsplit("full log: ", 1)[1])
    assert "step-about-to-fail" in log_path.read_text()
    await sandbox.stop()


async def test_unknown_base_image_names_it_and_the_fix(
    runtime: ContainerRuntime, options: ContainerOptions, tmp_path: Path
) -> None:
    task = _write_task(tmp_path / "nobase", "FROM skillworks-no-such-base-image:1\nRUN true\n")
    with pytest.raises(ImageBuildError) as info:
        await ensure_image(runtime, task, BuildOptions(options.image_map))
    message = _one_line(info.value)
    assert "base image skillworks-no-such-base-image:1 is not available locally" in message
    assert "--image-map skillworks-no-such-base-image:1=<local image>" in message


async def test_missing_dockerfile(runtime: ContainerRuntime, options: ContainerOptions, tmp_path: Path) -> None:
    task = _write_task(tmp_path / "gone", f"FROM {BASE_IMAGE}\n")
    assert task.environment.dockerfile is not None
    task.environment.dockerfile.unlink()
    with pytest.raises(TaskError) as info:
        await ensure_image(runtime, task, BuildOptions(options.image_map))
    assert _one_line(info.value) == f"{task.environment.dockerfile}: Dockerfile not found"


async def test_unreachable_runtime(baked_task: Task, tmp_path: Path) -> None:
    opts = ContainerOptions(cli="podman", global_flags=("--url", "unix:///nonexistent/skillworks.sock"))
    sandbox = ContainerSandbox(baked_task, tmp_path, opts)
    with pytest.raises(SandboxUnavailable) as info:
        await sandbox.start()
    assert "container runtime unreachable (podman: " in _one_line(info.value)
    await sandbox.stop()


async def test_allowlist_without_hosts_is_refused(
    baked_task: Task, options: ContainerOptions, runtime: ContainerRuntime, tmp_path: Path
) -> None:
    policy = NetworkPolicy(mode="allowlist", allowed_hosts=())
    sandbox = ContainerSandbox(baked_task, tmp_path, options.merged(run_id=RUN_ID), runtime=runtime, network=policy)
    with pytest.raises(UserError) as info:
        await sandbox.start()
    assert _one_line(info.value).endswith("network_mode 'allowlist' needs a non-empty allowed_hosts list")
    assert sandbox.name is None


def test_cli_clean_unreachable_runtime_is_one_line() -> None:
    done = subprocess.run(
        [str(SKILLWORKS), "clean", "--container-cli", "/nonexistent/podman"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: --container-cli: container runtime unreachable (/nonexistent/podman: /nonexistent/podman is "
        "not installed)"
    ]
