"""Building a task's image once per content hash.

The tag is ``skillworks/env:<hash16>`` where the hash covers the Dockerfile *as built* (after
FROM mapping and skill stripping) and every file of the build context -- content, not the task's
name -- so tasks with identical environments share one image, a cache hit is one ``image inspect``
and an edit to any file rebuilds. Builds of one tag are serialised within a process, so concurrent
trials (of one task or of several identical ones) build it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillworks._aio import spawn
from skillworks._tempdirs import temp_prefix
from skillworks.errors import TaskError, UserError
from skillworks.results import ImageInfo, ImageSource
from skillworks.sandbox.container.build_leftovers import BUILD_OWNER_ARG, new_owner_token, stop_build
from skillworks.sandbox.container.dockerfile import SKILLS_DIR, DockerfilePlan, inject_build_args, plan_dockerfile
from skillworks.sandbox.container.image_eviction import touch_use
from skillworks.sandbox.container.registry import pull_image, push_image
from skillworks.sandbox.container.runtime import ContainerRuntime, run_command
from skillworks.tasks.model import Task

IMAGE_REPO = "skillworks/env"
CA_MOUNT = "/run/skillworks-host-ca.crt"
CA_ENV_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
_HASH_VERSION = b"skillworks-image-v1\0"
_LOG_TAIL_LINES = 3


class ImageBuildError(UserError):
    """The task's image could not be built (its Dockerfile, its base image or its build steps)."""


@dataclass(frozen=True)
class BuildOptions:
    image_map: Mapping[str, str] = field(default_factory=dict)
    strip_skills: bool = False
    force_build: bool = False
    ca_bundle: Path | None = None
    log_dir: Path | None = None  # where build logs go (default: the cache dir)
    registry: str | None = None  # pull before building, push after (see registry.py)
    registry_tls_verify: bool | None = None  # None: the runtime's configuration decides


@dataclass(frozen=True)
class TaskImage:
    tag: str
    content_hash: str
    built: bool  # False on a cache hit
    stripped_skill_copies: tuple[str, ...]  # COPY/ADD lines removed for this variant
    baked_skill_copies: tuple[str, ...]  # COPY/ADD lines that read skills/ (stripped or not)
    build_sec: float
    user: str = ""  # the image's USER ("" = root)
    home: str = "/root"  # $HOME of that user
    source: ImageSource = "cached"  # built here, pulled from the registry, or already here
    seconds: float = 0.0  # pulling or building, and pushing
    pushed: bool | None = None  # None: no push attempted
    registry_error: str | None = None  # why a pull or push failed

    def info(self, registry: str | None) -> ImageInfo:
        """What the trial result records about this image."""
        return ImageInfo(
            tag=self.tag,
            source=self.source,
            seconds=round(self.seconds, 3),
            registry=registry,
            pushed=self.pushed,
            registry_error=self.registry_error,
        )


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skillworks" / "container"


def _hash_context(context: Path, plan_text: str, exclude_skills: bool) -> str:
    digest = hashlib.sha256(_HASH_VERSION)
    digest.update(plan_text.encode())
    digest.update(b"\0strip" if exclude_skills else b"\0keep")
    for root, dirs, files in os.walk(context):
        rel_root = Path(root).relative_to(context)
        if exclude_skills and rel_root == Path("."):
            dirs[:] = [d for d in dirs if d != SKILLS_DIR]
            files = [f for f in files if f != SKILLS_DIR]
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if (Path(root) / d).is_symlink()]:
            path = Path(root) / name
            rel = (rel_root / name).as_posix()
            digest.update(b"\0F" + rel.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"L" + os.readlink(path).encode())
                continue
            digest.update(b"X" if os.access(path, os.X_OK) else b"-")
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()


def plan_task_image(task: Task, options: BuildOptions) -> tuple[Path, Path, DockerfilePlan, str]:
    """(context dir, Dockerfile, plan, content hash) for a task; TaskError when it has no Dockerfile."""
    env = task.environment
    dockerfile = env.dockerfile
    if dockerfile is None:
        raise TaskError("task has no Dockerfile, so the container backend cannot build it", task.root)
    if not dockerfile.is_file():
        raise TaskError("Dockerfile not found", dockerfile)
    context = env.dir or dockerfile.parent
    if not context.is_dir():
        raise TaskError("build context directory not found", context)
    text = dockerfile.read_text(encoding="utf-8", errors="replace")
    plan = plan_dockerfile(text, options.image_map, strip_skills=options.strip_skills)
    # the task's workspace exists in the image (runtimes do not create a missing --workdir)
    plan.text += f"WORKDIR {env.workdir}\n"
    return context, dockerfile, plan, _hash_context(context, plan.text, options.strip_skills)


