"""CTRF (Common Test Report Format) reader: per-test results from a verifier's ctrf.json.

CTRF gives durations in milliseconds, but not every producer does: pytest-json-ctrf 0.3.5 (pinned by real
SkillsBench verifiers) writes seconds, 0.3.6 milliseconds, both with `start`/`stop` in epoch seconds. A
duration is therefore read in the unit its own test's (else the report's) `start`/`stop` span says, and
taken as milliseconds when nothing tells (the standard's unit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillworks.errors import VerifierError
from skillworks.grading.reward_files import read_capped
from skillworks.results import TestResult

# where verifiers write their CTRF report, in the order read: Harbor's name, then the one real SkillsBench
# verifiers also use (r2r-mpc-control: `pytest --ctrf /logs/verifier/ctrf-report.json`)
CTRF_NAMES = ("ctrf.json", "ctrf-report.json")
# a CTRF report lists tests, not their output: past this it is not a report a verifier wrote
CTRF_MAX_BYTES = 32 * 1024 * 1024


def find_ctrf(logs: Path) -> Path | None:
    """The CTRF report among a verifier's logs (`CTRF_NAMES`, first present; a link counts as present so that
    `read_ctrf` refuses it rather than another name being read in its place), or None."""
    for name in CTRF_NAMES:
        path = logs / name
        if path.is_symlink() or path.exists():
            return path
    return None


def read_ctrf(path: Path) -> list[TestResult]:
    """Tests of a CTRF report. A missing or malformed report, a link, a special file or one past
    CTRF_MAX_BYTES yields no tests (the reward file is the record; links are never followed)."""
    try:
        raw = read_capped(path, CTRF_MAX_BYTES)
        if raw is None:
            return []
        data: Any = json.loads(raw)
        tests = data["results"]["tests"]
    except (VerifierError, OSError, ValueError, KeyError, TypeError):
        return []
    out: list[TestResult] = []
    fallback = _report_unit(data, tests)
    for test in tests if isinstance(tests, list) else []:
        if not isinstance(test, dict) or "name" not in test:
            continue
        duration = test.get("duration")
        if isinstance(duration, int | float) and not isinstance(duration, bool):
            duration = duration * _ms_per_unit(duration, _span(test), fallback)
        else:
            duration = None
        out.append(
            TestResult(
                name=str(test["name"]),
                status=str(test.get("status", "other")),
                duration_ms=float(duration) if duration is not None else None,
                message=str(test["message"]) if test.get("message") is not None else None,
            )
        )
    return out


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _span(item: Any) -> tuple[float, float] | None:
    """(stop - start, milliseconds per unit of start/stop) of an item with both; epoch seconds are ~1.7e9,
    epoch milliseconds ~1.7e12."""
    if not isinstance(item, dict):
        return None
    start, stop = _num(item.get("start")), _num(item.get("stop"))
    if start is None or stop is None or stop <= start:
        return None
    return stop - start, 1.0 if start > 1e11 else 1000.0


def _ms_per_unit(
    duration: float, span: tuple[float, float] | None, fallback: float, band: tuple[float, float] = (0.5, 2.0)
) -> float:
    """Milliseconds per unit of ``duration``: the unit of its span's start/stop when duration / span lies
    in ``band``, a thousandth of it when it lies in 1000 times the band, else ``fallback``."""
    if span is None or duration <= 0:
        return fallback
    width, unit_ms = span
    ratio, (lo, hi) = duration / width, band
    if lo <= ratio <= hi:
        return unit_ms
    if 1000.0 * lo <= ratio <= 1000.0 * hi:
        return unit_ms / 1000.0
    return fallback


def _report_unit(data: Any, tests: Any) -> float:
    """The unit of the report's durations from its summary's span (tests run one after another, so their
    durations add up to about the span), for tests that carry no start/stop of their own; else ms."""
    summary = data.get("results", {}).get("summary") if isinstance(data, dict) else None
    durations = [_num(t.get("duration")) for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []
    total = sum(d for d in durations if d is not None and d > 0)
    return _ms_per_unit(total, _span(summary), 1.0, band=(0.2, 1.5))
