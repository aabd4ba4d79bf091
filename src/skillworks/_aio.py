"""`run_async`: `asyncio.run` for entry points whose coroutine returns a large result."""

from __future__ import annotations

import asyncio
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
