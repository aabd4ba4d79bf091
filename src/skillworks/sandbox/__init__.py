"""skillworks.sandbox: the Sandbox protocol, the backend registry and the `local` (bubblewrap) backend."""

from skillworks.sandbox.base import (
    AGENT_LOG_DIR,
    AGENT_START_MARK,
    AgentPhaseEnd,
    ExecResult,
    ModelChannel,
    Sandbox,
    SandboxBroken,
    SandboxCapabilities,
    SandboxError,
)
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
