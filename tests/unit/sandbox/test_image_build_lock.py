"""The image build's host-wide lock: processes building the same content hash (the workers of one Ray node,
concurrent runs) take turns, so the image is built once; waiting for it does not block the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import subprocess
import sys
from pathlib import Path

from skillworks.sandbox.container.image import _host_lock

HOLDER = """
import asyncio, sys, time
from pathlib import Path
from skillworks.sandbox.container.image import _host_lock

async def main() -> None:
    async with _host_lock(Path(sys.argv[1]), poll_sec=0.01):
        start = time.monotonic()
        time.sleep(0.3)
        print(start, time.monotonic(), flush=True)

asyncio.run(main())
"""


def test_processes_take_the_lock_in_turn(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "podman-abc.lock"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(3)
    ]
    spans = sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)
    assert len(spans) == 3 and all(p.returncode == 0 for p in procs)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end  # no two holders at once


def test_waiting_for_the_lock_leaves_the_loop_free_and_can_be_cancelled(tmp_path: Path) -> None:
    lock = tmp_path / "l.lock"

    async def main() -> int:
        ticks = 0
        async with _host_lock(lock):
            waiter = asyncio.ensure_future(_take(lock))
            for _ in range(5):
                await asyncio.sleep(0.02)
                ticks += 1
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiter
        async with _host_lock(lock):  # released by the holder, not kept by the cancelled waiter
            return ticks

    assert asyncio.run(main()) == 5


async def _take(lock: Path) -> None:
    async with _host_lock(lock, poll_sec=0.01):
        raise AssertionError("the lock was held")
