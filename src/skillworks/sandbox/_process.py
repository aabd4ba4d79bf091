"""Run one sandbox command: capture or stream its output, and kill its whole tree on timeout."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from skillworks._aio import spawn
from skillworks.sandbox.base import ExecResult

OUTPUT_CAP_BYTES = 10 * 1024 * 1024
KILL_GRACE_SEC = 2.0


def _truncation_note(dropped: int) -> str:
    return f"\n[skillworks: output truncated, {dropped} more bytes not captured]\n"


async def collect_output(
    stream: asyncio.StreamReader | None, cap: int = OUTPUT_CAP_BYTES, sink: IO[bytes] | None = None
) -> str:
    """Read a pipe to the end: into `sink` (returns "") or into a string capped at `cap` bytes."""
    if stream is None:
        return ""
    chunks: list[bytes] = []
    kept = dropped = 0
    while True:
        data = await stream.read(65536)
        if not data:
            break
        if sink is not None:
            sink.write(data)
            sink.flush()
            continue
        room = cap - kept
        if room > 0:
            chunks.append(data[:room])
            kept += min(room, len(data))
        dropped += max(0, len(data) - max(room, 0))
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return text + _truncation_note(dropped) if dropped else text


def kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def kill_process(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL proc itself (not its group); a process already gone is fine."""
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def wait_or_kill(proc: asyncio.subprocess.Process, grace: float, kill: Callable[[], None]) -> None:
    """Give proc `grace` seconds to exit; if it lingers, call kill() and wait for it."""
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        kill()
        await proc.wait()


async def terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group, then SIGKILL it if it lingers. bwrap runs with
    --die-with-parent and its own pid namespace, so once bwrap dies every process inside dies."""
    if proc.returncode is not None:
        return
    kill_group(proc.pid, signal.SIGTERM)
    await wait_or_kill(proc, KILL_GRACE_SEC, lambda: kill_group(proc.pid, signal.SIGKILL))


async def await_exit(
    proc: asyncio.subprocess.Process,
    readers: Sequence[asyncio.Future[str]],
    *,
    timeout: float | None,
    kill: Callable[[], Awaitable[None]],
    drain_timeout: float | None,
) -> tuple[bool, str, str]:
    """Wait for proc (at most `timeout`), then for its (stdout, stderr) readers.

    On timeout, `await kill()` and report timed_out. Readers still open `drain_timeout` seconds
    after that are cancelled and give "" (None: wait for them). On cancellation or any error,
    kill() runs shielded, the readers are cancelled and the error propagates: no process is left.
    Returns (timed_out, stdout, stderr)."""
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await kill()
        if drain_timeout is None:
            stdout, stderr = await asyncio.gather(*readers)
        else:
            # the pipes close once every holder is dead; don't hang on a stray one
            done, pending = await asyncio.wait(readers, timeout=drain_timeout)
            for task in pending:
                task.cancel()
            stdout, stderr = (t.result() if t in done and not t.cancelled() else "" for t in readers)
    except BaseException:  # cancelled (Ctrl-C, trial torn down): leave no process behind
        await asyncio.shield(kill())
        for task in readers:
            task.cancel()
        raise
    return timed_out, stdout, stderr


async def run_process(
    argv: Sequence[str],
    *,
    timeout: float | None,
    stdout_path: Path | None = None,
    running: set[asyncio.subprocess.Process] | None = None,
    cap: int = OUTPUT_CAP_BYTES,
    pass_fds: Sequence[int] = (),
    env: Mapping[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> ExecResult:
    """Run argv in a new session (with exactly `env` when given, else this process's environment).
    On timeout (or cancellation) the whole process group is killed."""
    started = time.monotonic()
    out_file = open(stdout_path, "wb") if stdout_path is not None else None  # noqa: SIM115
    try:
        proc = await spawn(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out_file if out_file is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
            env=None if env is None else dict(env),
            preexec_fn=preexec_fn,
        )
    except BaseException:
        if out_file is not None:
            out_file.close()
        raise
    if running is not None:
        running.add(proc)
    readers = [
        asyncio.ensure_future(collect_output(proc.stdout, cap)),
        asyncio.ensure_future(collect_output(proc.stderr, cap)),
    ]
    try:
        timed_out, stdout, stderr = await await_exit(
            proc, readers, timeout=timeout, kill=lambda: terminate(proc), drain_timeout=KILL_GRACE_SEC
        )
    finally:
        if running is not None:
            running.discard(proc)
        if out_file is not None:
            out_file.close()
    assert proc.returncode is not None
    exit_code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    if timed_out:
        exit_code = 124
    return ExecResult(
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        duration_sec=time.monotonic() - started,
    )
