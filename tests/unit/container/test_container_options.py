"""Options from the environment and keyword arguments; image content hashing; registry glue."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillworks.errors import TaskError, UserError
from skillworks.sandbox import create_sandbox
from skillworks.sandbox.container import ContainerOptions, ContainerSandbox
from skillworks.sandbox.container.image import BuildOptions, plan_task_image
from skillworks.sandbox.container.runtime import ContainerRuntime, split_flags
from skillworks.tasks.model import Environment, Task


def test_from_env_reads_every_setting(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    env = {
        "SKILLWORKS_CONTAINER_CLI": "podman",
        "SKILLWORKS_CONTAINER_GLOBAL_FLAGS": "--runtime runc --cgroup-manager=cgroupfs",
        "SKILLWORKS_CONTAINER_RUN_FLAGS": "--ulimit nofile=1024:1024",
        "SKILLWORKS_CONTAINER_BUILD_FLAGS": "--network=host '--label=a b'",
        "SKILLWORKS_IMAGE_MAP": "debian:bookworm-slim=localhost/base, ubuntu=localhost/u",
        "SKILLWORKS_CA_BUNDLE": str(ca),
    }
    opts = ContainerOptions.from_env(env)
    assert opts.cli == "podman"
    assert opts.global_flags == ("--runtime", "runc", "--cgroup-manager=cgroupfs")
    assert opts.run_flags == ("--ulimit", "nofile=1024:1024")
    assert opts.build_flags == ("--network=host", "--label=a b")
    assert opts.image_map == {"debian:bookworm-slim": "localhost/base", "ubuntu": "localhost/u"}
    assert opts.ca_bundle == ca


def test_overrides_win_and_are_normalised(tmp_path: Path) -> None:
    env = {"SKILLWORKS_CONTAINER_RUN_FLAGS": "--a", "SKILLWORKS_IMAGE_MAP": "x=y"}
    opts = ContainerOptions.from_env(
        env,
        run_flags=["--b", "--c"],
        build_flags="--network=host",
        image_map=["ubuntu:24.04=localhost/base"],
        ca_bundle=str(tmp_path),
        strip_skills=True,
        cli=None,  # None means "not given"
    )
    assert opts.run_flags == ("--b", "--c")
    assert opts.build_flags == ("--network=host",)
    assert opts.image_map == {"ubuntu:24.04": "localhost/base"}
    assert opts.ca_bundle == tmp_path
    assert opts.strip_skills is True


def test_unknown_option_is_a_user_error() -> None:
    with pytest.raises(UserError, match="unknown container option\\(s\\) strip; allowed: "):
        ContainerOptions().merged(strip=True)


def test_split_flags_and_argv() -> None:
    assert split_flags(None) == () and split_flags("") == ()
    rt = ContainerRuntime("podman", "podman", global_flags=("--runtime", "runc"))
    assert rt.argv("ps", "-a") == ["podman", "--runtime", "runc", "ps", "-a"]
    assert rt.remove_argv("c1") == ["podman", "--runtime", "runc", "rm", "-f", "-t", "0", "c1"]
    assert ContainerRuntime("docker", "docker").remove_argv("c1") == ["docker", "rm", "-f", "c1"]


def test_registry_creates_container_sandboxes(tmp_path: Path) -> None:
    task = _task(tmp_path, "FROM x\n")
    sandbox = create_sandbox(
        "container",
        task,
        tmp_path / "scratch",
        run_id="r1",
        strip_task_skills=True,  # the local backend's name for the same option
        bwrap_path="/usr/bin/bwrap",  # local-only options are ignored
        runtime=ContainerRuntime("podman", "podman"),
    )
    assert isinstance(sandbox, ContainerSandbox)
    assert sandbox.options.strip_skills and sandbox.run_id == "r1"
    assert sandbox.workdir == "/app"


def _task(root: Path, dockerfile: str, files: dict[str, str] | None = None) -> Task:
    env_dir = root / "environment"
    env_dir.mkdir(parents=True, exist_ok=True)
    (env_dir / "Dockerfile").write_text(dockerfile)
    for rel, text in (files or {}).items():
        (env_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (env_dir / rel).write_text(text)
    return Task(
        id="My Task/1",
        root=root,
        source_format="task.md",
        instruction="x",
        environment=Environment(dir=env_dir, dockerfile=env_dir / "Dockerfile", workdir="/app"),
        content_hash="0" * 64,
    )


def test_content_hash_tracks_files_strip_and_workdir(tmp_path: Path) -> None:
    task = _task(tmp_path, "FROM x\nCOPY skills /s\n", {"a.txt": "1", "skills/k/SKILL.md": "k"})
    keep = BuildOptions()
    _, _, plan, h1 = plan_task_image(task, keep)
    assert plan.text.endswith("WORKDIR /app\n")  # the workspace exists in the image
    assert plan_task_image(task, keep)[3] == h1  # stable
    _, _, stripped_plan, h_strip = plan_task_image(task, BuildOptions(strip_skills=True))
    assert h_strip != h1
    assert [ln for ln in stripped_plan.text.splitlines() if not ln.startswith("#")] == ["FROM x", "WORKDIR /app"]
    (tmp_path / "environment" / "skills" / "k" / "SKILL.md").write_text("k2")
    assert plan_task_image(task, keep)[3] != h1  # a skill edit changes the kept variant
    assert plan_task_image(task, BuildOptions(strip_skills=True))[3] == h_strip  # not the stripped one
    (tmp_path / "environment" / "a.txt").write_text("2")
    assert plan_task_image(task, BuildOptions(strip_skills=True))[3] != h_strip
    os.chmod(tmp_path / "environment" / "a.txt", 0o755)
    h_exec = plan_task_image(task, BuildOptions(strip_skills=True))[3]
    assert h_exec != h_strip
    assert plan_task_image(task, BuildOptions(image_map={"x": "y"}, strip_skills=True))[3] != h_exec


def test_missing_dockerfile_and_no_dockerfile(tmp_path: Path) -> None:
    task = _task(tmp_path, "FROM x\n")
    assert task.environment.dockerfile is not None
    task.environment.dockerfile.unlink()
    with pytest.raises(TaskError, match="Dockerfile not found"):
        plan_task_image(task, BuildOptions())
    bare = task.model_copy(update={"environment": Environment()})
    with pytest.raises(TaskError, match="task has no Dockerfile"):
        plan_task_image(bare, BuildOptions())
