"""The `local` sandbox backend: bubblewrap (Linux), milliseconds to start.

Every exec is a fresh ``bwrap`` with the same file-system view (see ``_view``); the state lives in
host directories under the trial's scratch dir, so it persists between commands:

  <scratch>/sandbox/workspace -> the task's workdir (default /app), seeded from environment/
  <scratch>/sandbox/home      -> /home/agent ($HOME)
  <scratch>/sandbox/tmp       -> /tmp (private)
  <scratch>/sandbox/logs      -> /logs (with agent/ and verifier/)
  <scratch>/sandbox/mounts/N  -> every path uploaded outside those (e.g. /tests, /solution)

File system: an ALLOWLIST. The root is an empty read-only tmpfs; only the system dirs programs
need to run are bound from the host, read-only: /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32
and /etc, /opt (those that exist; symlinks such as ``/bin -> usr/bin`` are recreated), plus the
declared ``extra_ro_binds``, /proc, /dev and the directories above. Nothing else of the host
exists inside: not the repository or /work, not /root, /home, /var, /run, the host's /tmp, other
trials' dirs. ``hide_paths`` (and the task's own dirs) still get an empty tmpfs when they lie
inside an allowlisted dir (e.g. a task kept under /opt). Networking is off (``--unshare-net``)
unless the task's network mode is ``public``.

Uploads: an upload to a path that is already an uploaded mount (or lies inside one) REPLACES what
is there, so a /tests or /verifier the agent planted never survives into the verifier phase;
uploads into the workspace, home, /tmp and /logs merge. Uploads and downloads never follow a
symlink out of the sandbox (downloaded directories keep their symlinks as symlinks).

Model channel (``open_model_channel``); read the effective URL from ``model_channel_url``:

- no network (default): each exec also binds the gateway's unix socket at
  /run/skillworks/gateway.sock and the stdlib-only ``_forwarder.py`` at /run/skillworks/forwarder.py,
  and runs the command under it with the system ``python3`` (``-I -S``; the host's venv is never
  shown). The forwarder listens on 127.0.0.1:<channel.port> in the sandbox's own network namespace
  *before* it starts the command; nothing else can reach it.
- ``public``: the sandbox shares the host's network namespace, so a fixed port would collide
  between concurrent trials. The relay runs instead in this (host) process, on a free port picked
  when the channel opens (``ModelChannel.port`` is ignored), for as long as the channel is open.
  Known exposure: any process on the host can connect to that 127.0.0.1 port while the channel is
  open, and its calls are billed to this trial. Use the default no-network mode (or the container
  backend) when that matters.

Hardening: ``--cap-drop ALL`` (even uid 0 cannot unmount what hides the task's files),
``--disable-userns`` where bwrap supports it, and the mount plan is passed through ``--args FD``
so the sandbox's pid 1 command line shows no host paths.

Users: commands run as uid 1000 ("agent") in a user namespace, or as uid 0 with ``user="root"``;
either way they have no capabilities on the host and files they write belong to the invoking host
user. Where user namespaces are unavailable but bwrap works (setuid bwrap), `user` is ignored.

Host exposure: bwrap starts with an EMPTY environment (``/proc/1/environ`` holds nothing of the host),
a cgroup namespace, the forwarder bound from the scratch dir (no source path in mountinfo), and every
entry under /etc that is not world-readable masked (root-only files, visible when the host user is root).

Resource limits: the task's memory/cpus and ``pids_limit`` apply to every exec of the trial through a
cgroup, else rlimits (``_limits``); ``capabilities.resource_limits`` says whether all of them hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from skillworks.errors import SandboxUnavailable
from skillworks.sandbox._bwrap import AGENT_UID, BwrapProbe, find_bwrap, probe_bwrap
from skillworks.sandbox._forwarder import start_forwarder
from skillworks.sandbox._hostfs import (
    make_writable,
    root_only_entries,
    seed_ignore,
    unlink_colliding_symlinks,
    user_db,
)
from skillworks.sandbox._limits import DEFAULT_PIDS_LIMIT, LimitRequest, TrialLimits
from skillworks.sandbox._process import run_process, terminate
from skillworks.sandbox._view import VIRTUAL, Mount, SandboxView, is_within, norm
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
from skillworks.sandbox.safe_copy import (
    CopyRecord,
    LinkPolicy,
    copy_from_tar,
    no_link_below,
    note_skipped,
    place,
    write_host_tar,
)
from skillworks.tasks.model import NetworkPolicy, Task

ALLOWLIST_UNSUPPORTED = "allowlist network is not supported by the local sandbox; use --env container"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOME = "/home/agent"
GATEWAY_SOCKET = "/run/skillworks/gateway.sock"
FORWARDER = "/run/skillworks/forwarder.py"
FORWARDER_SOURCE = Path(__file__).with_name("_forwarder.py")
# the interpreter that runs the forwarder inside the sandbox: the system one, never the host's venv
SYSTEM_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
# host paths never shown to a sandbox: outside the default allowlist already (hiding them is then a
# no-op); kept so that a wider allowlist could never show them
ALWAYS_HIDDEN = (Path("/root"), Path("/home"), Path("/run"), Path("/var/run"))
# host dirs scanned for entries that are not world-readable, which are masked (see root_only_entries)
MASK_ROOT_ONLY_UNDER = (Path("/etc"),)

CAPABILITIES = SandboxCapabilities(
    backend="local", network_modes=frozenset({"no-network", "public"}), resource_limits=False
)


def _dirs_name(dirs: Mapping[str, str], target: str) -> str:
    """The scratch subdirectory that holds sandbox path `target`."""
    return next(name for name, t in dirs.items() if t == target)


def _remove_host_path(path: Path) -> None:
    """Delete a file, symlink (never followed) or directory tree of the sandbox's state."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, onerror=make_writable)


