"""Errored trials grouped by what went wrong: one group per identical (phase, category, message, retried),
its count and its trial ids collapsed (``t1__none__a1__t0–t19``), most frequent first. report.md,
report.html, the PR comment and the end of ``skillworks run`` list groups, so 20 identical errors read as
one line ``×20`` instead of twenty; summary.json keeps every errored trial (``errors``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from skillworks._printable import printable
from skillworks.report.formatting import one_line
from skillworks.report.model import ErrorRow

_INDEXED = re.compile(r"^(.*__t)(\d+)$")  # <task>__<condition>__<agent>__t<k>
MESSAGE_KEY_CHARS = 2000  # messages equal up to here (after whitespace is folded) are one group


@dataclass(frozen=True)
class ErrorGroup:
    phase: str | None
    category: str | None
    message: str
    superseded: bool  # these attempts were retried (a later attempt replaced them)
    trial_ids: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.trial_ids)

    @property
    def items(self) -> list[str]:
        """The trial ids collapsed (`collapse_ids`)."""
        return collapse_ids(self.trial_ids)

    def trials(self, limit: int | None = None) -> str:
        """The collapsed trial ids, at most ``limit`` items and then ``… +N more``."""
        items = self.items
        if limit is None or len(items) <= limit:
            return ", ".join(items)
        return ", ".join(items[:limit]) + f", … +{len(items) - limit} more"


def group_errors(errors: Sequence[ErrorRow]) -> list[ErrorGroup]:
    """`errors` grouped by (phase, category, message, superseded), the largest group first (ties in the
    order the errors came)."""
    groups: dict[tuple[str | None, str | None, str, bool], list[ErrorRow]] = {}
    for e in errors:
        key = (e.phase, e.category, one_line(e.message, MESSAGE_KEY_CHARS), e.superseded)
        groups.setdefault(key, []).append(e)
    out = [
        ErrorGroup(
            phase=phase,
            category=category,
            message=rows[0].message,
            superseded=superseded,
            trial_ids=tuple(_label(e) for e in rows),
        )
        for (phase, category, _, superseded), rows in groups.items()
    ]
    return sorted(out, key=lambda g: -g.count)  # sorted() is stable: first seen first among equals


def _label(e: ErrorRow) -> str:
    return e.trial_id if e.attempt <= 1 else f"{e.trial_id} (attempt {e.attempt})"


def _ranges(indexes: list[int]) -> str:
    parts: list[str] = []
    start = prev = indexes[0]
    for i in [*indexes[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if i is not None:
            start = prev = i
    return ",".join(parts)


def collapse_ids(ids: Sequence[str]) -> list[str]:
    """Trial ids that differ only in their trial index as one item: ``a__none__m__t0–t4`` (a run of
    indexes), ``a__none__m__t{0,2,5–7}`` (several runs); other ids as they are, in first-seen order."""
    by_prefix: dict[str, list[int]] = {}
    order: list[str] = []  # prefixes and whole ids in first-seen order
    for trial_id in dict.fromkeys(ids):
        m = _INDEXED.match(trial_id)
        if m is None:
            order.append(trial_id)
            continue
        prefix = m.group(1)
        if prefix not in by_prefix:
            by_prefix[prefix] = []
            order.append(prefix)
        by_prefix[prefix].append(int(m.group(2)))
    out = []
    for item in order:
        if item not in by_prefix:
            out.append(item)
            continue
        indexes = sorted(set(by_prefix[item]))
        runs = _ranges(indexes)
        if "," in runs:
            out.append(f"{item}{{{runs}}}")
        elif "–" in runs:
            first, last = runs.split("–")
            out.append(f"{item}{first}–t{last}")
        else:
            out.append(f"{item}{runs}")
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def error_group_lines(errors: Sequence[ErrorRow], *, limit: int = 5, width: int = 80) -> list[str]:
    """Plain lines for a terminal: ``errors: 23 errored attempt(s), 2 kind(s)`` and per group (the ``limit``
    largest) ``  ×20 setup/sandbox_error: <message>`` over its trials, each line cut to ``width`` columns;
    terminal controls in messages and ids are shown escaped."""
    if not errors:
        return []
    groups = group_errors(errors)
    lines = [f"errors: {len(errors)} errored attempt(s), {len(groups)} kind(s)"]
    for g in groups[:limit]:
        where = f"{g.phase or '?'}/{g.category or '?'}" + (" (retried)" if g.superseded else "")
        lines.append(_cut(printable(f"  ×{g.count} {where}: {one_line(g.message, width)}", newlines=False), width))
        lines.append(_cut("      " + printable(g.trials(limit=3), newlines=False), width))
    if len(groups) > limit:
        lines.append(f"  … {len(groups) - limit} more kind(s): see report.md")
    return lines
