"""`skillworks trajectory validate|convert` through the CLI entry point (in-process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skillworks.cli.main import main

LOGS = Path(__file__).parents[2] / "fixtures" / "native_logs"


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", "trajectory", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    code = exc.value.code
    return int(code) if code is not None else 0


@pytest.mark.parametrize(
    "harness,log",
    [
        ("claude-code", "claude_code.stream.jsonl"),
        ("codex", "codex.exec.jsonl"),
        ("gemini-cli", "gemini_cli.stream.jsonl"),
        ("gemini-cli", "gemini_cli.session.json"),
        ("opencode", "opencode.run.jsonl"),
    ],
)
def test_convert_then_validate(
    harness: str, log: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "trajectory.json"
    assert _run(monkeypatch, "convert", "--from", harness, str(LOGS / log), "--out", str(out)) == 0
    assert f"converted {LOGS / log} ({harness})" in capsys.readouterr().err
    assert json.loads(out.read_text())["schema_version"] == "ATIF-v1.8"
    assert _run(monkeypatch, "validate", str(out)) == 0
    assert capsys.readouterr().out.startswith(f"ok: {out}: ATIF-v1.8, ")


def test_convert_to_stdout(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(monkeypatch, "convert", "--from", "codex", str(LOGS / "codex.exec.jsonl")) == 0
    assert json.loads(capsys.readouterr().out)["agent"]["name"] == "codex"


def test_validate_reports_each_bad_file_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    assert _run(monkeypatch, "convert", "--from", "codex", str(LOGS / "codex.exec.jsonl"), "-o", str(good)) == 0
    data = json.loads(good.read_text())
    data["steps"][0]["role"] = "x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    capsys.readouterr()
    assert _run(monkeypatch, "validate", str(good), str(bad), str(broken), str(tmp_path / "none.json")) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith(f"ok: {good}")
    err = captured.err.splitlines()
    assert err[0].startswith(f"invalid: {bad}: steps[0] (step_id 1): role: unknown key")
    assert err[1].startswith(f"invalid: {broken}: not valid JSON")
    assert err[2] == f"invalid: {tmp_path / 'none.json'}: file not found"
    assert err[3] == "3 of 4 files invalid"


def test_convert_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "convert", "--from", "aider", str(LOGS / "codex.exec.jsonl")) == 2
    assert capsys.readouterr().err.strip() == (
        "error: unknown --from 'aider' (allowed: claude-code, codex, gemini-cli, opencode)"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("banner only\n")
    assert _run(monkeypatch, "convert", "--from", "codex", str(empty)) == 2
    assert capsys.readouterr().err.strip() == f"error: {empty}: no JSON events in the log"
    assert _run(monkeypatch, "convert", "--from", "codex", str(tmp_path / "missing.jsonl")) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'missing.jsonl'}: file not found"
