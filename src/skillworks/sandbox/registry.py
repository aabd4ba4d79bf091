"""Sandbox backends by name. Built in: ``local`` (bubblewrap). Other packages add backends with
``register_backend`` or through the ``skillworks.sandboxes`` entry point group (the entry point's
value is a factory ``(task, scratch_dir, **options) -> Sandbox``)."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from skillworks.errors import UserError
from skillworks.sandbox.base import Sandbox
from skillworks.tasks.model import Task

SandboxFactory = Callable[..., Sandbox]
Preflight = Callable[..., None]
ENTRY_POINT_GROUP = "skillworks.sandboxes"

_BACKENDS: dict[str, SandboxFactory] = {}
_PREFLIGHTS: dict[str, Preflight] = {}
_entry_points_loaded = False


def _local(task: Task, scratch_dir: Path, **options: Any) -> Sandbox:
    from skillworks.sandbox.local import LocalSandbox

    return LocalSandbox(task, scratch_dir, **options)


def _local_preflight(task: Task | None = None, **options: Any) -> None:
    from skillworks.sandbox.local import preflight

    preflight(task, **options)


def register_backend(
    name: str, factory: SandboxFactory, *, preflight: Preflight | None = None, replace: bool = False
) -> None:
    """Make `factory` available as ``--env name``. `preflight(task | None, **options)`, if given,
    raises a UserError (e.g. SandboxUnavailable) when the backend cannot run here."""
    if name in _BACKENDS and not replace and _BACKENDS[name] is not factory:
        raise ValueError(f"sandbox backend {name!r} is already registered")
    _BACKENDS[name] = factory
    if preflight is not None:
        _PREFLIGHTS[name] = preflight


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _BACKENDS:
            _BACKENDS[ep.name] = ep.load()


def available_backends() -> list[str]:
    _load_entry_points()
    return sorted(_BACKENDS)


def _factory(env: str) -> SandboxFactory:
    _load_entry_points()
    factory = _BACKENDS.get(env)
    if factory is None:
        raise UserError(f"unknown sandbox backend {env!r}; available: {', '.join(available_backends())}")
    return factory


def create_sandbox(env: str, task: Task, scratch_dir: Path, **options: Any) -> Sandbox:
    """A new (not yet started) sandbox of backend `env` for one trial of `task`."""
    return _factory(env)(task, scratch_dir, **options)


def preflight_sandbox(env: str, task: Task | None = None, **options: Any) -> None:
    """Check, before planning any trial, that backend `env` can run (`task`) here. Raises a
    UserError with the one-line reason (e.g. bubblewrap missing); a no-op for backends without
    a preflight check."""
    _factory(env)
    check = _PREFLIGHTS.get(env)
    if check is not None:
        check(task, **options)


def sandbox_warnings(env: str, tasks: list[Task], **options: Any) -> list[str]:
    """What backend `env` will not enforce for `tasks` on this host, one sentence each (e.g. the
    local sandbox's memory or process limits where neither cgroups nor rlimits can apply them)."""
    if env != "local":
        return []
    from skillworks.sandbox._limits import DEFAULT_PIDS_LIMIT, LimitRequest, limits_status

    pids = options.get("pids_limit", DEFAULT_PIDS_LIMIT)
    requests = {LimitRequest(t.environment.resources.memory_mb, t.environment.resources.cpus, pids) for t in tasks}
    statuses = {limits_status(r) for r in sorted(requests, key=repr)}
    return sorted(text for enforced, text in statuses if not enforced)


def _container(task: Task, scratch_dir: Path, **options: Any) -> Sandbox:
    from skillworks.sandbox.container.factory import create_container_sandbox

    return create_container_sandbox(task, scratch_dir, **options)


def _container_preflight(task: Task | None = None, **options: Any) -> None:
    from skillworks.sandbox.container.factory import preflight_container

    preflight_container(task, **options)


register_backend("local", _local, preflight=_local_preflight)
register_backend("container", _container, preflight=_container_preflight)
