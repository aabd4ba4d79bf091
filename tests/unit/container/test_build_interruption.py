"""An interrupted image build must finish its cleanup even when the trial is cancelled again while the
cleanup runs (the runner cancels its trials, then asyncio.run cancels what is left): a cleanup cut short
leaves buildah working containers behind, as CI once saw."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from skillworks.sandbox.container.image import _uncancellable


def _interrupted_build(cleanup: Callable[[], Coroutine[Any, Any, None]], extra_cancels: int) -> None:
    """A build task cancelled once (Ctrl-C), then `extra_cancels` more times while its cleanup runs:
    the cancellation must come out of it, whatever the cleanup did."""

    async def build() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await _uncancellable(cleanup())
            raise

    async def main() -> None:
        job = asyncio.create_task(build())
        await asyncio.sleep(0.01)
        job.cancel()
        for _ in range(extra_cancels):
            await asyncio.sleep(0.03)
            job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(main())


def test_cleanup_survives_repeated_cancellation() -> None:
    done: list[str] = []

    async def cleanup() -> None:
        await asyncio.sleep(0.2)
        done.append("removed")

    _interrupted_build(cleanup, extra_cancels=3)
    assert done == ["removed"]


def test_a_failing_cleanup_does_not_replace_the_interruption() -> None:
    async def cleanup() -> None:
        raise OSError("podman vanished")

    _interrupted_build(cleanup, extra_cancels=0)
