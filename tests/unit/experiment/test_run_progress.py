"""Run progress: plain lines per finished trial and periodic summaries when the stream is not a terminal;
the live bar (with ETA, tokens and cost) only in a terminal."""

from __future__ import annotations

import asyncio
import io
import re
from datetime import UTC, datetime

from rich.console import Console

from skillworks.experiment.progress import RunProgress
from skillworks.results import Timings, TrialError, TrialResult, Usage

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def result(i: int, outcome: str, reward: float | None) -> TrialResult:
    return TrialResult(
        trial_id=f"task{i}__none__a__t0",
        run_id="r",
        task_id=f"task{i}",
        condition="none",
        agent="a",
        trial_index=0,
        seed=0,
        reward=reward,
        outcome=outcome,  # type: ignore[arg-type]
        error=TrialError(category="sandbox_error", message="x", phase="setup") if outcome == "error" else None,
        timings=Timings(total_sec=4.25),
        usage=Usage(input_tokens=1000, output_tokens=50, cost_usd=0.002, calls=1),
        started_at=T0,
        finished_at=T0,
    )


def test_plain_lines_per_trial_and_summaries_when_not_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80)
    with RunProgress(console, 3, interval=0.0) as p:
        for i, (outcome, reward) in enumerate([("solved", 1.0), ("failed", 0.0), ("error", None)]):
            p.started()
            p.finished(result(i, outcome, reward))
    lines = out.getvalue().splitlines()
    assert lines[0] == "-- 3 trial(s) to run"
    assert "[1/3] task0__none__a__t0  solved  reward 1.00  4.2s" in lines
    assert "[3/3] task2__none__a__t0  error  reward —  4.2s  (setup/sandbox_error)" in lines
    assert re.search(
        r"^-- 2/3 trials done, 0 running: failed 1, solved 1 \| tokens in 2,000 out 100 \| cost \$0\.0040",
        out.getvalue(),
        re.M,
    )
    assert lines[-1].startswith("-- 3/3 trials done, 0 running: error 1, failed 1, solved 1")
    assert not any("\x1b[" in line for line in lines)  # no terminal control codes in a log


def test_periodic_summary_while_trials_run() -> None:
    """With an event loop, a summary is printed every `interval` seconds even when no trial finishes."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80)

    async def run() -> None:
        with RunProgress(console, 2, interval=0.05) as p:
            p.started()
            await asyncio.sleep(0.2)
            p.finished(result(0, "solved", 1.0))

    asyncio.run(run())
    before_first = out.getvalue().split("[1/2]")[0]
    assert "-- 0/2 trials done, 1 running: none finished" in before_first


def test_a_terminal_gets_the_live_bar_with_eta_tokens_and_cost() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with RunProgress(console, 2) as p:
        p.started()
        p.finished(result(0, "solved", 1.0))
    text = out.getvalue()
    assert "ETA" in text and "tokens 1.1k" in text and "$0.0020" in text
    assert "[1/2]" not in text  # no per-trial lines in a terminal