_BUILD_LOCKS: dict[tuple[int, str], asyncio.Lock] = {}
_FORCE_BUILT: set[tuple[str, str]] = set()
_IN_REGISTRY: set[tuple[str, str, str]] = set()  # (cli, registry, tag) pulled from or pushed there


@contextlib.asynccontextmanager
async def _host_lock(path: Path, poll_sec: float = 0.2) -> AsyncIterator[None]:
    """An exclusive `flock` on `path`, waited for without blocking the event loop (and cancellable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(poll_sec)
        yield
    finally:
        os.close(fd)  # releases the lock


async def image_exists(runtime: ContainerRuntime, ref: str) -> bool:
    result = await run_command(runtime.argv("image", "inspect", "--format", "{{.Id}}", ref), timeout=60)
    return result.ok


ROOT_USERS = frozenset({"", "root", "0", "0:0", "root:root", "root:0", "0:root"})
_IMAGE_USERS: dict[tuple[str, str], tuple[str, str]] = {}


async def image_user(runtime: ContainerRuntime, ref: str) -> tuple[str, str] | None:
    """(USER, HOME) of an image, or None when it does not exist. HOME comes from the image's ENV,
    else /root for root, else the user's passwd entry (one throw-away container, cached)."""
    key = (runtime.cli, ref)
    if key in _IMAGE_USERS:
        return _IMAGE_USERS[key]
    result = await run_command(runtime.argv("image", "inspect", "--format", "{{json .Config}}", ref), timeout=60)
    if not result.ok:
        return None
    try:
        config = json.loads(result.stdout.strip().splitlines()[0]) or {}
    except (json.JSONDecodeError, IndexError):
        config = {}
    user = str(config.get("User") or "")
    env = dict(str(e).split("=", 1) for e in config.get("Env") or [] if "=" in str(e))
    home = env.get("HOME")
    if not home and user in ROOT_USERS:
        home = "/root"
    if not home:
        probe = await run_command(
            runtime.argv(
                "run",
                "--rm",
                *runtime.run_flags,
                "--network",
                "none",
                "--entrypoint",
                "/bin/sh",
                ref,
                "-c",
                'printf %s "$HOME"',
            ),
            timeout=120,
        )
        home = probe.stdout.strip() if probe.ok and probe.stdout.strip().startswith("/") else "/root"
    _IMAGE_USERS[key] = (user, home)
    return user, home


def forget_image(runtime: ContainerRuntime, ref: str) -> None:
    """Drop what this process remembers about an image (after it was removed behind our back)."""
    _IMAGE_USERS.pop((runtime.cli, ref), None)


async def ensure_image(runtime: ContainerRuntime, task: Task, options: BuildOptions) -> TaskImage:
    """Build the task's image unless this content hash is already here (or force_build). With a
    registry: pull it from there before building, push it there after building."""
    context, dockerfile, plan, content_hash = plan_task_image(task, options)
    tag = f"{IMAGE_REPO}:{content_hash[:16]}"
    stripped = tuple(plan.skill_copies) if options.strip_skills else ()
    lock = _BUILD_LOCKS.setdefault((id(asyncio.get_running_loop()), tag), asyncio.Lock())
    # one build per host and content hash: the asyncio lock serialises this loop's trials, the file lock the
    # other processes' (the workers of a Ray node, concurrent runs)
    async with lock, _host_lock(cache_dir() / "locks" / f"{runtime.cli}-{content_hash[:16]}.lock"):
        source: ImageSource = "cached"
        pushed: bool | None = None
        registry_error: str | None = None
        started = time.monotonic()
        # force_build rebuilds once per process, not once per trial
        forced = options.force_build and (runtime.cli, tag) not in _FORCE_BUILT
        found = None if forced else await image_user(runtime, tag)
        if found is None and options.registry and not forced:
            pulled, registry_error = await pull_image(runtime, options.registry, tag, options.registry_tls_verify)
            if pulled:
                source = "pulled"
                _IMAGE_USERS.pop((runtime.cli, tag), None)
                found = await image_user(runtime, tag)
                _IN_REGISTRY.add((runtime.cli, options.registry, tag))
        if found is None:
            await _build(runtime, task, context, dockerfile, plan, tag, options)
            if options.force_build:
                _FORCE_BUILT.add((runtime.cli, tag))
            source = "built"
            _IMAGE_USERS.pop((runtime.cli, tag), None)
            found = await image_user(runtime, tag)
            if found is None:
                raise ImageBuildError(f"image {tag} was built but cannot be inspected", dockerfile)
        if options.registry and (runtime.cli, options.registry, tag) not in _IN_REGISTRY:
            # built here, or found here (built before the registry was given): once per process
            why = await push_image(runtime, options.registry, tag, options.registry_tls_verify)
            pushed = why is None
            registry_error = why or registry_error
            if pushed:
                _IN_REGISTRY.add((runtime.cli, options.registry, tag))
        user, home = found
        touch_use(cache_dir(), runtime.cli, tag)  # what image eviction reads as its last use
        spent = time.monotonic() - started
        return TaskImage(
            tag,
            content_hash,
            source == "built",
            stripped,
            tuple(plan.skill_copies),
            spent if source == "built" else 0.0,
            user,
            home,
            source=source,
            seconds=spent if source != "cached" or pushed is not None else 0.0,
            pushed=pushed,
            registry_error=registry_error,
        )


