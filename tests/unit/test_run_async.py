"""`run_async` hands a coroutine's result back without formatting it (asyncio.run on Python 3.11 formats
the main task's repr, result included, when it restores the SIGINT handler)."""

from __future__ import annotations

import signal

import pytest

from skillworks._aio import run_async


class _Result:
    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return "_Result()"


async def _make() -> _Result:
    return _Result()


async def _fail() -> None:
    raise ValueError("bad input")


def test_the_result_comes_back_unformatted() -> None:
    _Result.reprs = 0
    out = run_async(_make())
    assert isinstance(out, _Result)
    assert _Result.reprs == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C behaves as before


def test_an_exception_of_the_coroutine_propagates() -> None:
    with pytest.raises(ValueError, match="bad input"):
        run_async(_fail())
