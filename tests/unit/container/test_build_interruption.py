"""An interrupted image build must finish its cleanup even when the trial is cancelled again while the
cleanup runs (the runner cancels its trials, then asyncio.run cancels what is left): a cleanup cut short
leaves buildah working containers behind, as CI once saw."""

from __future__ import annotations

import asyncio

import pytest

from skillworks.sandbox.container.image import _uncancellable


def test_cleanup_survives_repeated_cancellation() -> None:
    done: list[str] = []

    async def cleanup() -> None:
        await asyncio.sleep(0.2)
        done.append("removed")

    async def build() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await _uncancellable(cleanup())
            raise

    async def main() -> None:
        job = asyncio.create_task(build())
        await asyncio.sleep(0.01)
        job.cancel()  # Ctrl-C
        for _ in range(3):  # and again while the cleanup runs
            await asyncio.sleep(0.03)
            job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(main())
    assert done == ["removed"]


def test_a_failing_cleanup_does_not_replace_the_interruption() -> None:
    async def cleanup() -> None:
        raise OSError("podman vanished")

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
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(main())
