"""Installed agent CLIs (Claude Code, Codex CLI, Gemini CLI, OpenCode) as declarative harness specs,
run by one generic runner inside the trial's sandbox."""

from collections.abc import Callable
from typing import Any

from skillworks.agents.harness.convert_openhands import convert_openhands
from skillworks.agents.harness.install import (
    Installation,
    cache_root,
    find_installation,
    install,
    install_dir,
    user_installation,
)
from skillworks.agents.harness.runner import HarnessAgent, converter_for
from skillworks.agents.harness.spec import (
    ConfigFile,
    ErrorPattern,
    HarnessSpec,
    ListedSkills,
    McpWiring,
    NpmInstall,
    PipInstall,
    classify_error,
)
from skillworks.agents.harness.specs import HARNESS_SPECS


def harness_factory(name: str) -> Callable[..., HarnessAgent]:
    """A factory for the agent registry: `factory(model=..., **options) -> HarnessAgent`."""
    spec = HARNESS_SPECS[name]

    def factory(**options: Any) -> HarnessAgent:
        return HarnessAgent(spec, **options)

    return factory


__all__ = [
    "HARNESS_SPECS",
    "ConfigFile",
    "ErrorPattern",
    "HarnessAgent",
    "HarnessSpec",
    "Installation",
    "ListedSkills",
    "McpWiring",
    "NpmInstall",
    "PipInstall",
    "cache_root",
    "classify_error",
    "convert_openhands",
    "converter_for",
    "find_installation",
    "harness_factory",
    "install",
    "install_dir",
    "user_installation",
]