def link_target_bind(link: Path, view: SandboxView) -> Mount | None:
    """A read-only bind that makes host symlink `link` resolve inside the sandbox when it points
    out of the allowlist (e.g. /etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf)."""
    if not link.is_symlink():
        return None
    target = os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link)))
    real = Path(os.path.realpath(link))
    if view.host_visible(target) or not real.is_file():
        return None
    return Mount(target, "ro", real)


def check_task_supported(task: Task, network: NetworkPolicy | None = None) -> None:
    """Raise SandboxUnavailable when the local backend cannot run `task` as specified."""
    if task.environment.needs_image:
        raise SandboxUnavailable(
            f"task {task.id} needs a container image (environment/Dockerfile); run it with --env container"
        )
    if (network or task.environment.network).mode == "allowlist":
        raise SandboxUnavailable(ALLOWLIST_UNSUPPORTED)


def preflight(
    task: Task | None = None,
    *,
    bwrap_path: str | Path | None = None,
    network: NetworkPolicy | None = None,
    **_options: object,
) -> None:
    """Fail early, with the one-line reason, if the local backend cannot run `task` here:
    bubblewrap missing or unusable, a task that needs an image, an allowlist network.
    Accepts (and ignores) the other LocalSandbox options so callers can pass the same dict."""
    if task is not None:
        check_task_supported(task, network)
    probe_bwrap(find_bwrap(bwrap_path))


