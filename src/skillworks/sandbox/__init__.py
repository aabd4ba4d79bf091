"""skillworks.sandbox: the Sandbox protocol, the backend registry and the `local` (bubblewrap) backend
(`LocalSandbox` is imported on first use: a container run never loads it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillworks.sandbox.base import (
    AGENT_LOG_DIR,
    AGENT_START_MARK,
    AgentPhaseEnd,
    ExecRequest,
    ExecResult,
    ModelChannel,
    Sandbox,
    SandboxBroken,
    SandboxCapabilities,
    SandboxError,
)

if TYPE_CHECKING:
    from skillworks.sandbox.local import LocalSandbox
from skillworks.sandbox.registry import (
    available_backends,
    create_sandbox,
    preflight_sandbox,
    register_backend,
    sandbox_warnings,
)

__all__ = [
    "AGENT_LOG_DIR",
    "AGENT_START_MARK",
    "AgentPhaseEnd",
    "ExecRequest",
    "ExecResult",
    "LocalSandbox",
    "ModelChannel",
    "Sandbox",
    "SandboxBroken",
    "SandboxCapabilities",
    "SandboxError",
    "available_backends",
    "create_sandbox",
    "preflight_sandbox",
    "register_backend",
    "sandbox_warnings",
]


def __getattr__(name: str) -> Any:
    if name != "LocalSandbox":
        raise AttributeError(f"module 'skillworks.sandbox' has no attribute {name!r}")
    from skillworks.sandbox.local import LocalSandbox

    globals()[name] = LocalSandbox
    return LocalSandbox
