"""`skillworks report` end to end through the CLI entry point (in-process)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from skillworks.cli.main import main


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", "report", *args])
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps the table to the (captured) terminal width
    with pytest.raises(SystemExit) as exc:
        main()
    code = exc.value.code
    return int(code) if code is not None else 0


def test_report_writes_files_and_prints_table(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = fx.write_run(tmp_path)
    assert _run(monkeypatch, str(run), "--resamples", "200") == 0
    out = capsys.readouterr().out
    assert "curated" in out and "75.0%" in out and "50.0%" in out
    assert "scripted test provider" in out
    for name in ("summary.json", "report.md", "report.html"):
        assert (run / name).is_file()


def test_report_single_format(fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = fx.write_run(tmp_path)
    assert _run(monkeypatch, str(run), "--format", "json", "--resamples", "100") == 0
    assert (run / "summary.json").is_file()
    assert not (run / "report.md").exists() and not (run / "report.html").exists()


def test_report_combined_needs_out(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a = fx.write_run(tmp_path, name="run-1")
    b = fx.write_run(tmp_path, name="run-2")
    assert _run(monkeypatch, str(a), str(b)) == 2
    assert capsys.readouterr().err.strip() == "error: --out is required when several run directories are combined"
    out = tmp_path / "combined"
    assert _run(monkeypatch, str(a), str(b), "--out", str(out), "--resamples", "100") == 0
    assert (out / "report.html").is_file()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("missing", "run directory not found"),
        ("no_experiment", "no experiment.json in run directory"),
        ("garbled", "results.jsonl: line 1: not valid JSON"),
    ],
)
def test_bad_run_dir_one_line_exit_2(
    fx: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: str,
    expected: str,
) -> None:
    run = tmp_path / "run-1"
    if setup != "missing":
        fx.write_run(tmp_path)
    if setup == "no_experiment":
        (run / "experiment.json").unlink()
    if setup == "garbled":
        text = (run / "results.jsonl").read_text()
        (run / "results.jsonl").write_text("not json\n" + text)
    assert _run(monkeypatch, str(run)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and expected in err
    assert len(err.splitlines()) == 1


def test_bad_format_flag(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = fx.write_run(tmp_path)
    assert _run(monkeypatch, str(run), "--format", "pdf") == 2
    assert "unknown --format 'pdf'" in capsys.readouterr().err


def test_torn_last_line_warns_and_succeeds(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = fx.write_run(tmp_path)
    with (run / "results.jsonl").open("a") as fh:
        fh.write('{"trial_id": "t1__none')
    assert _run(monkeypatch, str(run), "--resamples", "100") == 0
    assert "warning:" in capsys.readouterr().err


def test_report_at_80_columns_prints_the_headline_with_whole_numbers(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = fx.write_run(tmp_path)
    monkeypatch.setattr(sys, "argv", ["skillworks", "report", str(run), "--resamples", "200"])
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main()
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("wrote ")]
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = "\n".join(lines)
    assert "curated  pass rate  75.0%  too few tasks for an interval — n=2  errors 0/6" in text
    assert "Δ vs none +25.0 pp, too few tasks for an interval — n=2, g 0.50" in text  # 2 tasks: no interval


def test_report_format_json_prints_the_summary_alone(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    run = fx.write_run(tmp_path)
    assert _run(monkeypatch, str(run), "--format", "json", "--resamples", "100") == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads((run / "summary.json").read_text())


def test_report_format_pr_comment(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = fx.standard_results()
    bad = results[5]
    assert bad.error is not None
    results[5] = bad.model_copy(update={"error": bad.error.model_copy(update={"message": "a | b\n<script>"})})
    run = fx.write_run(tmp_path, results)
    assert _run(monkeypatch, str(run), "--format", "pr-comment", "--resamples", "100") == 0
    captured = capsys.readouterr()
    out = captured.out
    assert out == (run / "pr_comment.md").read_text()
    assert out.startswith("<!-- skillworks-report -->\n### skillworks: run-1")
    assert "> **Warning:** results produced with the scripted test provider" in out
    assert "| curated | a1 | 75.0% | too few tasks for an interval — n=2 | 0/6 |" in out
    assert "| curated | a1 | +25.0 | — | too few tasks for an interval — n=2 |" in out  # 2 tasks: no verdict
    assert "a \\| b \\<script\\>" in out  # a pipe cannot break the table; a newline cannot break the list
    assert "wrote" not in out and "wrote" in captured.err  # stdout holds the comment alone
    assert (run / "summary.json").is_file() and not (run / "report.html").exists()


def test_an_eval_run_s_ungraded_trials_are_not_errors(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = [
        fx.trial("t1", "none", 0, 1.0).model_copy(update={"reward": None, "outcome": "ungraded"}),
        fx.trial("t1", "curated", 0, 1.0).model_copy(update={"reward": None, "outcome": "ungraded"}),
        fx.trial("t2", "none", 0, None, error=fx.SANDBOX_ERROR),
        fx.trial("t2", "curated", 0, 1.0),
    ]
    run = fx.write_run(tmp_path, results, fx.experiment(trials=1))
    assert _run(monkeypatch, str(run), "--resamples", "100") == 0
    out = capsys.readouterr().out
    assert "none     pass rate   0.0%" in out and "errors 1/2, ungraded 1" in out
    assert "errors 0/2, ungraded 1" in out
    summary = (run / "summary.json").read_text()
    import json

    data = json.loads(summary)
    assert data["counts"]["errored"] == 1 and data["counts"]["ungraded"] == 2
    assert [e["trial_id"] for e in data["errors"]] == ["t2__none__a1__t0"]


def test_a_condition_without_any_verifier_shows_no_pass_rate(
    fx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An eval run: every trial is ungraded (no verifier); a fixed-frame 0% with its interval would read as a
    failed skill, so the headline, the PR comment, report.md and report.html show "—" and no bar."""
    import re

    results = [
        fx.trial(t, c, 0, 1.0).model_copy(update={"reward": None, "outcome": "ungraded"})
        for t in ("t1", "t2")
        for c in ("none", "curated")
    ]
    run = fx.write_run(tmp_path, results, fx.experiment(trials=1))
    assert _run(monkeypatch, str(run), "--resamples", "100") == 0
    out = capsys.readouterr().out
    assert "none     pass rate      —  (no verifier)  errors 0/2, ungraded 2" in out
    assert "0.0%" not in out
    assert "| none | a1 | — (ungraded) | — | — |" in (run / "report.md").read_text()
    html = (run / "report.html").read_text()
    assert "— (ungraded)" in html
    bars = re.search(r'data-chart="bars".*?</svg>', html, re.S)
    assert bars is None or '<g class="bar">' not in bars.group(0)
    assert _run(monkeypatch, str(run), "--format", "pr-comment", "--resamples", "100") == 0
    assert "| none | a1 | — (ungraded) | — | 0/2 |" in capsys.readouterr().out
