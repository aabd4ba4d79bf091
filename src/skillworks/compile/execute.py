"""Running one operator command as a subprocess: its own process group, killed whole when it ends or times
out, and at most `OUTPUT_CAP_BYTES` of each stream held in memory (head and tail kept, the middle counted).

An operator is a one-shot call: no process it starts outlives the call. A background child that keeps
stdout open therefore neither survives nor turns a finished command into a timeout: once the command's
own process exits, its group is killed and the pipes close.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass

from skillworks._aio import spawn

OUTPUT_CAP_BYTES = 1_000_000  # per stream, held in memory
_DRAIN_GRACE_SEC = 2.0  # after the group is killed, how long a pipe may stay open (a child that left the group)


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False


class _CappedBuffer:
    """The first and last `cap // 2` bytes of a stream; the bytes in between are only counted."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        if len(self.tail) > 2 * self.half:
            cut = len(self.tail) - self.half
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        tail = self.tail
        if len(tail) > self.half:
            self.dropped += len(tail) - self.half
            tail = tail[-self.half :]
        middle = f"\n... [{self.dropped} bytes of output not kept] ...\n".encode() if self.dropped else b""
        return bytes(self.head + middle + tail).decode(errors="replace")


async def _drain(stream: asyncio.StreamReader | None, buffer: _CappedBuffer) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        buffer.add(chunk)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the command's own process has exited. (`proc.wait()` also waits for its pipes to close, which a
    background child holding stdout would delay to the timeout.)"""
    delay = 0.005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def run_capped(command: str, cwd: str, timeout: float, cap: int = OUTPUT_CAP_BYTES) -> ExecResult:
    """`bash -c command` in `cwd` in a new session; the whole group is killed when the command exits or after
    `timeout` seconds."""
    proc = await spawn(
        "bash",
        "-c",
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    out, err = _CappedBuffer(cap), _CappedBuffer(cap)
    readers = asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err))
    timed_out = False
    try:
        await asyncio.wait_for(_exited(proc), timeout)
    except TimeoutError:
        timed_out = True
    finally:
        _kill_group(proc.pid)  # the session id is the child's pid: background children go with it
    if timed_out:
        await proc.wait()
    try:
        await asyncio.wait_for(asyncio.shield(readers), _DRAIN_GRACE_SEC)
    except TimeoutError:  # a descendant left the group (setsid) and holds a pipe: stop reading, keep what came
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await readers
    stderr = err.text()
    if timed_out:
        return ExecResult(124, out.text(), (stderr + "\n" if stderr else "") + f"timed out after {timeout:g}s", True)
    return ExecResult(proc.returncode or 0, out.text(), stderr)
