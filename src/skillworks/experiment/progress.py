"""Progress of a run while it runs. In a terminal: a live bar with ETA and running tokens and cost. Anywhere
else (CI logs, a file, a pipe): one plain line per finished trial (id, outcome, reward, seconds) and a
summary line every `interval` seconds and at the end, so that a log shows progress before the run ends.
Which one is chosen by the stream the progress is written to (the console, usually stderr)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from skillworks._printable import printable
from skillworks.results import TrialResult
from skillworks.stats.tables import cost_is_known, cost_text

SUMMARY_INTERVAL_SEC = 30.0
LINE_WIDTH = 80  # columns of a plain progress line (a CI log, a narrow terminal's file)
_MIN_PART = 5  # a shortened part of a trial id keeps at least this many characters (with its …)


def _duration(sec: float) -> str:
    sec = round(sec)
    if sec < 60:
        return f"{sec}s"
    if sec < 3600:
        return f"{sec // 60}m{sec % 60:02d}s"
    return f"{sec // 3600}h{sec % 3600 // 60:02d}m"


def _tokens(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


@dataclass
class Tally:
    """Running counts of a run: outcomes, usage and times."""

    total: int
    started_at: float = field(default_factory=time.monotonic)
    done: int = 0
    running: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0

    def add(self, result: TrialResult) -> None:
        self.cost_unknown += not cost_is_known(result)
        self.done += 1
        self.outcomes[result.outcome] = self.outcomes.get(result.outcome, 0) + 1
        self.input_tokens += result.usage.input_tokens
        self.output_tokens += result.usage.output_tokens
        self.cost_usd += result.usage.cost_usd

    def cost(self) -> str:
        """``$0.1234``, ``unknown`` when no finished trial's price is known, or ``$0.1234 + unknown (k trials)``."""
        text = cost_text(self.cost_usd, self.cost_unknown, self.done)
        return text if text == "unknown" else f"${text}"

    def eta_sec(self) -> float | None:
        if self.done == 0:
            return None
        elapsed = time.monotonic() - self.started_at
        return elapsed / self.done * (self.total - self.done)

    def summary_parts(self) -> list[str]:
        elapsed = time.monotonic() - self.started_at
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())) or "none finished"
        eta = self.eta_sec()
        return [
            f"-- {self.done}/{self.total} trials done, {self.running} running",
            outcomes,
            f"tokens in {self.input_tokens:,} out {self.output_tokens:,}",
            f"cost {self.cost()}",
            f"elapsed {_duration(elapsed)}"
            + (f", ETA {_duration(eta)}" if eta is not None and self.done < self.total else ""),
        ]

    def summary(self) -> str:
        """The summary as lines of at most `LINE_WIDTH` columns (parts joined by `` | ``, wrapped between parts)."""
        return "\n".join(fit_parts(self.summary_parts()))


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns, ending with … when cut."""
    if cell_len(text) <= width:
        return text
    while text and cell_len(text) + 1 > width:
        text = text[:-1]
    return text + "…"


def fit_parts(parts: list[str], width: int = LINE_WIDTH, sep: str = " | ", indent: str = "   ") -> list[str]:
    """``parts`` joined by ``sep`` into lines of at most ``width`` columns; a part that does not fit on the
    current line starts an indented continuation line, and a part wider than a line is cut with …."""
    lines: list[str] = []
    for part in parts:
        if lines and cell_len(lines[-1] + sep + part) <= width:
            lines[-1] += sep + part
        else:
            lines.append(_cut((indent if lines else "") + part, width))
    return lines


def _middle(text: str, width: int) -> str:
    """``text`` in ``width`` characters with … in the middle (the start and the distinguishing end stay)."""
    if len(text) <= width:
        return text
    head = width // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail > 0 else "")


def shorten_trial_id(trial_id: str, width: int) -> str:
    """A trial id (``<task>__<condition>__<agent>__t<k>``) in at most ``width`` columns. Parts are shortened
    with … in their middle (their start and distinguishing end stay), in rounds that stop at 16, then 8,
    then 5 characters: in each round the agent label first (the same on many lines), then the task, the
    condition last; the trial index never. So ``crysta…sis-29__self-generated__open…-7__t12``. An id of
    another shape gives its longest parts first. A last resort cuts the end."""
    if cell_len(trial_id) <= width:
        return trial_id
    parts = trial_id.split("__")
    sizes = [len(p) for p in parts]
    order = [2, 0, 1] if len(parts) == 4 else sorted(range(max(len(parts) - 1, 1)), key=lambda i: -sizes[i])

    def joined() -> str:
        return "__".join(_middle(p, n) for p, n in zip(parts, sizes, strict=True))

    for floor in (16, 8, _MIN_PART):
        for i in order:
            excess = cell_len(joined()) - width
            if excess <= 0:
                return joined()
            sizes[i] = max(min(sizes[i], floor), sizes[i] - excess)
    return _cut(joined(), width)


def trial_lines(result: TrialResult, done: int, total: int, width: int = LINE_WIDTH) -> list[str]:
    """``[ 3/16] <trial id>  solved  reward 1.00  4.9s`` (plus the error's phase/category of an errored
    trial), at most ``width`` columns: a long id is shortened with …, and an error that leaves the id too
    little room goes on an indented second line."""
    counter = len(str(total))
    reward = "—" if result.reward is None else f"{result.reward:.2f}"
    head = f"[{done:>{counter}}/{total}] "
    tail = f"  {result.outcome}  reward {reward}  {result.timings.total_sec:.1f}s"
    trial_id = printable(result.trial_id, newlines=False)  # an id from a task dir: no terminal controls
    error = ""
    if result.error is not None:
        error = f"({result.error.phase}/{printable(result.error.category, newlines=False)})"
    room = width - cell_len(head) - cell_len(tail)
    if error and room - 2 - cell_len(error) >= min(cell_len(trial_id), 30):
        return [head + shorten_trial_id(trial_id, room - 2 - cell_len(error)) + tail + "  " + error]
    line = head + shorten_trial_id(trial_id, max(room, 10)) + tail
    return [line, _cut(" " * len(head) + error, width)] if error else [line]


class RunProgress:
    """Use as ``with RunProgress(console, total) as p:`` and call `started()` / `finished(result)`."""

    def __init__(self, console: Console | None, total: int, *, interval: float = SUMMARY_INTERVAL_SEC) -> None:
        self.console = console
        self.tally = Tally(total)
        self.interval = interval
        self.plain = console is not None and not console.is_terminal
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._cm: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        self._ticker: asyncio.Task[None] | None = None
        self._last_summary = time.monotonic()

    @contextlib.contextmanager
    def _live(self) -> Iterator[None]:
        if self.console is None or self.plain:
            yield
            return
        self._bar = Progress(
            TextColumn("[bold]trials"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("running {task.fields[running]}  unsolved {task.fields[failed]}  errors {task.fields[errors]}"),
            TextColumn("tokens {task.fields[tokens]}  {task.fields[cost]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task = self._bar.add_task("trials", total=self.tally.total, **self._fields())
        with self._bar:
            yield

    def _fields(self) -> dict[str, Any]:  # the columns' {task.fields[...]}
        t = self.tally
        failed = sum(v for k, v in t.outcomes.items() if k not in ("solved", "ungraded", "error"))
        return {
            "running": t.running,
            "failed": failed,
            "errors": t.outcomes.get("error", 0),
            "tokens": _tokens(t.input_tokens + t.output_tokens),
            "cost": t.cost(),
        }

    def __enter__(self) -> RunProgress:
        self._cm = self._live()
        self._cm.__enter__()
        if self.plain and self.console is not None:
            self.console.print(f"-- {self.tally.total} trial(s) to run", markup=False, highlight=False)
            with contextlib.suppress(RuntimeError):  # no running loop: summaries only at trial ends
                self._ticker = asyncio.get_running_loop().create_task(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self.plain and self.console is not None:
            self._print(self.tally.summary())
        self._cm.__exit__(None, None, None)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if time.monotonic() - self._last_summary >= self.interval:
                self._summary()

    def _print(self, line: str) -> None:
        assert self.console is not None
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _summary(self) -> None:
        self._last_summary = time.monotonic()
        self._print(self.tally.summary())

    def _update(self) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.tally.done, **self._fields())

    def started(self) -> None:
        self.tally.running += 1
        self._update()

    def finished(self, result: TrialResult | None) -> None:
        """A trial ended; ``None`` when it raised (cancelled) without a result."""
        self.tally.running -= 1
        if result is not None:
            self.tally.add(result)
            if self.plain:
                for line in trial_lines(result, self.tally.done, self.tally.total):
                    self._print(line)
                if time.monotonic() - self._last_summary >= self.interval:
                    self._summary()
        self._update()
