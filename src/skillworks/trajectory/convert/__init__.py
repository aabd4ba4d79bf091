"""Converters from each harness's native event log to ATIF."""

from __future__ import annotations

import json
from pathlib import Path

from skillworks.trajectory.convert._common import ConvertedLog, read_events
from skillworks.trajectory.convert.claude_code import convert_claude_code
from skillworks.trajectory.convert.codex import convert_codex
from skillworks.trajectory.convert.gemini_cli import convert_gemini_cli, convert_gemini_cli_json
from skillworks.trajectory.convert.gemini_session import convert_gemini_cli_session, is_gemini_session
from skillworks.trajectory.convert.opencode import convert_opencode
from skillworks.trajectory.validate import TrajectoryError

CONVERTERS = {
    "claude-code": convert_claude_code,
    "codex": convert_codex,
    "gemini-cli": convert_gemini_cli,
    "opencode": convert_opencode,
}


def convert_log(harness: str, log: Path, *, instruction: str | None = None) -> ConvertedLog:
    """Convert the native log file of `harness` (a key of CONVERTERS). For gemini-cli the file may be the
    stream-json log, the `--output-format json` output or a saved chat session; its shape decides."""
    if harness not in CONVERTERS:
        raise TrajectoryError(f"unknown harness {harness!r} (known: {', '.join(CONVERTERS)})", log)
    if not log.is_file():
        raise TrajectoryError("file not found", log)
    if harness == "gemini-cli":
        try:
            whole = json.loads(log.read_text(encoding="utf-8", errors="replace"))
        except json.JSONDecodeError:
            whole = None  # several lines: a stream-json log
        if is_gemini_session(whole):
            if instruction is not None:
                raise TrajectoryError("a saved session holds its own prompt; no instruction applies", log)
            return convert_gemini_cli_session(log)
        if isinstance(whole, dict) and ("response" in whole or "stats" in whole):
            return convert_gemini_cli_json(log, instruction=instruction)
    return CONVERTERS[harness](log, instruction=instruction)


__all__ = [
    "CONVERTERS",
    "ConvertedLog",
    "convert_claude_code",
    "convert_codex",
    "convert_gemini_cli",
    "convert_gemini_cli_json",
    "convert_gemini_cli_session",
    "convert_log",
    "convert_opencode",
    "read_events",
]
