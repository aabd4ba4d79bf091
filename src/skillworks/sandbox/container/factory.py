"""Registry glue: the `container` backend's factory and preflight check, taking the keyword
options the trial runner passes to every backend."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillworks.errors import SandboxUnavailable
from skillworks.sandbox.container.backend import ContainerSandbox, check_network
from skillworks.sandbox.container.options import ContainerOptions
from skillworks.sandbox.container.runtime import ContainerRuntime, detect_runtime
from skillworks.tasks.model import Task

_LOCAL_ONLY_OPTIONS = frozenset({"bwrap_path", "keep_scratch", "hide_paths"})

_OPTION_ALIASES = {
    "strip_task_skills": "strip_skills",
    "container_cli": "cli",
    "container_global_flags": "global_flags",
    "container_run_flags": "run_flags",
    "container_build_flags": "build_flags",
}


def _split_kwargs(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    container: dict[str, Any] = {}
    sandbox: dict[str, Any] = {}
    for key, value in options.items():
        key = _OPTION_ALIASES.get(key, key)
        if key in _LOCAL_ONLY_OPTIONS:
            continue
        if key in ("runtime", "network", "extra_ro_binds"):
            sandbox[key] = value
        else:
            container[key] = value
    return container, sandbox


def create_container_sandbox(task: Task, scratch_dir: Path, **options: Any) -> ContainerSandbox:
    """Registry factory: keyword options are ContainerOptions fields (over the environment's
    defaults), plus `runtime`, `network` and `extra_ro_binds`. `strip_task_skills` is accepted as
    an alias of `strip_skills`; local-only options (bwrap_path, keep_scratch, hide_paths) are ignored."""
    container, sandbox = _split_kwargs(options)
    if isinstance(container.get("options"), ContainerOptions):
        opts = container.pop("options").merged(**container)
    else:
        opts = ContainerOptions.from_env(**container)
    return ContainerSandbox(task, scratch_dir, opts, **sandbox)


def preflight_container(task: Task | None = None, **options: Any) -> None:
    """Fail early with one line: runtime unreachable, task without Dockerfile, allowlist network."""
    container, sandbox = _split_kwargs(options)
    opts = ContainerOptions.from_env(**{k: v for k, v in container.items() if k != "options"})
    if task is not None:
        check_network(task, sandbox.get("network"))
        dockerfile = task.environment.dockerfile
        if dockerfile is None:
            raise SandboxUnavailable(f"task {task.id} has no Dockerfile for the container backend", task.root)
        if not dockerfile.is_file():
            raise SandboxUnavailable("Dockerfile not found", dockerfile)
    runtime = detect_runtime(
        opts.cli, global_flags=opts.global_flags, run_flags=opts.run_flags, build_flags=opts.build_flags
    )
    if opts.image_registry and opts.registry_tls_verify is False and runtime.kind == "docker":
        raise SandboxUnavailable(
            f"--no-image-registry-tls-verify: docker has no per-command TLS switch; list {opts.image_registry} "
            "under insecure-registries in /etc/docker/daemon.json instead"
        )


def options_from(**options: Any) -> ContainerOptions:
    """The container options these backend options (a run's env_options, `strip_task_skills`) give on this
    host (over the environment's defaults)."""
    container, _ = _split_kwargs(options)
    return ContainerOptions.from_env(**{k: v for k, v in container.items() if k != "options"})


def runtime_from_options(**options: Any) -> ContainerRuntime:
    """The container runtime these backend options (a run's env_options) select on this host."""
    opts = options_from(**options)
    return detect_runtime(
        opts.cli, global_flags=opts.global_flags, run_flags=opts.run_flags, build_flags=opts.build_flags
    )
