"""CTRF (Common Test Report Format) reader: per-test results from a verifier's ctrf.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillworks.errors import VerifierError
from skillworks.grading.reward_files import read_capped
from skillworks.results import TestResult

# a CTRF report lists tests, not their output: past this it is not a report a verifier wrote
CTRF_MAX_BYTES = 32 * 1024 * 1024


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
    for test in tests if isinstance(tests, list) else []:
        if not isinstance(test, dict) or "name" not in test:
            continue
        duration = test.get("duration")
        out.append(
            TestResult(
                name=str(test["name"]),
                status=str(test.get("status", "other")),
                duration_ms=float(duration) if isinstance(duration, int | float) else None,
                message=str(test["message"]) if test.get("message") is not None else None,
            )
        )
    return out
