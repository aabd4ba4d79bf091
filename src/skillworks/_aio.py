"""`run_async`: `asyncio.run` for entry points whose coroutine returns a large result; `spawn`: a child
process whose creation a cancellation cannot cut in half."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, with the result handed back outside the event loop's main task.

    On Python 3.11, `asyncio.run` restores the SIGINT handler through `signal.getsignal`/`signal.signal`,
    which format the handler's repr into an enum error message; that repr holds the main task and so the
    repr of its whole result. For `check` over 16,159 skills that was a 170 MiB string and 3 s of work after
    the scan had ended (benchmarks/corpus_scan.py). The main task here returns None."""
    box: list[T] = []

    async def _main() -> None:
        box.append(await coro)

    asyncio.run(_main())
    return box[0]


_SPAWN_KILL_WAIT_SEC = 5.0


async def spawn(*argv: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec(*argv, **kwargs)`, which a cancellation cannot cut in half.

    On Python 3.11 a task cancelled while `create_subprocess_exec` waits for the child's pipes to connect
    closes the transport and then awaits an exit notice that may never come: the task hangs for good (seen
    on Ctrl-C of a run whose trial was starting its first sandbox command, about one run in ten under load;
    the stack ended in `base_subprocess._wait` under `_make_subprocess_transport`). Here the creation runs
    in a task of its own that is never cancelled; a cancellation meanwhile waits for it, kills what it
    started (the whole process group when the child leads a new session), waits up to 5 s for it to exit
    and is then raised."""
    creating = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **kwargs))
    cancelled = False
    while not creating.done():
        try:
            await asyncio.wait([creating])  # never cancels `creating`, never raises its exception
        except asyncio.CancelledError:
            cancelled = True
    if not cancelled:
        return creating.result()
    if creating.exception() is None:
        proc = creating.result()
        with contextlib.suppress(ProcessLookupError):
            if kwargs.get("start_new_session"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        # the exit is seen once the child's pipes close; a grandchild outside a new session may hold them
        waiting = asyncio.ensure_future(proc.wait())
        deadline = asyncio.get_running_loop().time() + _SPAWN_KILL_WAIT_SEC
        while not waiting.done() and (left := deadline - asyncio.get_running_loop().time()) > 0:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([waiting], timeout=left)
    raise asyncio.CancelledError
