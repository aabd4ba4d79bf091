"""ContainerSandbox: one fresh container per trial, driven through the docker or podman CLI.

Life of a trial's container::

    start()   build the image once per content hash (cache hit: in memory, or one inspect), then
              `run -d` a container that only sleeps (after making the agent phase's log dir and
              start mark: begin_agent_phase needs no round trip), labelled with the run and the driver pid,
              with the task's cpus/memory and network policy; nothing of the task directory
              (tests, solution) is in it: the verifier and oracle are uploaded later
    exec()    `<cli> exec` per command; a timeout kills every process the command started
    upload()  a tar stream into `<cli> cp - <container>:/` (parents created, one call, no tar or
              shell needed in the image); replace=True: one `exec` as root that removes the
              destination and extracts the stream (rm + cp when the image has no tar)
    download() `<cli> cp`
    stop()    `<cli> rm -f` (idempotent), also on SIGINT/SIGTERM via container_session and at exit

The model channel: a private host directory holding the static forwarder (see helper.py) is
mounted read-only at /run/skillworks; `open_model_channel` puts a relay socket for the gateway
there and runs the forwarder in the container on 127.0.0.1:<port>. It works under
`--network none`. The `allowlist` policy uses the same path to an egress proxy (egress.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import IO

from skillworks._aio import spawn
from skillworks.errors import SandboxUnavailable, UserError
from skillworks.results import ImageInfo
from skillworks.sandbox._process import await_exit, collect_output, kill_process, wait_or_kill
from skillworks.sandbox.base import (
    AGENT_LOG_DIR,
    AGENT_START_MARK,
    AgentPhaseEnd,
    ExecRequest,
    ExecResult,
    ModelChannel,
    SandboxBroken,
    SandboxCapabilities,
    SandboxError,
)
from skillworks.sandbox.container._procs import (
    AFTER_AGENT_SCRIPT,
    CONTAINER_INIT,
    END_AGENT_SCRIPT,
    EXEC_MARK,
    KILL_GRACE_SEC,
    KILL_SCRIPT,
    NO_TAR_EXIT,
    NOT_FOUND_RE,
    REPLACE_UPLOAD_SCRIPT,
    THEN_AFTER_RESET,
    THEN_CMD_VAR,
    THEN_CWD_VAR,
    THEN_MARKER,
    THEN_PREFIX,
    UPLOAD_AFTER_RESET,
    ZOMBIE_LIMIT,
    end_forwarder,
    missing_executable,
    stream_copy,
    write_tar,
)
from skillworks.sandbox.container.cleanup import REGISTRY, channel_dir_prefix, container_labels, current_run_id
from skillworks.sandbox.container.egress import EGRESS_PORT, EgressProxy
from skillworks.sandbox.container.helper import (
    FORWARDER_IN_CONTAINER,
    FORWARDER_NAME,
    HELPER_MOUNT_DIR,
    forwarder_binary,
)
from skillworks.sandbox.container.image import (
    CA_ENV_VARS,
    CA_MOUNT,
    ROOT_USERS,
    TaskImage,
    ensure_image,
    forget_image,
)
from skillworks.sandbox.container.options import ContainerOptions
from skillworks.sandbox.container.relay import UnixRelay
from skillworks.sandbox.container.runtime import CommandResult, ContainerRuntime, detect_runtime, run_command
from skillworks.sandbox.safe_copy import CopyRecord, LinkPolicy, note_skipped, place
from skillworks.tasks.model import NetworkPolicy, Task

log = logging.getLogger(__name__)

CAPABILITIES = SandboxCapabilities(
    backend="container", network_modes=frozenset({"no-network", "public", "allowlist"}), resource_limits=True
)
CHANNEL_SOCKET = "gateway.sock"  # the relay's socket, next to the forwarder in HELPER_MOUNT_DIR
SOCKET_DIR_MOUNT = "/run/skillworks-gateway"  # model_socket_dir, when given
EGRESS_SOCKET = "egress.sock"
_IMAGES_WITHOUT_BASH: set[str] = set()


class ContainerSandbox:
    """A container for one trial. See the module docstring."""

    capabilities = CAPABILITIES

    def __init__(
        self,
        task: Task,
        scratch_dir: Path,
        options: ContainerOptions | None = None,
        *,
        runtime: ContainerRuntime | None = None,
        network: NetworkPolicy | None = None,
        extra_ro_binds: Sequence[tuple[Path, str]] = (),
    ) -> None:
        self.task = task
        self.scratch_dir = Path(scratch_dir).absolute()
        self.options = options if options is not None else ContainerOptions.from_env()
        self.network = network or task.environment.network
        self.workdir = task.environment.workdir
        self.home = "/root"
        self.user = ""
        self.name: str | None = None
        self.image: TaskImage | None = None
        self.run_id = self.options.run_id or current_run_id()
        self._runtime = runtime
        self._extra_ro = [(Path(src).absolute(), dst) for src, dst in extra_ro_binds]
        self._channel_dir: Path | None = None
        self._forwarder: Path | None = None
        self._forwarder_error: SandboxUnavailable | None = None
        self._channel_proc: asyncio.subprocess.Process | None = None
        self._relay: UnixRelay | None = None
        self._egress: EgressProxy | None = None
        self._egress_proc: asyncio.subprocess.Process | None = None
        self._attempted = False
        self._started = False
        self._stopped = False

    # --- lifecycle -----------------------------------------------------------------------------
    async def __aenter__(self) -> ContainerSandbox:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def image_info(self) -> ImageInfo | None:
        """Where this trial's image came from (built, pulled or cached), for the trial result."""
        return self.image.info(self.options.image_registry) if self.image is not None else None

    @property
    def runtime(self) -> ContainerRuntime:
        if self._runtime is None:
            o = self.options
            self._runtime = detect_runtime(
                o.cli, global_flags=o.global_flags, run_flags=o.run_flags, build_flags=o.build_flags
            )
        return self._runtime

    async def start(self) -> None:
        if self._started:
            return
        if self._stopped:
            raise SandboxError("this container sandbox was stopped; create a new one per trial")
        self._attempted = True
        check_network(self.task, self.network)
        if self._runtime is None:
            await asyncio.to_thread(lambda: self.runtime)
        runtime = self.runtime
        o = self.options
        self.image = await ensure_image(runtime, self.task, o.build_options())
        self.user, self.home = self.image.user, self.image.home
        allowlist = self.network.mode == "allowlist"
        if o.model_channel or allowlist:
            self._channel_dir = await asyncio.to_thread(self._make_channel_dir)
        if allowlist:
            if self._forwarder is None:
                assert self._forwarder_error is not None
                raise self._forwarder_error
            assert self._channel_dir is not None
            self._egress = EgressProxy(self._channel_dir / EGRESS_SOCKET, self.network.allowed_hosts)
            await self._egress.start()
        self.name = f"skillworks-{_slug(self.run_id)[:32]}-{uuid.uuid4().hex[:10]}"
        argv = runtime.argv(
            "run",
            *self._run_args(),
            self.image.tag,
            "-c",
            CONTAINER_INIT,
            "sh",
            AGENT_LOG_DIR,
            AGENT_START_MARK,
            "" if self.user in ROOT_USERS else self.user,
        )
        REGISTRY.add(runtime, self.name)
        creating = asyncio.ensure_future(run_command(argv, timeout=300))
        try:
            result = await asyncio.shield(creating)
        except BaseException:
            # cancelled (Ctrl-C) while the runtime creates the container: let it finish, then remove
            with contextlib.suppress(BaseException):
                await creating
            await asyncio.shield(self.stop())
            raise
        if not result.ok:
            await self.stop()
            if "image not known" in result.stderr or "No such image" in result.stderr:
                forget_image(runtime, self.image.tag)
            raise SandboxError(f"cannot start the task container: {result.error_line()}")
        self._started = True
        if self._channel_dir is not None and self.user not in ROOT_USERS:
            await self._share_channel_dir()
        if self._egress is not None:
            try:
                self._egress_proc = await self._start_forwarder(EGRESS_PORT, f"{HELPER_MOUNT_DIR}/{EGRESS_SOCKET}")
            except BaseException:
                await asyncio.shield(self.stop())
                raise

    async def _share_channel_dir(self) -> None:
        """A non-root image user's forwarder must reach the channel dir (0700, ours): it becomes that
        uid's (rootful podman maps it 1:1), else traversable only (0711: no listing; its names are random)."""
        assert self._channel_dir is not None
        found = await self.exec("id -u", timeout=30)
        uid = found.stdout.strip()
        try:
            if not (found.ok and uid.isdigit()):
                raise PermissionError("uid unknown")
            os.chown(self._channel_dir, int(uid), -1)
        except OSError:
            self._channel_dir.chmod(0o711)

    def _make_channel_dir(self) -> Path:
        """A short private dir (unix socket paths are limited to 108 bytes) holding the forwarder
        and, once a channel is open, the relay's socket: one read-only mount for both."""
        channel_dir = Path(tempfile.mkdtemp(prefix=channel_dir_prefix()))
        REGISTRY.add_dir(channel_dir)
        try:
            binary = forwarder_binary()
        except SandboxUnavailable as exc:  # only the model channel needs it: fail there
            self._forwarder_error = exc
            return channel_dir
        target = channel_dir / FORWARDER_NAME
        try:
            os.link(binary, target)
        except OSError:
            shutil.copy2(binary, target)
        self._forwarder = target
        return channel_dir

    def _run_args(self) -> list[str]:
        assert self.name is not None
        # pid 1 runs as root whatever the image's USER (it makes /logs for that user; agent commands run
        # as the image's user through exec)
        args = ["-d", "--name", self.name, "--entrypoint", "/bin/sh", "--user", "0"]
        for key, value in container_labels(self.run_id, self.task.id).items():
            args += ["--label", f"{key}={value}"]
        args += list(self.runtime.run_flags)
        if self.network.mode in ("no-network", "allowlist"):
            args += ["--network", "none"]
        if self.network.mode == "allowlist":
            proxy = f"http://127.0.0.1:{EGRESS_PORT}"
            for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
                args += ["-e", f"{var}={proxy}"]
            args += ["-e", "NO_PROXY=localhost,127.0.0.1", "-e", "no_proxy=localhost,127.0.0.1"]
        resources = self.task.environment.resources
        if resources.cpus:
            args += ["--cpus", f"{resources.cpus:g}"]
        if resources.memory_mb:
            args += ["--memory", f"{resources.memory_mb}m", "--memory-swap", f"{resources.memory_mb}m"]
        ca = self.options.ca_bundle
        if ca is not None:
            if not ca.is_file():
                raise UserError("CA bundle not found", ca)
            args += ["-v", f"{ca.resolve()}:{CA_MOUNT}:ro"]
            for var in CA_ENV_VARS:
                args += ["-e", f"{var}={CA_MOUNT}"]
        if self._channel_dir is not None:
            args += ["-v", f"{self._channel_dir}:{HELPER_MOUNT_DIR}:ro"]
        if self.options.model_socket_dir is not None:
            args += ["-v", f"{Path(self.options.model_socket_dir).resolve()}:{SOCKET_DIR_MOUNT}:ro"]
        for src, dst in self._extra_ro:
            args += ["-v", f"{src}:{dst}:ro"]
        return args

    async def stop(self) -> None:
        """Remove the container. Idempotent; safe after a failed or cancelled start (and a no-op
        before start)."""
        if not self._attempted:
            return
        self._stopped = True
        with contextlib.suppress(Exception):
            await self.close_model_channel()
        egress_proc, self._egress_proc = self._egress_proc, None
        if egress_proc is not None:
            with contextlib.suppress(Exception):
                await end_forwarder(egress_proc)
        egress, self._egress = self._egress, None
        if egress is not None:
            with contextlib.suppress(Exception):
                await egress.stop()
        name, self.name = self.name, None
        self._started = False
        if name is not None:
            result = await run_command(self.runtime.remove_argv(name), timeout=120)
            if result.ok or "no such container" in result.stderr.lower() or "no container" in result.stderr:
                REGISTRY.discard(name)
            else:  # stays registered: the session or atexit hook tries again
                log.warning("could not remove container %s: %s", name, result.error_line())
        if self._channel_dir is not None:
            shutil.rmtree(self._channel_dir, ignore_errors=True)
            REGISTRY.discard_dir(self._channel_dir)
            self._channel_dir = None

    def _require_started(self) -> str:
        if not self._started or self.name is None:
            raise SandboxError("the container sandbox is not running (call start() first)")
        return self.name

    # --- exec ----------------------------------------------------------------------------------
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
        """Run `cmd` in the container (a string runs under bash, or sh when the image has no bash).
        `user` None or "agent" is the image's user. A timeout kills the whole process tree and
        returns timed_out=True (exit 124). With `stdout_path`, stdout streams to that host file."""
        name = self._require_started()
        if isinstance(cmd, str):
            no_bash = self.image is not None and self.image.tag in _IMAGES_WITHOUT_BASH
            inner = ["/bin/sh" if no_bash else "bash", "-c", cmd]
        else:
            inner = list(cmd)
        if not inner:
            raise SandboxError("empty command")
        mark = f"{EXEC_MARK}={uuid.uuid4().hex}"
        args = ["exec", "--workdir", cwd or self.workdir, "--env", mark]
        for key, value in (env or {}).items():
            args += ["--env", f"{key}={value}"]
        if user not in (None, "agent"):
            args += ["--user", str(user)]
        elif self.user not in ROOT_USERS:  # pid 1 runs as root: the agent's commands as the image's USER
            args += ["--user", self.user]
        result = await self._run_exec(self.runtime.argv(*args, name, *inner), mark, timeout, stdout_path)
        if inner[0] == "bash" and isinstance(cmd, str) and missing_executable(result, "bash"):
            # the image has no bash (alpine, busybox): the command never ran; run it with sh
            if self.image is not None:
                _IMAGES_WITHOUT_BASH.add(self.image.tag)
            inner[0] = "/bin/sh"
            result = await self._run_exec(self.runtime.argv(*args, name, *inner), mark, timeout, stdout_path)
        return result

    async def _run_exec(
        self,
        argv: list[str],
        mark: str,
        timeout: float | None,
        stdout_path: Path | None,
        stdin: IO[bytes] | None = None,
    ) -> ExecResult:
        started = time.monotonic()
        out_file = open(stdout_path, "wb") if stdout_path is not None else None  # noqa: SIM115
        try:
            proc = await spawn(
                *argv,
                stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except BaseException:
            if out_file is not None:
                out_file.close()
            raise
        readers = [
            asyncio.ensure_future(collect_output(proc.stdout, sink=out_file)),
            asyncio.ensure_future(collect_output(proc.stderr)),
        ]
        try:
            # cancelled: _kill_tree leaves nothing running in the container
            timed_out, stdout, stderr = await await_exit(
                proc, readers, timeout=timeout, kill=lambda: self._kill_tree(mark, proc), drain_timeout=None
            )
        finally:
            if out_file is not None:
                out_file.close()
        assert proc.returncode is not None
        code = 124 if timed_out else proc.returncode
        return ExecResult(code, stdout, stderr, timed_out=timed_out, duration_sec=time.monotonic() - started)

    async def _kill_tree(self, mark: str, proc: asyncio.subprocess.Process) -> None:
        if self.name is not None:
            kill = self.runtime.argv("exec", self.name, "/bin/sh", "-c", KILL_SCRIPT, "sh", mark)
            with contextlib.suppress(Exception):
                await run_command(kill, timeout=30)
        await wait_or_kill(proc, KILL_GRACE_SEC, lambda: kill_process(proc))

    # --- phases --------------------------------------------------------------------------------
    async def begin_agent_phase(self) -> None:
        """Nothing to do: the container's pid 1 made the log dir and the start mark when it started."""
        self._require_started()

    async def end_agent_phase(
        self, reset: Sequence[str] = (), upload: tuple[Path, str] | None = None, then: ExecRequest | None = None
    ) -> AgentPhaseEnd:
        """Kill every process in the container but its pid 1 (what the agent left running, e.g.
        ``nohup setsid``, included). When something survives, the agent's processes cannot even be
        listed (pids exhausted) or their zombies hold too many pids, restart the container (its
        files are kept); SandboxBroken when even that fails. The same round trip (as root, once
        nothing of the agent runs) finds whether the agent changed the workspace or left logs,
        empties the `reset` dirs (SandboxBroken when it cannot), with `upload` (a host dir and one of
        the `reset` dirs) extracts that dir there from a tar stream on the exec's stdin, and with
        `then` (run as root) runs that command next (``then_result``)."""
        name = self._require_started()
        args = ["sh", self.workdir, AGENT_START_MARK, AGENT_LOG_DIR, *reset]
        then_result: ExecResult | None = None
        with tempfile.TemporaryFile(prefix="skillworks-upload-") as archive:
            folded = upload is not None and upload[1] in reset and upload[1].startswith("/") and upload[1] != "/"
            if folded:
                assert upload is not None
                await asyncio.to_thread(write_tar, archive, Path(upload[0]), upload[1].lstrip("/"))
                archive.seek(0)
            if folded and then is not None and then.user in ("root", "0"):
                mark = f"{EXEC_MARK}={uuid.uuid4().hex}"
                exec_args = ["exec", "-i", "--user", "0", "--env", mark]
                for key, value in {**then.env, THEN_CMD_VAR: then.cmd, THEN_CWD_VAR: then.cwd}.items():
                    exec_args += ["--env", f"{key}={value}"]
                script = THEN_PREFIX + END_AGENT_SCRIPT + THEN_AFTER_RESET
                ran = await self._run_exec(
                    self.runtime.argv(*exec_args, name, "/bin/sh", "-c", script, *args),
                    mark,
                    then.timeout,
                    then.stdout_path,
                    stdin=archive,
                )
                own = ran.stderr.split("\n")
                if THEN_MARKER in own:  # the command ran: everything after the marker is its stderr
                    at = own.index(THEN_MARKER)
                    then_result = ExecResult(
                        ran.exit_code, ran.stdout, "\n".join(own[at + 1 :]), ran.timed_out, ran.duration_sec
                    )
                    own = own[:at]
                # only skillworks' own lines (a tool's warning on the same stream is not one of them)
                own = [
                    ln for ln in own if ln.split()[:1] in (["zombies"], ["alive"], ["changed"], ["reset"], ["uploaded"])
                ]
                code = 0 if then_result is not None else ran.exit_code
                result = CommandResult(tuple(), code, "\n".join(own), "" if then_result is not None else ran.stderr)
            elif folded:
                argv = self.runtime.argv(
                    "exec", "-i", "--user", "0", name, "/bin/sh", "-c", END_AGENT_SCRIPT + UPLOAD_AFTER_RESET, *args
                )
                result = await run_command(argv, input_file=archive, timeout=600)
            else:
                argv = self.runtime.argv("exec", "--user", "0", name, "/bin/sh", "-c", END_AGENT_SCRIPT, *args)
                result = await run_command(argv, timeout=120)
        lines = result.stdout.splitlines()
        words = lines[0].split() if lines else []
        clean = words[:1] == ["zombies"] and int(words[1]) <= ZOMBIE_LIMIT and len(lines) > 1
        if not clean:
            reason = result.stdout.strip() or result.error_line()
            log.info("container %s: restarting after the agent phase (%s)", name, reason)
            restarted = await run_command(self.runtime.argv("restart", "-t", "0", name), timeout=120)
            result = await run_command(
                self.runtime.argv("exec", "--user", "0", name, "/bin/sh", "-c", AFTER_AGENT_SCRIPT, *args), timeout=120
            )
            if not restarted.ok or result.returncode not in (0, 4):
                failure = restarted if not restarted.ok else result
                raise SandboxBroken(
                    f"the agent's processes could not be ended ({reason[:200]}) and the container could not be "
                    f"restarted: {failure.error_line()}"
                )
            lines = ["", *result.stdout.splitlines()]
        uploaded = folded and lines[-1:] == ["uploaded"]
        if uploaded:
            lines = lines[:-1]
        if reset and (result.returncode != 0 or lines[-1:] != ["reset"]):
            raise SandboxBroken(f"cannot reset {', '.join(reset)} for the verifier: {result.error_line()}")
        found = lines[1].split() if len(lines) > 1 else []
        ended = AgentPhaseEnd(
            workspace_changed=found[:2] == ["changed", "1"],
            agent_logs=found[2:4] != ["logs", "0"],
            uploaded=uploaded,
            then_result=then_result,
        )
        if self._egress_proc is not None:  # the egress forwarder was ended with everything else
            await end_forwarder(self._egress_proc)
            self._egress_proc = await self._start_forwarder(EGRESS_PORT, f"{HELPER_MOUNT_DIR}/{EGRESS_SOCKET}")
        return ended

    async def reset_dirs(self, paths: Sequence[str]) -> None:
        """Empty each dir as root (the agent's chmod cannot stop it); they belong to root, who runs
        the verifier, so an agent user other than root cannot write them."""
        name = self._require_started()
        script = (
            'rm -rf -- "$@" && mkdir -p -m 755 -- "$@" || exit 1; for d; do [ -z "$(ls -A -- "$d")" ] || exit 1; done'
        )
        argv = self.runtime.argv("exec", "--user", "0", name, "/bin/sh", "-c", script, "sh", *paths)
        result = await run_command(argv, timeout=120)
        if not result.ok:
            raise SandboxBroken(f"cannot reset {', '.join(paths)} for the verifier: {result.error_line()}")

    async def changed_paths(self) -> list[str]:
        """Every path of the container's file system the trial added, changed or deleted, as the runtime's
        `diff` lists them (directories that only hold a listed change left out)."""
        name = self._require_started()
        result = await run_command(self.runtime.argv("diff", name), timeout=120)
        if not result.ok:
            raise SandboxError(f"cannot list the container's changes: {result.error_line()}")
        paths = sorted({line[2:].strip() for line in result.stdout.splitlines() if line[:2] in ("A ", "C ", "D ")})
        return [p for i, p in enumerate(paths) if not (i + 1 < len(paths) and paths[i + 1].startswith(p + "/"))]

    # --- files ---------------------------------------------------------------------------------
    async def path_exists(self, path: str) -> bool:
        name = self._require_started()
        result = await run_command(
            self.runtime.argv("exec", name, "/bin/sh", "-c", 'test -e "$1"', "sh", path), timeout=60
        )
        if result.returncode not in (0, 1):
            raise SandboxError(f"cannot check {path} in the container: {result.error_line()}")
        return result.ok

    async def existing_paths(self, paths: Sequence[str]) -> set[str]:
        """Which of `paths` exist, in one round trip (the skills audit checks ~18 directories)."""
        name = self._require_started()
        if not paths:
            return set()
        script = 'for p in "$@"; do [ -e "$p" ] && printf "%s\\0" "$p"; done; exit 0'
        result = await run_command(self.runtime.argv("exec", name, "/bin/sh", "-c", script, "sh", *paths), timeout=60)
        if not result.ok:
            raise SandboxError(f"cannot check paths in the container: {result.error_line()}")
        return {p for p in result.stdout.split("\0") if p}

    async def upload(self, src: Path, dst: str, *, replace: bool = False) -> None:
        """Copy a host file or directory to `dst` (parents created; a directory merges into an
        existing one, unless `replace`: then what was at `dst` is removed first). Files are owned
        by root in the container."""
        name = self._require_started()
        src = Path(src)
        if not src.exists():
            raise FileNotFoundError(str(src))
        dest = PurePosixPath(dst)
        if not dest.is_absolute():
            dest = PurePosixPath(self.workdir) / dest
        # entries named by their full path from /, without entries for the ancestors: the runtime
        # creates missing parents and leaves existing ones (their owner and mode) alone
        arcname = str(dest).lstrip("/") or "."
        with tempfile.TemporaryFile(prefix="skillworks-upload-") as archive:
            await asyncio.to_thread(write_tar, archive, src, arcname)
            if replace and str(dest) != "/":
                archive.seek(0)
                script = ["/bin/sh", "-c", REPLACE_UPLOAD_SCRIPT, "sh", str(dest)]
                code, err = await self._feed(self.runtime.argv("exec", "-i", "--user", "0", name, *script), archive)
                if code == 0:
                    return
                if code != NO_TAR_EXIT:
                    raise SandboxError(f"upload of {src} to {dest} failed: {err}")
                removed = await run_command(
                    self.runtime.argv("exec", "--user", "0", name, "/bin/sh", "-c", 'rm -rf -- "$1"', "sh", str(dest)),
                    timeout=120,
                )
                if not removed.ok:
                    raise SandboxError(f"upload of {src} to {dest} failed: cannot remove it: {removed.error_line()}")
            archive.seek(0)
            code, err = await self._feed(self.runtime.argv("cp", "-", f"{name}:/"), archive)
        if code != 0:
            raise SandboxError(f"upload of {src} to {dest} failed: {err}")

    @staticmethod
    async def _feed(argv: list[str], archive: IO[bytes]) -> tuple[int, str]:
        """Run a runtime command with `archive` on its stdin: (exit code, its last stderr line)."""
        proc = await spawn(
            *argv,
            stdin=archive,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        _, err = await proc.communicate()
        assert proc.returncode is not None
        lines = err.decode(errors="replace").strip().splitlines()
        return proc.returncode, (lines[-1] if lines else f"exit {proc.returncode}")

    async def download(self, src: str, dst: Path, *, links: LinkPolicy = "drop") -> CopyRecord:
        """Copy `src` from the container to `dst` (a directory merges into an existing one) through the
        safe copy (skillworks.sandbox.safe_copy): a tar stream of `<runtime> cp <ctr>:<src> -`, links
        dropped (or kept as links with `links="keep"`), special files skipped, sizes capped; what was
        not copied is in the returned record (and in `<dst>.skipped.txt`)."""
        name = self._require_started()
        dst = Path(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        staging = dst.parent / f".{dst.name}.skillworks-{uuid.uuid4().hex[:8]}"
        argv = self.runtime.argv("cp", f"{name}:{src}", "-")
        root_name = PurePosixPath(src).name
        try:
            record, code, err = await asyncio.to_thread(stream_copy, argv, staging, root_name, links, src)
            if record is None:
                if NOT_FOUND_RE.search(err) or not await self.path_exists(src):
                    raise FileNotFoundError(f"{src} does not exist in the container")
                raise SandboxError(f"download of {src} failed: {err or f'exit {code}'}")
            if staging.exists() or staging.is_symlink():
                await asyncio.to_thread(place, staging, dst)
        finally:
            if staging.is_dir() and not staging.is_symlink():
                shutil.rmtree(staging, ignore_errors=True)
            elif staging.exists() or staging.is_symlink():
                staging.unlink()
        note_skipped(record, dst)
        return record

    # --- model channel -------------------------------------------------------------------------
    async def open_model_channel(self, channel: ModelChannel) -> None:
        """Start the forwarder: http://127.0.0.1:<port> in the container -> the host's socket."""
        self._require_started()
        await self.close_model_channel()
        if self._forwarder is None:
            raise self._forwarder_error or SandboxError(
                "this container was started with model_channel=False, so it has no model channel"
            )
        socket_path = Path(channel.socket_path)
        if not socket_path.exists():
            raise SandboxError(f"model gateway socket does not exist: {socket_path}")
        if self.options.model_socket_dir is not None:
            if socket_path.resolve().parent != Path(self.options.model_socket_dir).resolve():
                raise SandboxError(
                    f"model socket {socket_path} is not in model_socket_dir {self.options.model_socket_dir} "
                    "mounted at start"
                )
            inside = f"{SOCKET_DIR_MOUNT}/{socket_path.name}"
        else:
            assert self._channel_dir is not None
            self._relay = UnixRelay(self._channel_dir / CHANNEL_SOCKET, socket_path)
            await self._relay.start()
            inside = f"{HELPER_MOUNT_DIR}/{CHANNEL_SOCKET}"
        self._channel_proc = await self._start_forwarder(channel.port, inside)

    async def _start_forwarder(self, port: int, inside_socket: str) -> asyncio.subprocess.Process:
        """Run the static forwarder in the container (127.0.0.1:port -> inside_socket) and wait
        until it listens. It lives as long as the returned process's stdin stays open."""
        name = self._require_started()
        argv = self.runtime.argv("exec", "-i", name, FORWARDER_IN_CONTAINER, f"127.0.0.1:{port}", inside_socket)
        proc = await spawn(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
        except TimeoutError:
            line = b""
        if not line.startswith(b"ready"):
            await end_forwarder(proc)
            err = (await proc.stderr.read()).decode(errors="replace").strip().splitlines()
            raise SandboxError(f"the in-container forwarder did not start: {err[-1] if err else 'no output'}")
        return proc

    async def close_model_channel(self) -> None:
        proc, self._channel_proc = self._channel_proc, None
        if proc is not None:
            await end_forwarder(proc)
        relay, self._relay = self._relay, None
        if relay is not None:
            await relay.stop()


def _slug(value: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", value).strip("-.") or "run"


def check_network(task: Task, network: NetworkPolicy | None = None) -> None:
    """Refuse a network policy this backend cannot enforce (never fall back to public)."""
    policy = network or task.environment.network
    if policy.mode == "allowlist" and not [h for h in policy.allowed_hosts if h.strip()]:
        raise SandboxUnavailable("network_mode 'allowlist' needs a non-empty allowed_hosts list", task.root)