async def _build(
    runtime: ContainerRuntime,
    task: Task,
    context: Path,
    dockerfile: Path,
    plan: DockerfilePlan,
    tag: str,
    options: BuildOptions,
) -> None:
    missing_bases = [b for b in dict.fromkeys(plan.base_images) if not await image_exists(runtime, b)]
    log_dir = options.log_dir or cache_dir() / "build-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{tag.replace('/', '_').replace(':', '_')}.log"
    with tempfile.TemporaryDirectory(prefix=temp_prefix("build")) as tmp:
        work = Path(tmp)
        build_context = context
        if options.strip_skills and (context / SKILLS_DIR).exists():
            build_context = work / "context"
            shutil.copytree(
                context,
                build_context,
                symlinks=True,
                ignore=lambda d, names: [SKILLS_DIR] if Path(d) == context else [],
            )
        text = plan.text
        args: list[str] = [
            "build",
            *runtime.build_flags,
            "-f",
            str(work / "Dockerfile"),
            "-t",
            tag,
            "--label",
            "skillworks.image=1",
            "--label",
            f"skillworks.task={task.id}",
        ]
        if options.ca_bundle is not None:
            args += _ca_build_args(runtime, options.ca_bundle)
            if runtime.kind == "podman":
                text = inject_build_args(text, CA_ENV_VARS)
        (work / "Dockerfile").write_text(text, encoding="utf-8")
        args.append(str(build_context))
        owner = new_owner_token()
        if runtime.kind == "podman":  # names this build's working containers (see build_leftovers)
            args[1:1] = ["--build-arg", f"{BUILD_OWNER_ARG}={owner}"]
        argv = runtime.argv(*args)
        timeout = task.environment.build_timeout_sec
        with open(log_path, "wb") as log:
            log.write(f"$ {shlex.join(argv)}\n".encode())
            log.flush()
            proc = await spawn(*argv, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
            try:
                returncode = await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                await stop_build(proc, runtime, owner, log_path)
                raise ImageBuildError(
                    f"image build timed out after {timeout:.0f}s (build_timeout_sec); log: {log_path}",
                    dockerfile,
                ) from None
            except BaseException:  # Ctrl-C / SIGTERM of the run: no build step, no working container left
                if proc.returncode is None:
                    await _uncancellable(stop_build(proc, runtime, owner, log_path))
                raise
    if returncode != 0:
        tail = _log_tail(log_path)
        if missing_bases:
            names = ", ".join(missing_bases)
            raise ImageBuildError(
                f"base image {names} is not available locally and could not be pulled ({tail}); "
                f"build or pull it, or map it with --image-map {missing_bases[0]}=<local image>",
                dockerfile,
            )
        raise ImageBuildError(f"image build failed (exit {returncode}): {tail}; full log: {log_path}", dockerfile)


async def _uncancellable(cleanup: Coroutine[Any, Any, object]) -> None:
    """Run `cleanup` to its end even when this task is cancelled again meanwhile (a second Ctrl-C, a
    scheduler cancelling its trials): a build stopped halfway leaves its working containers behind."""
    job = asyncio.ensure_future(cleanup)
    while not job.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(job)
    job.exception()  # retrieved: what could not be cleaned up is in the build log; the interruption goes on


def _ca_build_args(runtime: ContainerRuntime, ca_bundle: Path) -> list[str]:
    if not ca_bundle.is_file():
        raise UserError("CA bundle not found", ca_bundle)
    if runtime.kind != "podman":
        return []  # `docker build` cannot mount files; configure the daemon's CA instead
    args = ["-v", f"{ca_bundle.resolve()}:{CA_MOUNT}:ro"]
    for name in CA_ENV_VARS:
        args += ["--build-arg", f"{name}={CA_MOUNT}"]
    return args


def _log_tail(log_path: Path) -> str:
    """The last lines the build printed (not the command line the log starts with), shortened."""
    try:
        lines = [ln.strip() for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no build log"
    if lines and lines[0].startswith("$ "):
        lines = lines[1:]
    lines = [ln if len(ln) <= 300 else ln[:297] + "..." for ln in lines]
    return " | ".join(lines[-_LOG_TAIL_LINES:]) if lines else "the build printed nothing"
