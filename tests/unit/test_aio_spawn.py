"""`skillworks._aio.spawn`: a cancellation during process creation leaves no process and no hung task.

Python 3.11 can hang a task cancelled inside `create_subprocess_exec` (seen as a rare Ctrl-C hang of
`skillworks run`); that race is timing-dependent, so these tests pin the contract at every early
cancellation point instead: the task ends with CancelledError promptly and the child is gone."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from skillworks._aio import spawn


def _running_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker.encode() in (proc / "cmdline").read_bytes():
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("session", [True, False])
async def test_cancelled_creation_kills_the_child_and_ends(session: bool) -> None:
    for yields in range(6):
        marker = f"30.{uuid.uuid4().int % 10**12:012d}"  # a unique sleep: the child's own argv
        task = asyncio.ensure_future(
            spawn(
                "sleep",
                marker,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=session,
            )
        )
        for _ in range(yields):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=10)
        assert done, f"spawn did not end after a cancellation at yield {yields}"
        if task.cancelled():
            await asyncio.sleep(0.05)
            assert _running_with(marker) == []
        else:  # created before the cancellation arrived: an ordinary process the caller owns
            proc = task.result()
            proc.kill()
            await proc.wait()


async def test_uncancelled_spawn_is_create_subprocess_exec() -> None:
    proc = await spawn("sh", "-c", "echo hi", stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    assert out == b"hi\n" and proc.returncode == 0


async def test_a_missing_program_raises_as_before() -> None:
    with pytest.raises(FileNotFoundError):
        await spawn("/nonexistent/program")
