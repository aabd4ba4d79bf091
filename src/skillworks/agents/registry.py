"""Agent registry: built-in agents plus any registered through the `skillworks.agents` entry point group."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

from skillworks.agents.base import Agent
from skillworks.errors import UserError

AgentFactory = Callable[..., Agent]

_FACTORIES: dict[str, AgentFactory] = {}
_entry_points_loaded = False
_REFERENCE_AGENTS = frozenset({"oracle", "nop"})


def register_agent(name: str, factory: AgentFactory) -> None:
    _FACTORIES[name] = factory


def _load_builtins(only: str | None = None) -> None:
    """Register the built-in agents and the entry points' agents (once). With `only` a reference agent
    (oracle, nop) that no entry point redefines, just that one: the builtin agent and the harnesses are
    not imported (an oracle run's start-up)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    from skillworks.agents import _builtins

    if only in _REFERENCE_AGENTS and not any(
        ep.name == only for ep in metadata.entry_points(group="skillworks.agents")
    ):
        _builtins.register_reference_agents()
        return
    _entry_points_loaded = True
    _builtins.register_all()
    for ep in metadata.entry_points(group="skillworks.agents"):
        register_agent(ep.name, ep.load())


def agent_names() -> list[str]:
    _load_builtins()
    return sorted(_FACTORIES)


def create_agent(name: str, **options: Any) -> Agent:
    _load_builtins(only=name)
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UserError(f"unknown agent {name!r}; available: {', '.join(sorted(_FACTORIES))}")
    try:
        return factory(**options)
    except TypeError as exc:  # an option the agent does not take
        raise UserError(f"agent {name!r}: {exc}") from None
