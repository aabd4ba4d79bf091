"""Bad input to `skillworks trigger`: one line naming the problem, exit 2, nothing run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillworks.cli.main import main

REPO = Path(__file__).resolve().parents[3]
SKILL = REPO / "examples" / "eval" / "skills" / "csv-column-stats"
QUERIES = REPO / "examples" / "trigger" / "csv-column-stats.queries.json"


def _run(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["skillworks", "trigger", *args])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as done:
        main()
    return int(done.value.code or 0), capsys.readouterr().err


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
def test_bad_flags(
    tmp_path: Path, extra: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run([str(SKILL), "--queries", str(QUERIES), "--out", str(tmp_path), "--run-id", "x", *extra],
                     monkeypatch, capsys)  # fmt: skip
    assert code == 2, err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_a_missing_query_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run([str(SKILL), "--queries", str(tmp_path / "no.json")], monkeypatch, capsys)
    assert code == 2 and "query file not found" in err and "no.json" in err