class LocalSandbox:
    """A bubblewrap sandbox for one trial. See the module docstring for the layout."""

    capabilities = CAPABILITIES

    def __init__(
        self,
        task: Task,
        scratch_dir: Path,
        *,
        extra_ro_binds: Sequence[tuple[Path, str]] = (),
        network: NetworkPolicy | None = None,
        hide_paths: Sequence[Path] = (),
        bwrap_path: str | Path | None = None,
        keep_scratch: bool = False,
        run_id: str | None = None,
        strip_task_skills: bool = True,
        pids_limit: int | None = DEFAULT_PIDS_LIMIT,
    ) -> None:
        # run_id and strip_task_skills are accepted for parity with other backends: environment/skills
        # is never seeded into the local workspace, whatever the condition.
        self.task = task
        self.workdir = norm(task.environment.workdir)
        self.home = HOME
        self.network = network or task.environment.network
        self.root = Path(scratch_dir).absolute() / "sandbox"
        self._scratch_dir = Path(scratch_dir).absolute()
        self._bwrap_path = bwrap_path
        self._bwrap: str | None = None
        self._userns = True
        self._probe = BwrapProbe(userns=True, disable_userns=False)
        self._keep = keep_scratch
        self._extra_ro = [(Path(src).absolute(), norm(dst)) for src, dst in extra_ro_binds]
        self._hide = [*hide_paths]
        self._channel: ModelChannel | None = None  # as requested
        self._effective_channel: ModelChannel | None = None  # as served (public mode: another port)
        self._relay: asyncio.Server | None = None  # public mode: the host-side relay
        self._python: str | None = None
        self._running: set[asyncio.subprocess.Process] = set()
        self._mount_count = 0
        self._started = False
        self._created_root = False
        self._stopped = False
        self.view = SandboxView()
        resources = task.environment.resources
        self._limit_request = LimitRequest(resources.memory_mb, resources.cpus, pids_limit)
        self.limits: TrialLimits | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        if self._started:
            return
        check_task_supported(self.task, self.network)
        self._bwrap = find_bwrap(self._bwrap_path)
        self._probe = await asyncio.to_thread(probe_bwrap, self._bwrap)
        self._userns = self._probe.userns
        await asyncio.to_thread(self._prepare)
        self.limits = await asyncio.to_thread(TrialLimits.create, self._limit_request)
        self.capabilities = SandboxCapabilities(
            CAPABILITIES.backend, CAPABILITIES.network_modes, resource_limits=not self.limits.not_enforced
        )
        self._started = True

    def _prepare(self) -> None:
        if self.root.exists():
            raise SandboxError(f"scratch dir already holds a sandbox: {self.root}")
        dirs = {"workspace": self.workdir}  # a workdir of /tmp, /logs or $HOME is the workspace itself
        dirs.update({name: t for name, t in (("home", HOME), ("tmp", "/tmp"), ("logs", "/logs")) if t != self.workdir})
        self.root.mkdir(parents=True)
        self._created_root = True
        for name in dirs:
            (self.root / name).mkdir()
        logs = self.root / _dirs_name(dirs, "/logs")
        (logs / "agent").mkdir(exist_ok=True)
        (logs / "verifier").mkdir(exist_ok=True)
        (self.root / _dirs_name(dirs, "/tmp")).chmod(0o1777)
        env_dir = self.task.environment.dir
        if env_dir is not None and env_dir.is_dir():
            shutil.copytree(
                env_dir,
                self.root / "workspace",
                symlinks=True,
                ignore=seed_ignore(env_dir),  # type: ignore[arg-type]
                dirs_exist_ok=True,
            )
        view = self.view
        view.add(Mount("/proc", "special"))
        view.add(Mount("/dev", "special"))
        for name, target in dirs.items():
            view.add(Mount(target, "rw", self.root / name))
        for src, dst in self._extra_ro:
            if not src.exists():
                raise SandboxError(f"extra read-only bind source does not exist: {src}")
            view.add(Mount(dst, "ro", src))
        if self.network.mode == "public":  # name resolution, when the host keeps it under /run
            resolv = link_target_bind(Path("/etc/resolv.conf"), view)
            if resolv is not None:
                view.add(resolv)
        for hidden in sorted(self._hidden_paths(), key=lambda p: len(p.parts)):
            view.hide(hidden)
        self._mask_root_only()
        # the forwarder is bound from the scratch dir, not from this package's source tree: the
        # sandbox's mountinfo then names no path of the installation
        shutil.copy2(FORWARDER_SOURCE, self.root / "forwarder.py")
        if self._userns:
            etc = self.root / "etc"
            etc.mkdir()
            (etc / "passwd").write_text(
                user_db(Path("/etc/passwd"), f"agent:x:{AGENT_UID}:{AGENT_UID}:agent:{HOME}:/bin/bash", 2)
            )
            (etc / "group").write_text(user_db(Path("/etc/group"), f"agent:x:{AGENT_UID}:", 2))
            view.add(Mount("/etc/passwd", "ro", etc / "passwd"))
            view.add(Mount("/etc/group", "ro", etc / "group"))

    def _mask_root_only(self) -> None:
        """Files and dirs that only root may read (shadow, gshadow, ssl/private...) are masked: an
        empty file or an empty directory in their place."""
        empty = self.root / "masked-empty"
        for top in MASK_ROOT_ONLY_UNDER:
            for path, is_dir in root_only_entries(top):
                if self.view.lookup(str(path)) is not None:
                    continue  # already decided by a mount (e.g. hidden, or /etc/passwd)
                if is_dir:
                    self.view.hide(path)
                else:
                    empty.touch(mode=0o444)
                    self.view.add(Mount(str(path), "ro", empty))

    def _hidden_paths(self) -> list[Path]:
        task = self.task
        paths = [*ALWAYS_HIDDEN, Path(tempfile.gettempdir()), self._scratch_dir, task.root]
        with contextlib.suppress(RuntimeError, KeyError):
            paths.append(Path.home())
        for script in (task.verifier, task.oracle):
            if script is not None:
                paths.append(script.dir)
        if task.environment.dir is not None:
            paths.append(task.environment.dir)
        paths.extend(skill.root for skill in task.skills)
        paths.extend(self._hide)
        return [p.absolute() for p in paths]

    async def stop(self) -> None:
        """Kill running commands and delete this sandbox's own state (``<scratch>/sandbox``).
        Nothing outside it is touched: symlinks the agent left are removed, never followed."""
        if self._stopped:
            return
        self._stopped = True
        await self.close_model_channel()
        for proc in list(self._running):
            await terminate(proc)
        if self.limits is not None:
            await asyncio.to_thread(self.limits.close)
        if not self._keep and self._created_root:
            await asyncio.to_thread(shutil.rmtree, self.root, onerror=make_writable)

    # --- exec --------------------------------------------------------------------------------
    def _require_started(self) -> None:
        if not self._started or self._stopped:
            raise SandboxError("the local sandbox is not running (call start() first)")

    def bwrap_argv(self, *, cwd: str | None, env: Mapping[str, str] | None, user: str | None) -> list[str]:
        """The bwrap command line (without the command itself) for one exec."""
        self._require_started()
        assert self._bwrap is not None
        argv = [self._bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
        argv.append("--unshare-cgroup-try")  # /proc/self/cgroup and mountinfo show no host cgroup path
        argv += ["--unshare-uts", "--hostname", "sandbox"]
        if self.network.mode != "public":
            argv.append("--unshare-net")
        if self._userns:
            uid = 0 if user == "root" else AGENT_UID
            argv += ["--unshare-user", "--uid", str(uid), "--gid", str(uid)]
            if self._probe.disable_userns:
                argv.append("--disable-userns")
        # no capabilities, even as uid 0: a capable process could unmount what hides the task's files
        argv += ["--cap-drop", "ALL"]
        view = self.view
        channel = self._channel
        if channel is not None and self._relay is None:
            view = self._channel_view(channel)
        argv += view.bwrap_mount_args()
        argv += ["--chdir", norm(cwd) if cwd else self.workdir, "--clearenv"]
        base = {"PATH": DEFAULT_PATH, "HOME": HOME, "LANG": "C.UTF-8", "TERM": "xterm", "TMPDIR": "/tmp"}
        base["USER"] = base["LOGNAME"] = "root" if user == "root" and self._userns else "agent"
        for key, value in {**base, **(env or {})}.items():
            argv += ["--setenv", key, value]
        return argv

    def _channel_view(self, channel: ModelChannel) -> SandboxView:
        view = self.view.copy()
        view.add(Mount(GATEWAY_SOCKET, "rw", Path(channel.socket_path).absolute()))
        view.add(Mount(FORWARDER, "ro", self.root / "forwarder.py"))
        return view

    def _forwarder_argv(self, channel: ModelChannel) -> list[str]:
        assert self._python is not None
        listen = f"127.0.0.1:{channel.port}"
        return [self._python, "-I", "-S", FORWARDER, "--listen", listen, "--unix", GATEWAY_SOCKET, "--"]

    def _sandbox_python(self) -> str:
        """The system python3 as the sandbox sees it (it runs the forwarder)."""
        for candidate in SYSTEM_PYTHONS:
            located = self.view.locate(candidate)
            if isinstance(located, Path) and located.is_file() and os.access(located, os.X_OK):
                return candidate
        raise SandboxError(
            "the local sandbox's model channel needs a system python3 (one of "
            f"{', '.join(SYSTEM_PYTHONS)}) to run its forwarder: install python3 on the host"
        )

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
        """Run `cmd` in a fresh bwrap over this sandbox's state. `user` is None/"agent" (uid 1000)
        or "root" (uid 0 inside the user namespace)."""
        if user not in (None, "agent", "root"):
            raise SandboxError(f"the local sandbox runs commands as 'agent' or 'root', not {user!r}")
        argv = self.bwrap_argv(cwd=cwd, env=env, user=user)
        inner = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if not inner:
            raise SandboxError("empty command")
        if self._channel is not None and self._relay is None:
            inner = [*self._forwarder_argv(self._channel), *inner]
        # the arguments go through a file descriptor: the sandbox's pid 1 is bwrap, and its command
        # line (mount sources on the host, environment values) is none of the agent's business
        with tempfile.TemporaryFile(dir=self.root) as args_file:
            args_file.write(b"".join(a.encode() + b"\0" for a in argv[1:]))
            args_file.flush()
            args_file.seek(0)
            fd = args_file.fileno()
            return await run_process(
                [argv[0], "--args", str(fd), "--", *inner],  # bwrap wants the command itself here
                timeout=timeout,
                stdout_path=stdout_path,
                running=self._running,
                pass_fds=(fd,),
                env={},  # bwrap itself (the sandbox's pid 1) holds nothing of the host's environment
                preexec_fn=self.limits.preexec if self.limits is not None else None,
            )

    # --- phases ------------------------------------------------------------------------------
    async def begin_agent_phase(self) -> None:
        await self.exec(f"mkdir -p {AGENT_LOG_DIR} && touch {AGENT_START_MARK}", timeout=30)

    async def end_agent_phase(
        self, reset: Sequence[str] = (), upload: tuple[Path, str] | None = None, then: ExecRequest | None = None
    ) -> AgentPhaseEnd:
        """Every exec runs in its own pid namespace, which dies with the exec: nothing of the agent
        outlives its commands. Commands still running (e.g. an agent cancelled mid-command) are killed.
        `upload` and `then` are left to the caller (an upload is a host-side copy here and an exec a
        process start: no round trip to save)."""
        for proc in list(self._running):
            await terminate(proc)
        found = await self.exec(f"find {self.workdir} -newer {AGENT_START_MARK} -type f -print -quit", timeout=60)
        if reset:
            await self.reset_dirs(reset)
        # an exec is milliseconds here: the download itself says whether there are logs
        return AgentPhaseEnd(workspace_changed=bool(found.stdout.strip()), agent_logs=True)

    async def reset_dirs(self, paths: Sequence[str]) -> None:
        """Empty each dir from the host side: the agent's permissions (chmod 555) or symlinks do not
        matter, since the host user owns every file of the sandbox's state."""
        self._require_started()
        for path in paths:
            try:
                await asyncio.to_thread(self._reset_dir, norm(path))
            except (OSError, SandboxError) as exc:
                raise SandboxBroken(f"cannot reset {path} for the verifier: {exc}") from exc

    def _reset_dir(self, path: str) -> None:
        target = self._writable_host_path(path, is_dir=True)
        for parent in target.parents:  # a `chmod 555 /logs` of the agent: the owner takes write back
            if not is_within(str(parent), str(self.root)) or parent == self.root:
                break
            if not parent.is_symlink() and parent.is_dir():
                parent.chmod(parent.stat().st_mode | 0o700)
        _remove_host_path(target)
        target.mkdir(parents=True)

    async def changed_paths(self) -> list[str]:
        """Every file, link or special file in the sandbox's writable dirs newer than the agent phase's
        start mark (the workspace, $HOME, /tmp, uploaded dirs; /logs left out), as sandbox paths."""
        self._require_started()
        return await asyncio.to_thread(self._changed_paths)

    def _changed_paths(self) -> list[str]:
        mark = self.view.host_path(AGENT_START_MARK)
        since = os.lstat(mark).st_mtime if isinstance(mark, Path) and os.path.lexists(mark) else 0.0
        changed: list[str] = []
        for mount in self.view.mounts:
            if mount.kind != "rw" or mount.source is None or is_within(mount.target, "/logs"):
                continue
            if not mount.source.is_dir() or mount.source.is_symlink():
                continue
            for dirpath, dirnames, filenames in os.walk(mount.source):
                for entry in [*filenames, *[d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]]:
                    host = os.path.join(dirpath, entry)
                    if os.lstat(host).st_mtime > since:
                        rel = os.path.relpath(host, mount.source)
                        changed.append(norm(f"{mount.target}/{rel}"))
        return sorted(changed)

    # --- model channel -----------------------------------------------------------------------
    async def open_model_channel(self, channel: ModelChannel) -> None:
        """Make the gateway reachable for the commands that follow, at ``model_channel_url``
        (== channel.base_url except in ``public`` mode, where the port is picked here)."""
        self._require_started()
        if not Path(channel.socket_path).exists():
            raise SandboxError(f"model gateway socket does not exist: {channel.socket_path}")
        await self.close_model_channel()
        if self.network.mode == "public":
            # the host's network namespace: a relay in this process on a free port, per sandbox
            relay = await start_forwarder("127.0.0.1", 0, str(Path(channel.socket_path).absolute()))
            port = int(relay.sockets[0].getsockname()[1])
            self._relay = relay
            self._effective_channel = ModelChannel(channel.socket_path, port)
        else:
            self._python = await asyncio.to_thread(self._sandbox_python)
            self._effective_channel = channel
        self._channel = channel

    @property
    def model_channel(self) -> ModelChannel | None:
        """The open model channel as served (its port is the one to use), or None."""
        return self._effective_channel

    @property
    def model_channel_url(self) -> str | None:
        """The gateway's base URL inside the sandbox while a model channel is open, else None."""
        return None if self._effective_channel is None else self._effective_channel.base_url

    async def close_model_channel(self) -> None:
        self._channel = self._effective_channel = None
        relay, self._relay = self._relay, None
        if relay is not None:
            relay.close()
            close_clients = getattr(relay, "close_clients", None)  # Python >= 3.13
            if close_clients is not None:
                close_clients()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(relay.wait_closed(), 2)

    # --- files -------------------------------------------------------------------------------
    async def path_exists(self, path: str) -> bool:
        self._require_started()
        return await asyncio.to_thread(self.view.exists, path)

    async def upload(self, src: Path, dst: str, *, replace: bool = False) -> None:
        self._require_started()
        if not src.exists():
            raise FileNotFoundError(src)
        await asyncio.to_thread(self._upload, Path(src), norm(dst), replace)

    def _upload(self, src: Path, dst: str, replace: bool = False) -> None:
        target = self._writable_host_path(dst, is_dir=src.is_dir())
        if target.is_symlink():
            target.unlink()
        elif replace and target.exists():
            _remove_host_path(target)
        if src.is_dir():
            unlink_colliding_symlinks(src, target)
            shutil.copytree(src, target, symlinks=True, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)

    def _is_upload_mount(self, mount: Mount) -> bool:
        mounts = self.root / "mounts"
        return mount.kind == "rw" and mount.source is not None and mount.source.parent == mounts

    def _drop_upload_mounts(self, dst: str) -> None:
        """Forget the uploaded mounts at or below `dst` and delete what they held."""
        for mount in self.view.mounts:
            if is_within(mount.target, dst) and self._is_upload_mount(mount):
                self.view.remove(mount.target)
                assert mount.source is not None
                _remove_host_path(mount.source)

    def _writable_host_path(self, dst: str, *, is_dir: bool) -> Path:
        """Where on the host an upload to sandbox `dst` goes; adds a new mount when needed. What
        an earlier upload put at `dst` (or an agent planted inside an uploaded dir) is removed."""
        mount = self.view.lookup(dst)
        if mount is not None and mount.target == dst and self._is_upload_mount(mount):
            self._drop_upload_mounts(dst)  # uploaded before (or planted by the agent): start afresh
            mount = self.view.lookup(dst)
        if mount is not None and mount.kind == "rw":
            assert mount.source is not None
            rel = os.path.relpath(dst, mount.target)
            host = mount.source if rel == "." else mount.source / rel
            self._check_no_symlink_escape(mount.source, host if rel == "." else host.parent)
            if rel != "." and self._is_upload_mount(mount):
                _remove_host_path(host)  # inside an uploaded dir: replace, never merge
            return host
        if mount is not None and mount.kind in ("ro", "special"):
            raise SandboxError(f"cannot upload to {dst}: {mount.target} is read-only in the local sandbox")
        point = self.view.creation_point(dst)
        if point is None:
            existing = self.view.host_path(dst)
            if mount is not None and existing is VIRTUAL:
                point = dst  # a tmpfs directory (e.g. /run): bind a fresh directory over it
            elif existing is VIRTUAL:
                point = dst  # a directory of the root tmpfs holding other mounts (e.g. /home)
            elif mount is None and not is_dir and Path(dst).is_file():
                point = dst  # replace a host file, e.g. /etc/hosts
            else:
                raise SandboxError(f"cannot upload to {dst}: it is a directory of the read-only host root")
        self._drop_upload_mounts(point)  # they would survive, deeper, inside the new mount
        self._mount_count += 1
        host_root = self.root / "mounts" / str(self._mount_count)
        if point == dst and not is_dir:
            host_root.parent.mkdir(parents=True, exist_ok=True)
            self.view.add(Mount(point, "rw", host_root))
            return host_root
        host_root.mkdir(parents=True)
        self.view.add(Mount(point, "rw", host_root))
        rel = os.path.relpath(dst, point)
        return host_root if rel == "." else host_root / rel

    @staticmethod
    def _check_no_symlink_escape(root: Path, path: Path) -> None:
        real_root = os.path.realpath(root)
        probe = path
        while not probe.exists() and probe != root:
            probe = probe.parent
        real = os.path.realpath(probe)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise SandboxError(f"refusing to write through a symlink that leaves the sandbox: {path}")

    async def download(self, src: str, dst: Path, *, links: LinkPolicy = "drop") -> CopyRecord:
        """Copy sandbox `src` to host `dst` (a directory merges into an existing one) through the safe
        copy (skillworks.sandbox.safe_copy): no link is followed, not even `src` itself or one of its
        parents inside the sandbox's writable dirs (a `/logs/agent` made a link to `/etc` copies
        nothing of the host's /etc); links dropped (or kept as links with `links="keep"`), special
        files skipped, sizes capped; what was not copied is in the returned record."""
        self._require_started()
        record = await asyncio.to_thread(self._download, norm(src), Path(dst), links)
        note_skipped(record, Path(dst))
        return record

    def _download(self, src: str, dst: Path, links: LinkPolicy) -> CopyRecord:
        host = self.view.host_path(src)
        mount = self.view.lookup(src)
        if not isinstance(host, Path) or not (host.exists() or host.is_symlink()):
            raise FileNotFoundError(f"no such path in the sandbox: {src}")
        source = mount.source if mount is not None and mount.kind == "rw" else None
        if source is not None and (not no_link_below(source, host) or (host.is_symlink() and host != source)):
            record = CopyRecord()
            record.skip(src, "is a link, or lies below one (not followed)")
            return record
        name = PurePosixPath(src).name or "root"
        dst.parent.mkdir(parents=True, exist_ok=True)
        staging = dst.parent / f".{dst.name}.skillworks-{uuid.uuid4().hex[:8]}"
        try:
            with tempfile.TemporaryFile(dir=self.root) as stream:
                record = write_host_tar(host, stream, arcname=name)
                stream.seek(0)
                record.merge(copy_from_tar(stream, staging, root_name=name, links=links, shown_as=src))
            if staging.exists() or staging.is_symlink():
                place(staging, dst)
        finally:
            if staging.exists() or staging.is_symlink():
                _remove_host_path(staging)
        return record
