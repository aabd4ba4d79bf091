"""`skillworks run` exit status and pre-flight, end to end through the CLI entry point (in-process).

Model calls go to a real HTTP address where nothing listens (connection refused), so the builtin agent's
trials really error; no model API is used. The pre-flight tests never start a trial.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.cli.run_checks import results_exit_code
from skillworks.experiment import RunStore
from skillworks.stats import latest_attempts

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "examples" / "quickstart" / "lab-units-to-si"
DEAD = "http://127.0.0.1:9"  # the discard port: nothing answers


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", "run", *args])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()
    code = exc.value.code
    return int(code) if code is not None else 0


def test_no_key_is_a_one_line_preflight_error_and_no_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "runs"
    code = _run(
        monkeypatch, str(TASK), "--agent", "builtin", "--model", "anthropic/claude-sonnet-4-5", "--out", str(out)
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [
        "error: --model anthropic/claude-sonnet-4-5: provider not configured: set ANTHROPIC_API_KEY "
        "(or give --api-base)"
    ]
    assert not out.exists()


def test_missing_script_and_bad_fail_on_are_preflight_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    missing = tmp_path / "nope.yaml"
    code = _run(monkeypatch, str(TASK), "--agent", "builtin", "--model", f"scripted/{missing}", "--out", str(out))
    assert code == 2 and f"{missing}: --model scripted/...: no such script file" in capsys.readouterr().err
    assert _run(monkeypatch, str(TASK), "--agent", "builtin", "--model", "foo/bar", "--out", str(out)) == 2
    assert "--model foo/bar: unknown provider 'foo'" in capsys.readouterr().err
    assert _run(monkeypatch, str(TASK), "--fail-on", "1.5", "--out", str(out)) == 2
    assert "--fail-on: a share of trials in [0, 1], got 1.5" in capsys.readouterr().err
    assert not out.exists()


def test_all_errors_exit_1_and_fail_on_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    common = ["--model", "openai/gpt-4o-mini", "--api-base", DEAD, "--conditions", "none", "--out", str(tmp_path)]
    assert _run(monkeypatch, str(TASK), "--agent", "builtin", "--run-id", "all-err", *common) == 1
    assert "failed: every trial errored (1/1)" in capsys.readouterr().err
    # oracle solves, builtin errors: half the trials errored
    code = _run(monkeypatch, str(TASK), "--agent", "oracle,builtin", "--run-id", "half", "--fail-on", "0.4", *common)
    assert code == 1 and "failed: 1/2 trials errored, above --fail-on 0.4" in capsys.readouterr().err
    results = latest_attempts(RunStore(tmp_path / "half").read_results())
    assert sorted(r.outcome for r in results) == ["error", "solved"]
    assert results_exit_code(results, 0.6) == 0 and results_exit_code(results, None) == 0
    assert results_exit_code(results, 0.5) == 0 and results_exit_code(results, 0.49) == 1


def test_dry_run_prints_the_plan_and_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # a dry run needs no key
    out = tmp_path / "runs"
    args = [str(REPO / "examples" / "quickstart"), "--agent", "builtin", "--model", "anthropic/claude-sonnet-4-5"]
    assert _run(monkeypatch, *args, "--trials", "3", "--dry-run", "--out", str(out)) == 0
    err = capsys.readouterr().err
    assert "= 24 trial(s)" in err and "estimated cost: unknown" in err
    assert "minimum detectable Δ: none — too few tasks for an interval (n=4, needs 6)" in err
    assert not out.exists()
