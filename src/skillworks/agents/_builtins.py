"""Registers the agents that ship with skillworks."""

from __future__ import annotations


def register_reference_agents() -> None:
    """oracle and nop: no model, nothing heavy to import (a run of only these loads nothing else)."""
    from skillworks.agents.reference_agents import NopAgent, OracleAgent
    from skillworks.agents.registry import register_agent

    register_agent("oracle", lambda **_: OracleAgent())
    register_agent("nop", lambda **_: NopAgent())


def register_all() -> None:
    from skillworks.agents.registry import register_agent

    register_reference_agents()

    from skillworks.agents.builtin import BuiltinAgent

    register_agent("builtin", BuiltinAgent)

    from skillworks.agents.harness import HARNESS_SPECS, harness_factory

    for name in HARNESS_SPECS:
        register_agent(name, harness_factory(name))
