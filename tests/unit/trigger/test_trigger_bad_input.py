"""Bad input to `skillworks trigger`: one line naming the problem, exit 2, nothing run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SKILL = REPO / "examples" / "eval" / "skills" / "csv-column-stats"
QUERIES = REPO / "examples" / "trigger" / "csv-column-stats.queries.json"


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--threshold", "0"], "--threshold must be in (0, 1]"),
        (["--max-cost", "0"], "--max-cost must be a positive number"),
        (["--format", "xml"], "unknown --format 'xml'"),
        (["--sibling", str(SKILL)], "two skills of the trigger run are named 'csv-column-stats'"),
        (["--optimize-description"], "--optimize-description needs --model"),
        (["--generate-negatives", "3"], "--generate-negatives needs --model"),
    ],
)
def test_bad_flags(tmp_path: Path, extra: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "trigger", str(SKILL), "--queries", str(QUERIES),
         "--out", str(tmp_path), "--run-id", "x", *extra],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_a_missing_query_file(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "trigger", str(SKILL), "--queries", str(tmp_path / "no.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2 and "query file not found" in proc.stderr and "no.json" in proc.stderr
