"""The Sandbox protocol: start, exec, upload, download, stop. Backends: local (bubblewrap), container."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from skillworks.errors import SkillworksError
from skillworks.sandbox.safe_copy import CopyRecord, LinkPolicy
from skillworks.tasks.model import NetworkMode


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_sec: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


# The agent phase's logs, and the mark of its start: a file there older than everything the agent wrote
AGENT_LOG_DIR = "/logs/agent"
AGENT_START_MARK = f"{AGENT_LOG_DIR}/.skillworks-agent-start"


@dataclass(frozen=True)
class AgentPhaseEnd:
    """What ``end_agent_phase`` found once nothing of the agent ran any more."""

    workspace_changed: bool  # a regular file in the workspace is newer than AGENT_START_MARK
    agent_logs: bool  # AGENT_LOG_DIR may hold something besides the mark (worth downloading)
    uploaded: bool = False  # the `upload` asked of end_agent_phase was done in the same round trip
    then_result: ExecResult | None = None  # the `then` command ran in the same round trip: its result


@dataclass(frozen=True)
class ExecRequest:
    """A command for ``end_agent_phase`` to run next in the same round trip (the verifier's), as
    ``exec`` would run it: a string under bash, from `cwd`, with `env`, as `user`."""

    cmd: str
    cwd: str
    env: Mapping[str, str]
    user: str
    timeout: float | None = None
    stdout_path: Path | None = None


@dataclass(frozen=True)
class SandboxCapabilities:
    backend: str
    network_modes: frozenset[NetworkMode]
    resource_limits: bool


@dataclass(frozen=True)
class ModelChannel:
    """The one narrow path from a sandbox to the host's model gateway: a unix socket on the host,
    re-exposed inside the sandbox as http://127.0.0.1:<port>.

    `port` is the requested port. A backend may serve the channel elsewhere (the local backend in
    ``public`` network mode picks a free port per sandbox): after ``open_model_channel``, use the
    sandbox's ``model_channel_url`` attribute when it has one, else ``base_url``."""

    socket_path: Path
    port: int = 4141

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@runtime_checkable
class Sandbox(Protocol):
    capabilities: SandboxCapabilities
    workdir: str
    home: str

    async def start(self) -> None: ...

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        user: str | None = None,
        stdout_path: Path | None = None,
    ) -> ExecResult:
        """Run `cmd` (a string runs under `bash -c`). A timeout kills the whole process tree and
        returns timed_out=True. When `stdout_path` is set, stdout streams to that host file."""
        ...

    async def upload(self, src: Path, dst: str, *, replace: bool = False) -> None:
        """Copy a host file or directory to `dst` inside the sandbox (parents created). With `replace`,
        whatever was at `dst` before is removed first (a directory is never merged into)."""
        ...

    async def download(self, src: str, dst: Path, *, links: LinkPolicy = "drop") -> CopyRecord:
        """Copy a file or directory from the sandbox to the host through the safe copy
        (skillworks.sandbox.safe_copy): no link followed out of the sandbox, links dropped (or kept as
        links, `links="keep"`), special files skipped, sizes capped; the record says what was not
        copied. Missing `src` raises FileNotFoundError."""
        ...

    async def path_exists(self, path: str) -> bool: ...

    async def open_model_channel(self, channel: ModelChannel) -> None:
        """Make the gateway reachable at channel.base_url for the commands that follow."""
        ...

    async def close_model_channel(self) -> None: ...

    async def begin_agent_phase(self) -> None:
        """Make sure AGENT_LOG_DIR and AGENT_START_MARK exist before the agent's first command."""
        ...

    async def end_agent_phase(
        self, reset: Sequence[str] = (), upload: tuple[Path, str] | None = None, then: ExecRequest | None = None
    ) -> AgentPhaseEnd:
        """Make sure no process the agent started still runs (the verifier comes next), then say what
        the agent left, and empty the `reset` dirs as ``reset_dirs`` does (in one round trip where the
        backend can). Raises SandboxBroken when either cannot be ensured. `upload` (a host dir, and its
        destination, one of the `reset` dirs): a backend may also put it there in the same round trip,
        once the dir was emptied; ``uploaded`` says whether it did (else the caller uploads it). `then`
        (with `upload`): a backend may also run that command once the upload is in place;
        ``then_result`` is its result, or None when it did not run it (the caller runs it)."""
        ...

    async def reset_dirs(self, paths: Sequence[str]) -> None:
        """Make each path an empty directory that the verifier can write, whatever the agent did to
        it (its permissions, a symlink in its place). Raises SandboxBroken when that is impossible."""
        ...

    async def stop(self) -> None:
        """Tear everything down. Idempotent; safe to call after a failed start."""
        ...


class SandboxError(SkillworksError):
    """A sandbox operation failed in a way that is not the user's input (bad path, setup failure)."""


class SandboxBroken(SandboxError):
    """The agent left the sandbox unable to grade its work (processes that cannot be ended, /logs
    that cannot be reset). The trial is the agent's failure (failure mode ``sandbox_broken``), not
    an infrastructure error: see README, Security."""
