"""Small number/text formatters shared by the Markdown and HTML renderers."""

from __future__ import annotations

from skillworks.report.model import IntervalOut, PassRateRow
from skillworks.stats.tables import cost_text

__all__ = ["cost_text"]  # templates call f.cost_text


def rate_interval(row: PassRateRow) -> str:
    """The interval the headline and PR comment show for a pass rate: over tasks (trial noise included),
    the note when there are too few tasks; Wilson for a summary written before that interval existed."""
    if row.task_interval is not None:
        return interval(row.task_interval)
    if row.task_interval_note is not None:
        return row.task_interval_note
    return interval(row.wilson)


def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x * 100:.{digits}f}%"


def pp(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:+.{digits}f}"


def num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def interval(iv: IntervalOut | None) -> str:
    return "—" if iv is None else f"[{iv.low * 100:.1f}, {iv.high * 100:.1f}]"


def gain_text(g: float | None, low: float | None, high: float | None, note: str | None) -> str:
    """g with its interval, e.g. ``0.75, 95% CI [+0.40, +1.00]``; ``undefined`` without g; without an
    interval the reason (the small-n rule or the headroom), e.g. ``0.75 (too few tasks that differ …)``."""
    if g is None:
        return "undefined"
    if low is None or high is None:
        return f"{g:.2f} ({note or 'no interval'})"
    return f"{g:.2f}, 95% CI [{low:+.2f}, {high:+.2f}]"


def interval_pp(low: float | None, high: float | None, note: str | None = None) -> str:
    """``[low, high]`` in pp; the note (e.g. "too few tasks for an interval — n=3") when there is none."""
    if low is None or high is None:
        return note or "—"
    return f"[{low:+.1f}, {high:+.1f}]"


def gain_ci(low: float | None, high: float | None, note: str | None = None) -> str:
    """``[low, high]`` of g; the note when there is none ("—" when g itself is undefined)."""
    if low is None or high is None:
        return note or "—"
    return f"[{low:+.2f}, {high:+.2f}]"


def counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in d.items()) or "—"


def agent_label(agent: str | None) -> str:
    return "(all agents)" if agent is None else agent


def one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def ungraded_only(row: PassRateRow) -> bool:
    """Every trial of the row is ungraded (eval cases without a verifier, graded by metrics): its fixed-frame
    0% is no pass rate, so reports show "—" and send the reader to the Skill Lift instead."""
    return row.ungraded > 0 and row.scored == 0 and row.errored == 0
