"""The container runtime: which CLI (docker or podman), with which extra flags, and how to run it.

Hosts differ in what their runtime needs (ours: podman with ``--runtime runc
--cgroup-manager=cgroupfs`` and explicit ``--ulimit``s), so every extra flag is configuration,
never code: global flags go before the sub-command of *every* call, run flags into ``run``, build
flags into ``build``. Each can also come from the environment (``SKILLWORKS_CONTAINER_CLI``,
``SKILLWORKS_CONTAINER_GLOBAL_FLAGS``, ``SKILLWORKS_CONTAINER_RUN_FLAGS``,
``SKILLWORKS_CONTAINER_BUILD_FLAGS``; shell-quoted lists). For podman, the flags this host needs and
the user did not give are probed once per process (``host_flags``): a pip-installed skillworks works
without the Makefile's exports.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from skillworks._aio import spawn
from skillworks.errors import SandboxUnavailable
from skillworks.sandbox.base import SandboxError
from skillworks.sandbox.container.host_flags import explain_oci_error, merge_host_flags

RuntimeKind = Literal["docker", "podman"]
KNOWN_CLIS: tuple[RuntimeKind, ...] = ("docker", "podman")

ENV_CLI = "SKILLWORKS_CONTAINER_CLI"
ENV_GLOBAL_FLAGS = "SKILLWORKS_CONTAINER_GLOBAL_FLAGS"
ENV_RUN_FLAGS = "SKILLWORKS_CONTAINER_RUN_FLAGS"
ENV_BUILD_FLAGS = "SKILLWORKS_CONTAINER_BUILD_FLAGS"
# "1": use only the flags given, add none the host probe chose (host_flags)
ENV_NO_HOST_PROBE = "SKILLWORKS_CONTAINER_NO_HOST_PROBE"
_PROBE_TIMEOUT_SEC = 20.0


@dataclass(frozen=True)
class ContainerRuntime:
    """A container CLI and the extra flags this host needs."""

    cli: str  # executable name or path
    kind: RuntimeKind
    global_flags: tuple[str, ...] = ()
    run_flags: tuple[str, ...] = ()
    build_flags: tuple[str, ...] = ()

    def argv(self, *args: str) -> list[str]:
        """`<cli> <global flags> <args...>`."""
        return [self.cli, *self.global_flags, *args]

    def remove_argv(self, *containers: str) -> list[str]:
        """Force-remove containers without the stop grace period (the init ignores SIGTERM)."""
        if self.kind == "podman":
            return self.argv("rm", "-f", "-t", "0", *containers)
        return self.argv("rm", "-f", *containers)


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def error_line(self) -> str:
        """The runtime's own message, on one line (its last non-empty stderr line); an OCI start error
        whose cause is known becomes one line naming the cause and the flag that avoids it."""
        explained = explain_oci_error(self.stderr or "")
        if explained is not None:
            return explained
        lines = [line.strip() for line in (self.stderr or self.stdout).splitlines() if line.strip()]
        return lines[-1] if lines else f"exit status {self.returncode}"


def split_flags(value: str | None) -> tuple[str, ...]:
    return tuple(shlex.split(value)) if value else ()


def _kind_of(cli: str) -> RuntimeKind:
    """podman, or docker for everything else (docker-compatible CLIs such as nerdctl)."""
    return "podman" if Path(cli).name.startswith("podman") else "docker"


DOCKER_SOCKET = Path("/var/run/docker.sock")


def docker_socket_down(environ: Mapping[str, str], home: Path, socket_path: Path = DOCKER_SOCKET) -> str | None:
    """Why docker's default daemon cannot answer, found without running `docker` (its `version`
    probe is a process start and a round trip): its socket is missing or refuses connections. None
    when that cannot be told this way (DOCKER_HOST, a docker context, a socket that accepts or that
    we may not open): then the probe decides."""
    if environ.get("DOCKER_HOST") or environ.get("DOCKER_CONTEXT"):
        return None
    config = Path(environ.get("DOCKER_CONFIG") or home / ".docker") / "config.json"
    try:
        if "currentContext" in config.read_text(errors="replace"):
            return None
    except OSError:
        pass
    down = f"Cannot connect to the Docker daemon at unix://{socket_path}. Is the docker daemon running?"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2.0)
        try:
            sock.connect(str(socket_path))
        except (FileNotFoundError, ConnectionRefusedError):
            return down
        except OSError:
            return None
    return None


def _probe(runtime: ContainerRuntime) -> str | None:
    """None when the runtime answers, else the reason it does not."""
    if runtime.kind == "docker" and Path(runtime.cli).name == "docker" and not runtime.global_flags:
        down = docker_socket_down(os.environ, Path.home())
        if down is not None:
            return down
    argv = runtime.argv("version", "--format", "{{.Server.Version}}")
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_SEC, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        return f"{runtime.cli} is not installed"
    except subprocess.TimeoutExpired:
        return f"`{runtime.cli} version` did not answer within {_PROBE_TIMEOUT_SEC:.0f}s"
    if proc.returncode != 0 or not proc.stdout.strip():
        lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        return lines[0] if lines else f"`{runtime.cli} version` exited {proc.returncode}"
    return None


_DETECTED: dict[tuple[object, ...], ContainerRuntime] = {}


def detect_runtime(
    cli: str | None = None,
    *,
    global_flags: Sequence[str] | None = None,
    run_flags: Sequence[str] | None = None,
    build_flags: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ContainerRuntime:
    """Choose and check the container CLI. Explicit arguments win over the environment; without a
    CLI, docker is used when its daemon answers, else podman. Raises SandboxUnavailable (one line)
    when no runtime answers. Results are cached per process."""
    env = os.environ if environ is None else environ
    cli = cli or env.get(ENV_CLI) or None
    gflags = tuple(global_flags) if global_flags is not None else split_flags(env.get(ENV_GLOBAL_FLAGS))
    rflags = tuple(run_flags) if run_flags is not None else split_flags(env.get(ENV_RUN_FLAGS))
    bflags = tuple(build_flags) if build_flags is not None else split_flags(env.get(ENV_BUILD_FLAGS))
    key = (cli, gflags, rflags, bflags)
    if key in _DETECTED:
        return _DETECTED[key]
    candidates = [cli] if cli else [c for c in KNOWN_CLIS if shutil.which(c)]
    if not candidates:
        raise SandboxUnavailable(
            "no container runtime found: install podman or docker (or use the local sandbox)", "--env container"
        )
    reasons: list[str] = []
    for candidate in candidates:
        kind = _kind_of(candidate)
        flags = (gflags, rflags, bflags)
        if kind == "podman" and env.get(ENV_NO_HOST_PROBE) != "1":
            flags = merge_host_flags(candidate, gflags, rflags, bflags)  # probed once per process
        runtime = ContainerRuntime(candidate, kind, *flags)
        reason = _probe(runtime)
        if reason is None:
            _DETECTED[key] = runtime
            return runtime
        reasons.append(f"{candidate}: {reason}")
    raise SandboxUnavailable("container runtime unreachable (" + "; ".join(reasons) + ")", "--container-cli")


async def run_command(
    argv: Sequence[str],
    *,
    input_bytes: bytes | None = None,
    input_file: IO[bytes] | None = None,
    timeout: float | None = None,
) -> CommandResult:
    """Run one runtime command in its own session (a terminal's Ctrl-C reaches only skillworks, which
    then cleans up in order), its stdin `input_bytes`, or `input_file` (read from its current
    position), or nothing. A timeout or cancellation kills it."""
    stdin: IO[bytes] | int = asyncio.subprocess.DEVNULL
    if input_bytes is not None:
        stdin = asyncio.subprocess.PIPE
    elif input_file is not None:
        stdin = input_file
    proc = await spawn(
        *argv,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(input_bytes), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise SandboxError(f"`{shlex.join(argv[:4])} ...` did not finish within {timeout:.0f}s") from None
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            await asyncio.shield(proc.wait())
        raise
    assert proc.returncode is not None
    return CommandResult(tuple(argv), proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def run_command_sync(argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
    """Blocking variant for signal handlers, atexit and the `clean` command."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return CommandResult(tuple(argv), 124, "", f"timed out after {timeout:.0f}s")
    except FileNotFoundError as exc:
        return CommandResult(tuple(argv), 127, "", str(exc))
    return CommandResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr)
