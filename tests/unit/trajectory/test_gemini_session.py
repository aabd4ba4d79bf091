"""Gemini CLI's saved chat session file -> ATIF (hand-written fixture, see tests/fixtures/native_logs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.trajectory import TrajectoryError, convert_gemini_cli_session, convert_log, validate_trajectory

LOGS = Path(__file__).parents[2] / "fixtures" / "native_logs"
SESSION = LOGS / "gemini_cli.session.json"


def test_session_file_converts_to_valid_atif_with_per_call_tokens() -> None:
    out = convert_gemini_cli_session(SESSION)
    traj = out.trajectory
    assert validate_trajectory(json.loads(json.dumps(traj.to_json_dict()))) == traj
    assert traj.session_id == "c7a6f5e4-1b2d-4e3f-8a9b-0c1d2e3f4a5b"
    assert traj.agent.name == "gemini-cli" and traj.agent.model_name == "gemini-2.5-pro"
    assert [s.source for s in traj.steps] == ["user", "agent", "agent", "system", "agent"]
    assert traj.steps[0].message == "Summarize data.csv into report.md."
    first = traj.steps[1]
    assert first.reasoning_content == "**Choosing a skill**\nThe csv-report skill fits this task."
    assert first.tool_calls is not None and first.tool_calls[0].function_name == "activate_skill"
    assert first.tool_calls[0].arguments == {"name": "csv-report"}
    assert first.observation is not None and first.observation.results[0].content == "Skill csv-report activated."
    # thinking tokens are billed as output: completion = output + thoughts
    assert first.metrics is not None
    assert (first.metrics.prompt_tokens, first.metrics.completion_tokens, first.metrics.cached_tokens) == (9800, 100, 0)
    second = traj.steps[2]
    assert second.observation is not None
    assert [(r.source_call_id, r.content) for r in second.observation.results] == [
        ("run_shell_command-1763719203000-2", "# Sales report\n\nRows: 4\nTotal: 1234.50\n"),
        ("write_file-1763719205000-3", "Permission denied: /app/report.md"),
    ]
    assert second.observation.results[1].extra == {"status": "error"}
    assert out.usage is not None and out.usage.source == "harness"
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cached_tokens) == (30800, 400, 12000)
    fm = traj.final_metrics
    assert fm is not None and fm.total_prompt_tokens == 30800 and fm.total_completion_tokens == 400
    assert out.errors == ["Tool write_file failed."]
    assert out.final_message == "Done: the summary is above; report.md could not be written."


def test_convert_log_tells_the_three_gemini_formats_apart() -> None:
    assert convert_log("gemini-cli", SESSION).trajectory.steps[1].tool_calls is not None
    stream = convert_log("gemini-cli", LOGS / "gemini_cli.stream.jsonl", instruction="x")
    assert stream.trajectory.notes is not None and "stream-json" in stream.trajectory.notes
    single = convert_log("gemini-cli", LOGS / "gemini_cli.output.json")
    assert single.trajectory.notes is not None and "json output" in single.trajectory.notes


def test_a_json_object_that_is_not_a_session_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_text(json.dumps({"sessionId": "x", "turns": []}))
    with pytest.raises(TrajectoryError, match=r"s\.json: not a Gemini CLI session file"):
        convert_gemini_cli_session(bad)
    empty = tmp_path / "e.json"
    empty.write_text(json.dumps({"sessionId": "x", "messages": []}))
    with pytest.raises(TrajectoryError, match=r"e\.json: the session has no messages"):
        convert_gemini_cli_session(empty)
