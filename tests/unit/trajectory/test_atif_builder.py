"""TrajectoryBuilder: what agents call as they run; its output always validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.trajectory import (
    Metrics,
    ToolCall,
    TrajectoryBuilder,
    TrajectoryError,
    validate_trajectory,
    write_trajectory,
)

TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]


def _builder() -> TrajectoryBuilder:
    return TrajectoryBuilder("builtin", "0.1.0", "scripted/demo", TOOLS, session_id="trial-1")


def test_builder_produces_valid_atif_with_summed_final_metrics(tmp_path: Path) -> None:
    b = _builder()
    b.add_system("You are an agent. Skills: csv-report.")
    b.add_user("Summarize data.csv")
    b.add_agent(
        "Reading the skill.",
        tool_calls=[{"tool_call_id": "c1", "function_name": "skill", "arguments": {"name": "csv-report"}}],
        reasoning="The skill matches.",
        metrics={"prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 0, "cost_usd": 0.002},
    )
    b.add_observation({"c1": "# CSV report ..."})
    b.add_agent(
        "",
        tool_calls=[ToolCall(tool_call_id="c2", function_name="bash", arguments={"command": "ls"})],
        metrics=Metrics(prompt_tokens=150, completion_tokens=12, cached_tokens=100, cost_usd=0.001),
    )
    b.add_observation([{"source_call_id": "c2", "content": "data.csv"}])
    b.add_agent("Done.", metrics={"prompt_tokens": 170, "completion_tokens": 3, "cached_tokens": 150})
    traj = b.finish(notes="test")

    assert [s.step_id for s in traj.steps] == [1, 2, 3, 4, 5]
    assert [s.source for s in traj.steps] == ["system", "user", "agent", "agent", "agent"]
    assert traj.agent.tool_definitions == TOOLS
    assert traj.session_id == "trial-1"
    assert traj.steps[2].reasoning_content == "The skill matches."
    assert traj.steps[2].observation is not None
    assert traj.steps[2].observation.results[0].content == "# CSV report ..."
    fm = traj.final_metrics
    assert fm is not None
    assert (fm.total_prompt_tokens, fm.total_completion_tokens, fm.total_cached_tokens) == (420, 25, 250)
    assert fm.total_cost_usd == pytest.approx(0.003)
    assert fm.total_steps == 5
    # every trajectory the builder makes passes the validator, also after a write/read round trip
    path = write_trajectory(traj, tmp_path / "trajectory.json")
    assert validate_trajectory(path) == traj


def test_results_attach_to_the_step_that_issued_the_call_even_after_later_steps() -> None:
    b = _builder()
    b.add_user("go")
    b.add_agent("", tool_calls=[{"tool_call_id": "a", "function_name": "bash", "arguments": {"command": "sleep 1"}}])
    b.add_agent("", tool_calls=[{"tool_call_id": "b", "function_name": "bash", "arguments": {"command": "true"}}])
    b.add_observation({"b": "fast", "a": "slow"})
    traj = b.finish()
    first, second = traj.steps[1], traj.steps[2]
    assert first.observation is not None and second.observation is not None
    assert [r.content for r in first.observation.results] == ["slow"]
    assert [r.content for r in second.observation.results] == ["fast"]


def test_final_metrics_cost_is_absent_when_no_step_has_a_cost() -> None:
    b = _builder()
    b.add_user("hi")
    b.add_agent("hello", metrics={"prompt_tokens": 5, "completion_tokens": 1})
    fm = b.finish().final_metrics
    assert fm is not None and fm.total_cost_usd is None and fm.total_prompt_tokens == 5


def test_observation_for_unknown_call_is_an_error() -> None:
    b = _builder()
    b.add_user("go")
    b.add_agent("", tool_calls=[{"tool_call_id": "a", "function_name": "bash", "arguments": {}}])
    with pytest.raises(TrajectoryError, match=r"^trajectory builder: observation for unknown tool_call_id 'zz'$"):
        b.add_observation({"zz": "?"})


def test_tool_call_ids_are_kept_across_steps_and_made_unique_within_one() -> None:
    # models do this: the same id every turn, twice in one turn, or none at all
    b = _builder()
    b.add_user("go")
    b.add_agent("", tool_calls=[{"tool_call_id": "call_0", "function_name": "bash", "arguments": {"command": "a"}}])
    b.add_agent(
        "",
        tool_calls=[
            {"tool_call_id": "call_0", "function_name": "bash", "arguments": {"command": "b"}},
            {"tool_call_id": "call_0", "function_name": "bash", "arguments": {"command": "c"}},
            {"tool_call_id": "", "function_name": "bash", "arguments": {"command": "d"}},
        ],
    )
    b.add_observation({"call_0": "out a"})
    b.add_observation({"call_0": "out b"})
    b.add_observation({"call_0#2": "out c"})
    traj = b.finish()
    first, second = traj.steps[1], traj.steps[2]
    assert second.tool_calls is not None
    assert [c.tool_call_id for c in second.tool_calls] == ["call_0", "call_0#2", "call_4"]
    assert second.tool_calls[1].extra == {"original_tool_call_id": "call_0"}
    assert first.observation is not None and first.observation.results[0].content == "out a"
    assert second.observation is not None
    assert [(r.source_call_id, r.content) for r in second.observation.results] == [
        ("call_0", "out b"),
        ("call_0#2", "out c"),
    ]
    assert b.has_call("call_0") and b.has_call("call_0#2")


def test_result_without_call_id_goes_to_the_last_agent_step_or_the_given_step() -> None:
    b = _builder()
    b.add_system("sys")
    b.add_agent("thinking aloud")
    b.add_observation([{"content": "non-tool feedback"}])
    b.add_observation([{"content": "context compacted"}], step_id=1)
    traj = b.finish()
    assert traj.steps[1].observation is not None
    assert traj.steps[1].observation.results[0].content == "non-tool feedback"
    assert traj.steps[0].observation is not None
    assert traj.steps[0].observation.results[0].content == "context compacted"


def test_observation_with_nothing_to_attach_to_is_an_error() -> None:
    b = _builder()
    b.add_user("hi")
    with pytest.raises(TrajectoryError, match="observation without a step to attach to"):
        b.add_observation([{"content": "x"}])


def test_empty_builder_cannot_finish() -> None:
    with pytest.raises(TrajectoryError, match=r"^trajectory builder: no steps recorded"):
        _builder().finish()


def test_bad_tool_call_shape_is_rejected_when_added() -> None:
    b = _builder()
    with pytest.raises(ValueError, match="function_name"):
        b.add_agent("", tool_calls=[{"tool_call_id": "a", "arguments": {}}])


def test_timestamps_are_iso8601_utc() -> None:
    b = _builder()
    step = b.add_user("hi")
    assert step.timestamp is not None and step.timestamp.endswith("Z")
    assert step.step_id == 1
