"""Native harness logs -> ATIF, on hand-written fixture logs (tests/fixtures/native_logs, see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.trajectory import (
    CONVERTERS,
    TrajectoryError,
    convert_claude_code,
    convert_codex,
    convert_gemini_cli,
    convert_gemini_cli_json,
    convert_opencode,
    validate_trajectory,
)

LOGS = Path(__file__).parents[2] / "fixtures" / "native_logs"
INSTRUCTION = "Summarize data.csv into report.md."


def _calls(traj: object) -> list[tuple[str, dict[str, object]]]:
    return [(c.function_name, c.arguments) for s in traj.steps for c in s.tool_calls or ()]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "harness,fixture",
    [
        ("claude-code", "claude_code.stream.jsonl"),
        ("codex", "codex.exec.jsonl"),
        ("gemini-cli", "gemini_cli.stream.jsonl"),
        ("opencode", "opencode.run.jsonl"),
    ],
)
def test_every_converter_output_passes_the_validator(harness: str, fixture: str) -> None:
    converted = CONVERTERS[harness](LOGS / fixture, instruction=INSTRUCTION)
    traj = converted.trajectory
    assert traj.agent.name == harness
    again = validate_trajectory(json.loads(json.dumps(traj.to_json_dict())))
    assert again == traj
    assert traj.steps[0].source == "user" and traj.steps[0].message == INSTRUCTION
    fm = traj.final_metrics
    assert fm is not None and fm.total_steps == len(traj.steps)
    # each call's result is attached to the step that issued it
    for step in traj.steps:
        ids = {c.tool_call_id for c in step.tool_calls or ()}
        for result in step.observation.results if step.observation else ():
            assert result.source_call_id in ids


def test_claude_code_stream_json() -> None:
    out = convert_claude_code(LOGS / "claude_code.stream.jsonl", instruction=INSTRUCTION)
    traj = out.trajectory
    assert out.listed_skills == ["csv-report", "debug", "verify", "simplify", "code-review"]
    assert traj.session_id == "3f1c2a9e-8d4b-4c61-9a57-2b0e7d5c1f42"
    assert traj.agent.version == "2.1.328"
    assert traj.agent.model_name == "claude-sonnet-4-5-20250929"
    assert traj.agent.tool_definitions is not None and {"name": "Skill"} in traj.agent.tool_definitions
    # events sharing message.id (one content block each) form one agent step
    assert [s.source for s in traj.steps] == ["user", "agent", "user", "agent", "agent", "agent"]
    first = traj.steps[1]
    assert first.reasoning_content == "The csv-report skill fits this task."
    assert _calls(traj) == [
        ("Skill", {"skill": "csv-report"}),
        (
            "Bash",
            {
                "command": "python3 /root/.claude/skills/csv-report/scripts/summarize.py /app/data.csv",
                "description": "Summarize data.csv with the csv-report skill",
            },
        ),
        ("Write", {"file_path": "/app/report.md", "content": "# Sales report\n\nRows: 4\nTotal: 1234.50\n"}),
    ]
    assert first.observation is not None
    assert first.observation.results[0].content == "Launching skill: csv-report"
    # the skill body the harness injects becomes a user step, marked as injected
    assert traj.steps[2].extra == {"injected_by": "claude-code"}
    assert str(traj.steps[2].message).startswith("Base directory for this skill")
    # per-step metrics: prompt = input + cache creation + cache read; usage taken once per message id
    m = first.metrics
    assert m is not None
    assert (m.prompt_tokens, m.cached_tokens, m.completion_tokens) == (13104, 11000, 60)
    assert m.extra == {"cache_creation_input_tokens": 2100}
    # totals from the result event, and they agree with the per-step sums
    fm = traj.final_metrics
    assert fm is not None
    assert (fm.total_prompt_tokens, fm.total_completion_tokens, fm.total_cached_tokens) == (55918, 335, 52400)
    assert fm.total_cost_usd == pytest.approx(0.0412)
    assert sum(s.metrics.prompt_tokens or 0 for s in traj.steps if s.metrics) == 55918
    assert out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cost_usd) == (55918, 335, 0.0412)
    assert out.usage.source == "harness" and out.usage.calls == 4
    assert out.final_message is not None and out.final_message.startswith("Wrote /app/report.md")
    assert out.errors == []


def test_claude_code_error_result_is_reported() -> None:
    lines = [
        json.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "skills": []}),
        json.dumps(
            {
                "type": "result",
                "subtype": "error_max_turns",
                "is_error": True,
                "session_id": "s",
                "total_cost_usd": 0.0,
                "usage": {"input_tokens": 1, "output_tokens": 0},
            }
        ),
    ]
    out = convert_claude_code(lines, instruction="x")
    assert out.errors == ["error_max_turns"]
    assert out.listed_skills == []


def test_codex_exec_json() -> None:
    out = convert_codex(LOGS / "codex.exec.jsonl", instruction=INSTRUCTION, model_name="gpt-5-codex")
    traj = out.trajectory
    assert traj.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert out.listed_skills is None
    assert [name for name, _ in _calls(traj)] == ["exec_command", "exec_command", "apply_patch"]  # tools, not events
    assert [c.extra for s in traj.steps for c in s.tool_calls or ()][2] == {"codex_item_type": "file_change"}
    assert _calls(traj)[0][1] == {"command": "/bin/bash -lc 'cat /root/.agents/skills/csv-report/SKILL.md'"}
    assert _calls(traj)[2][1] == {"changes": [{"path": "/app/notes.md", "kind": "add"}]}
    read_step = traj.steps[1]
    assert read_step.reasoning_content == "**Checking the csv-report skill**"
    assert read_step.observation is not None
    result = read_step.observation.results[0]
    assert result.content is not None and "name: csv-report" in str(result.content)
    assert result.extra == {"exit_code": 0, "status": "completed"}
    last = traj.steps[-1]
    assert last.message == "Created report.md with the csv-report skill and a short notes.md."
    assert last.metrics is not None
    assert (last.metrics.prompt_tokens, last.metrics.cached_tokens, last.metrics.completion_tokens) == (
        24500,
        18000,
        610,
    )
    assert last.metrics.extra == {"reasoning_output_tokens": 256}
    assert last.extra is not None and last.extra["usage_scope"] == "turn"
    assert out.usage is not None and (out.usage.input_tokens, out.usage.output_tokens) == (24500, 610)
    assert out.final_message == last.message


def test_codex_turn_failed_and_stream_errors_are_collected() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t"}',
        "Reading prompt from stdin...",  # a banner line: skipped, not fatal
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"model metadata not found"}}',
        '{"type":"error","message":"stream disconnected"}',
        '{"type":"turn.failed","error":{"message":"429 Too Many Requests"}}',
    ]
    out = convert_codex(lines, instruction="x")
    assert out.errors == ["model metadata not found", "stream disconnected", "429 Too Many Requests"]
    assert out.skipped_lines == 1
    assert out.usage is None
    assert [s.source for s in out.trajectory.steps] == ["user"]


def test_gemini_cli_stream_json() -> None:
    out = convert_gemini_cli(LOGS / "gemini_cli.stream.jsonl", instruction=INSTRUCTION)
    traj = out.trajectory
    assert traj.session_id == "c7a6f5e4-1b2d-4e3f-8a9b-0c1d2e3f4a5b"
    assert traj.agent.model_name == "gemini-2.5-pro"
    # the user message Gemini echoes is the instruction: it appears once
    assert [s.source for s in traj.steps] == ["user", "agent", "agent", "agent", "agent"]
    assert [n for n, _ in _calls(traj)] == ["activate_skill", "run_shell_command", "write_file"]
    assert traj.steps[2].message == "Running the skill's summarizer."  # deltas joined
    assert traj.steps[2].tool_calls is not None and traj.steps[2].tool_calls[0].function_name == "run_shell_command"
    assert traj.steps[-1].message == "Done: report.md written."
    m = traj.steps[-1].metrics
    assert m is not None and (m.prompt_tokens, m.completion_tokens, m.cached_tokens) == (30800, 450, 12000)
    assert out.usage is not None and out.usage.input_tokens == 30800
    assert out.final_message == "Done: report.md written."


def test_gemini_cli_error_events() -> None:
    lines = [
        '{"type":"init","timestamp":"2026-11-21T10:00:00Z","session_id":"g","model":"gemini-2.5-flash"}',
        '{"type":"error","timestamp":"2026-11-21T10:00:01Z","severity":"warning","message":"loop detected"}',
        '{"type":"result","timestamp":"2026-11-21T10:00:02Z","status":"error",'
        '"error":{"type":"FatalAuthenticationError","message":"API key not valid"}}',
    ]
    out = convert_gemini_cli(lines, instruction="x")
    assert out.errors == ["warning: loop detected", "API key not valid"]
    assert [s.source for s in out.trajectory.steps] == ["user"]


def test_gemini_cli_json_output() -> None:
    out = convert_gemini_cli_json(LOGS / "gemini_cli.output.json", instruction=INSTRUCTION)
    traj = out.trajectory
    assert traj.agent.model_name == "gemini-2.5-pro"
    assert [s.source for s in traj.steps] == ["user", "agent"]
    assert traj.steps[1].message == "Done: report.md written."
    m = traj.steps[1].metrics
    assert m is not None and (m.prompt_tokens, m.completion_tokens, m.cached_tokens) == (30800, 450, 12000)


def test_gemini_cli_json_output_that_is_not_json() -> None:
    with pytest.raises(TrajectoryError, match=r"^gemini-cli output: not valid JSON"):
        convert_gemini_cli_json("Loaded cached credentials.\n{broken")


def test_opencode_run_json() -> None:
    out = convert_opencode(LOGS / "opencode.run.jsonl", instruction=INSTRUCTION)
    traj = out.trajectory
    assert traj.session_id == "ses_494719016ffe85dkDMj0FPRbHK"
    # one agent step per step_start/step_finish pair (one model call each)
    assert [s.source for s in traj.steps] == ["user", "agent", "agent", "agent", "agent"]
    assert _calls(traj) == [
        ("skill", {"name": "csv-report"}),
        (
            "bash",
            {
                "command": "cd ~/.config/opencode/skill/csv-report && python3 scripts/summarize.py /app/data.csv",
                "description": "Summarize data.csv",
            },
        ),
        ("write", {"filePath": "/app/report.md", "content": "# Sales report\n\nRows: 4\nTotal: 1234.50\n"}),
    ]
    assert traj.steps[1].timestamp == "2025-12-29T19:20:59.338Z"
    bash_step = traj.steps[2]
    assert bash_step.message == "Running the summarizer from the skill."
    assert bash_step.observation is not None and bash_step.observation.results[0].extra == {
        "status": "completed",
        "exit_code": 0,
    }
    m = traj.steps[1].metrics
    assert m is not None
    assert (m.prompt_tokens, m.cached_tokens, m.completion_tokens, m.cost_usd) == (11420, 9800, 45, 0.0061)
    fm = traj.final_metrics
    assert fm is not None and fm.total_prompt_tokens == 46900 and fm.total_cost_usd == pytest.approx(0.0192)
    assert out.usage is not None and out.usage.calls == 4 and out.usage.cost_usd == pytest.approx(0.0192)
    assert out.final_message == "report.md is written."


def test_opencode_error_event() -> None:
    lines = [
        '{"type":"error","timestamp":1767036059338,"sessionID":"ses_x",'
        '"error":{"name":"APIError","data":{"message":"rate limited"}}}'
    ]
    out = convert_opencode(lines, instruction="x")
    assert out.errors == ["rate limited"]


@pytest.mark.parametrize("convert", [convert_claude_code, convert_codex, convert_gemini_cli, convert_opencode])
def test_a_log_without_events_is_an_error(convert: object, tmp_path: Path) -> None:
    empty = tmp_path / "agent.log"
    empty.write_text("npm WARN deprecated\n\n")
    with pytest.raises(TrajectoryError, match=rf"^{empty}: no JSON events in the log$"):
        convert(empty)  # type: ignore[operator]


def test_missing_log_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match=r"cannot read log"):
        convert_codex(tmp_path / "missing.jsonl")


def test_a_log_with_events_but_no_steps_and_no_instruction_cannot_be_atif() -> None:
    with pytest.raises(TrajectoryError, match=r"^trajectory builder: no steps recorded \(ATIF needs at least one\)$"):
        convert_codex(['{"type":"thread.started","thread_id":"t"}'])


def test_gemini_cli_result_with_per_model_stats() -> None:
    lines = [
        '{"type":"init","timestamp":"2026-11-21T10:00:00Z","session_id":"g","model":"gemini-2.5-pro"}',
        '{"type":"message","timestamp":"2026-11-21T10:00:01Z","role":"assistant","content":"hi","delta":true}',
        '{"type":"result","timestamp":"2026-11-21T10:00:02Z","status":"success","stats":{"models":'
        '{"gemini-2.5-pro":{"tokens":{"prompt":900,"candidates":30,"thoughts":12,"cached":400,"total":942}}}}}',
    ]
    out = convert_gemini_cli(lines, instruction="x")
    m = out.trajectory.steps[-1].metrics
    assert m is not None and (m.prompt_tokens, m.completion_tokens, m.cached_tokens) == (900, 42, 400)


def test_codex_command_still_running_when_stopped_is_kept_as_a_call() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t"}',
        '{"type":"turn.started"}',
        '{"type":"item.started","item":{"id":"item_0","type":"command_execution",'
        '"command":"python3 /root/.agents/skills/csv-report/scripts/summarize.py big.csv",'
        '"aggregated_output":"","exit_code":null,"status":"in_progress"}}',
    ]
    traj = convert_codex(lines, instruction="x").trajectory
    last = traj.steps[-1]
    assert last.tool_calls is not None and last.tool_calls[0].tool_call_id == "item_0"
    assert last.observation is None and last.extra == {"codex_item_status": "unfinished"}
