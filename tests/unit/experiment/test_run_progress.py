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
        r"^-- 2/3 trials done, 0 running \| failed 1, solved 1 \| tokens in 2,000 out 100\n   cost \$0\.0040",
        out.getvalue(),
        re.M,
    )
    assert lines[-2].startswith("-- 3/3 trials done, 0 running | error 1, failed 1, solved 1")
    assert max(len(line) for line in lines) <= 80
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
    assert "-- 0/2 trials done, 1 running | none finished" in before_first


def test_a_terminal_gets_the_live_bar_with_eta_tokens_and_cost() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with RunProgress(console, 2) as p:
        p.started()
        p.finished(result(0, "solved", 1.0))
    text = out.getvalue()
    assert "ETA" in text and "tokens 1.1k" in text and "$0.0020" in text
    assert "[1/2]" not in text  # no per-trial lines in a terminal


def test_long_task_ids_and_conditions_keep_plain_lines_within_80_columns() -> None:
    """A SkillsBench-sized id (97-180 columns before): the id is shortened with … in its longest parts (the
    condition whole while the others can give, the trial index always whole), the error moves to its own
    line when it leaves the id too little room, and the summary wraps between its parts."""
    from skillworks.experiment.progress import shorten_trial_id

    long_id = "crystallographic-wyckoff-position-analysis-29__self-generated__openhands-model-number-7__t12"
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)  # the console is wide: the lines stay short
    with RunProgress(console, 9396, interval=3600.0) as p:
        p.tally.done = 9394
        for i, outcome in enumerate(("solved", "error")):
            p.started()
            r = result(i, outcome, 1.0 if outcome == "solved" else None)
            err = TrialError(category="verifier_timeout", message="x", phase="verify") if outcome == "error" else None
            p.finished(r.model_copy(update={"trial_id": long_id, "error": err}))
    lines = out.getvalue().splitlines()
    assert lines and max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    solved = next(line for line in lines if line.startswith("[9395/9396] "))
    assert solved.endswith("  solved  reward 1.00  4.2s") and "…" in solved
    assert "__self-generated__" in solved and "__t12  " in solved and solved.startswith("[9395/9396] crys")
    errored = lines.index(next(line for line in lines if line.startswith("[9396/9396] ")))
    assert lines[errored + 1].strip() == "(verify/verifier_timeout)"
    assert lines[-2].startswith("-- 9396/9396 trials done, 0 running | ")
    # the shortening itself: untouched when it fits; parts cut in the middle; never longer than asked
    assert shorten_trial_id("t__none__a__t0", 80) == "t__none__a__t0"
    assert shorten_trial_id(long_id, 40) == "crys…s-29__self-generated__open…r-7__t12"
    for width in (60, 40, 25, 12):
        assert len(shorten_trial_id(long_id, width)) <= width
    assert shorten_trial_id("x" * 300, 20) == "x" * 10 + "…" + "x" * 9
