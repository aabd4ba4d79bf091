"""ATIF validation: each RFC rule is enforced and the error names the file, the step and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from skillworks.errors import UserError
from skillworks.trajectory import (
    SCHEMA_VERSION,
    Trajectory,
    TrajectoryError,
    validate_trajectory,
    write_trajectory,
)


def _valid() -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "s-1",
        "agent": {
            "name": "builtin",
            "version": "0.1.0",
            "model_name": "scripted/demo",
            "tool_definitions": [{"type": "function", "function": {"name": "bash"}}],
        },
        "steps": [
            {"step_id": 1, "timestamp": "2026-11-21T10:00:00Z", "source": "system", "message": "You are an agent."},
            {"step_id": 2, "timestamp": "2026-11-21T10:00:01Z", "source": "user", "message": "Write hello.txt"},
            {
                "step_id": 3,
                "timestamp": "2026-11-21T10:00:02.500+00:00",
                "source": "agent",
                "model_name": "scripted/demo",
                "message": "",
                "reasoning_content": "Use bash.",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "echo hi > hello.txt"}}
                ],
                "observation": {"results": [{"source_call_id": "c1", "content": "", "extra": {"exit_code": 0}}]},
                "metrics": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 40, "cost_usd": 0.001},
            },
            {
                "step_id": 4,
                "source": "agent",
                "message": "Done.",
                "metrics": {"prompt_tokens": 130, "completion_tokens": 5},
            },
        ],
        "final_metrics": {
            "total_prompt_tokens": 230,
            "total_completion_tokens": 25,
            "total_cached_tokens": 40,
            "total_cost_usd": 0.001,
            "total_steps": 4,
        },
        "notes": "hand-written",
        "extra": {"k": 1},
    }


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(TrajectoryError) as info:
        validate_trajectory(data, name="trajectory.json")
    text = str(info.value)
    assert "\n" not in text
    return text


def test_valid_trajectory_parses_with_rfc_field_names() -> None:
    traj = validate_trajectory(_valid())
    assert traj.schema_version == "ATIF-v1.7"
    assert SCHEMA_VERSION == "ATIF-v1.8"  # what skillworks writes: Harbor's current default
    assert traj.steps[2].tool_calls is not None
    assert traj.steps[2].tool_calls[0].function_name == "bash"
    assert traj.steps[2].observation is not None
    assert traj.steps[2].observation.results[0].source_call_id == "c1"
    dumped = traj.to_json_dict()
    assert set(dumped) == {"schema_version", "session_id", "agent", "steps", "notes", "final_metrics", "extra"}
    assert "timestamp" not in dumped["steps"][3]  # unset optional fields are left out


def test_older_schema_versions_and_v17_optional_session_id_are_accepted() -> None:
    data = _valid()
    data["schema_version"] = "ATIF-v1.4"
    del data["session_id"]
    assert validate_trajectory(data).session_id is None


def test_missing_field_names_step_and_field() -> None:
    data = _valid()
    del data["steps"][2]["tool_calls"][0]["function_name"]
    assert _error(data) == "trajectory.json: steps[2] (step_id 3): tool_calls[0].function_name: field required"


def test_unknown_step_key_is_rejected_with_allowed_keys() -> None:
    data = _valid()
    data["steps"][1]["role"] = "user"
    msg = _error(data)
    assert msg.startswith("trajectory.json: steps[1] (step_id 2): role: unknown key (allowed: step_id, timestamp,")
    assert "reasoning_content" in msg and "llm_call_count" in msg


def test_unknown_key_in_nested_metrics_is_rejected() -> None:
    data = _valid()
    data["steps"][2]["metrics"]["input_tokens"] = 5
    msg = _error(data)
    assert msg.startswith("trajectory.json: steps[2] (step_id 3): metrics.input_tokens: unknown key (allowed:")
    assert "prompt_tokens" in msg


def test_unknown_root_key_is_rejected() -> None:
    data = _valid()
    data["trajectory"] = []
    assert _error(data).startswith("trajectory.json: trajectory: unknown key (allowed: schema_version, session_id")


def test_step_ids_must_be_sequential_from_one() -> None:
    data = _valid()
    data["steps"][3]["step_id"] = 5
    assert _error(data) == "trajectory.json: steps[3] (step_id 5): step_id: expected 4 (sequential from 1)"


def test_step_id_must_be_positive() -> None:
    data = _valid()
    data["steps"][0]["step_id"] = 0
    assert _error(data).startswith("trajectory.json: steps[0] (step_id 0): step_id: input should be greater than")


@pytest.mark.parametrize(
    "field,value",
    [
        ("model_name", "m"),
        ("reasoning_content", "r"),
        ("reasoning_effort", "low"),
        ("metrics", {"prompt_tokens": 1}),
        ("tool_calls", [{"tool_call_id": "x", "function_name": "bash", "arguments": {}}]),
    ],
)
def test_agent_only_fields_are_rejected_on_user_steps(field: str, value: Any) -> None:
    data = _valid()
    data["steps"][1][field] = value
    assert _error(data) == (
        f"trajectory.json: steps[1] (step_id 2): {field}: only allowed on agent steps (this step's source is 'user')"
    )


def test_source_must_be_system_user_or_agent() -> None:
    data = _valid()
    data["steps"][1]["source"] = "assistant"
    assert _error(data).startswith("trajectory.json: steps[1] (step_id 2): source: input should be 'system'")


def test_timestamp_must_be_iso8601() -> None:
    data = _valid()
    data["steps"][0]["timestamp"] = "yesterday"
    assert _error(data) == "trajectory.json: steps[0] (step_id 1): timestamp: not an ISO 8601 timestamp: 'yesterday'"


def test_observation_must_reference_a_tool_call_of_the_same_step() -> None:
    data = _valid()
    data["steps"][3]["observation"] = {"results": [{"source_call_id": "c1", "content": "late"}]}
    assert _error(data) == (
        "trajectory.json: steps[3] (step_id 4): observation.results[0].source_call_id: 'c1' is not the "
        "tool_call_id of a tool call of this step"
    )


def test_observation_without_source_call_id_is_allowed_on_system_steps() -> None:
    data = _valid()
    data["steps"][0]["observation"] = {"results": [{"content": "context reset"}]}
    assert validate_trajectory(data).steps[0].observation is not None


def test_tool_call_ids_may_recur_across_steps_as_harbor_allows() -> None:
    data = _valid()
    data["steps"][3]["tool_calls"] = [{"tool_call_id": "c1", "function_name": "bash", "arguments": {}}]
    data["steps"][3]["observation"] = {"results": [{"source_call_id": "c1", "content": "again"}]}
    traj = validate_trajectory(data)
    assert [s.tool_calls[0].tool_call_id for s in traj.steps[2:] if s.tool_calls] == ["c1", "c1"]


def test_tool_call_ids_are_unique_within_a_step() -> None:
    data = _valid()
    data["steps"][2]["tool_calls"].append({"tool_call_id": "c1", "function_name": "bash", "arguments": {}})
    assert _error(data) == (
        "trajectory.json: steps[2] (step_id 3): tool_calls[1].tool_call_id: 'c1' is used twice in this step "
        "(ids must be unique within a step)"
    )


def test_v18_audio_content_parts_are_accepted() -> None:
    data = _valid()
    data["schema_version"] = "ATIF-v1.8"
    data["steps"][1]["message"] = [
        {"type": "text", "text": "Transcribe this"},
        {"type": "audio", "source": {"media_type": "audio/wav", "path": "media/q.wav", "duration_sec": 3.5}},
    ]
    traj = validate_trajectory(data)
    part = traj.steps[1].message[1]
    assert not isinstance(part, str) and part.type == "audio" and part.source is not None
    assert part.source.model_dump(exclude_none=True) == {
        "media_type": "audio/wav",
        "path": "media/q.wav",
        "duration_sec": 3.5,
    }
    assert validate_trajectory(traj.to_json_dict()) == traj  # round-trips


def test_audio_part_with_a_non_audio_media_type_is_rejected() -> None:
    data = _valid()
    data["steps"][1]["message"] = [{"type": "audio", "source": {"media_type": "image/png", "path": "a.png"}}]
    assert _error(data) == (
        "trajectory.json: steps[1] (step_id 2): message[0]: an 'audio' part carries an audio 'source' and no 'text'"
    )


def test_audio_part_without_a_path_is_rejected() -> None:
    data = _valid()
    data["steps"][1]["message"] = [{"type": "audio", "source": {"media_type": "audio/wav"}}]
    assert _error(data) == "trajectory.json: steps[1] (step_id 2): message[0].source.path: field required"


def test_arguments_must_be_an_object() -> None:
    data = _valid()
    data["steps"][2]["tool_calls"][0]["arguments"] = "echo hi"
    assert _error(data) == (
        "trajectory.json: steps[2] (step_id 3): tool_calls[0].arguments: input should be a valid dictionary"
    )


def test_negative_token_counts_are_rejected() -> None:
    data = _valid()
    data["steps"][2]["metrics"]["completion_tokens"] = -1
    assert _error(data).startswith(
        "trajectory.json: steps[2] (step_id 3): metrics.completion_tokens: input should be greater than or equal"
    )


def test_llm_call_count_zero_forbids_metrics() -> None:
    data = _valid()
    data["steps"][3]["llm_call_count"] = 0
    assert _error(data) == (
        "trajectory.json: steps[3] (step_id 4): metrics: must be absent when llm_call_count is 0 "
        "(deterministic dispatch)"
    )


def test_message_is_required_and_may_be_empty() -> None:
    data = _valid()
    del data["steps"][1]["message"]
    assert _error(data) == "trajectory.json: steps[1] (step_id 2): message: field required"


def test_multimodal_content_parts_text_xor_image() -> None:
    data = _valid()
    data["steps"][1]["message"] = [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}},
    ]
    assert validate_trajectory(data).steps[1].message[1].source is not None  # type: ignore[union-attr]
    data["steps"][1]["message"] = [{"type": "image", "text": "not an image"}]
    assert _error(data) == (
        "trajectory.json: steps[1] (step_id 2): message[0]: an 'image' part carries an image 'source' and no 'text'"
    )


def test_steps_must_not_be_empty() -> None:
    data = _valid()
    data["steps"] = []
    assert _error(data).startswith("trajectory.json: steps: list should have at least 1 item")


def test_embedded_subagents_need_unique_trajectory_ids() -> None:
    data = _valid()
    child = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "sub", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "x"}],
    }
    data["subagent_trajectories"] = [child]
    assert _error(data) == "trajectory.json: subagent_trajectories[0].trajectory_id: required on embedded subagents"
    data["subagent_trajectories"] = [{**child, "trajectory_id": "a"}, {**child, "trajectory_id": "a"}]
    assert _error(data) == "trajectory.json: subagent_trajectories[1].trajectory_id: 'a' is not unique"


def test_more_problems_are_counted() -> None:
    data = _valid()
    del data["agent"]["name"]
    del data["agent"]["version"]
    assert _error(data) == "trajectory.json: agent.name: field required (and 1 more problem)"


def test_file_errors_are_user_errors_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(UserError, match=r"nope\.json: file not found$"):
        validate_trajectory(missing)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TrajectoryError, match=r"bad\.json: not valid JSON: .* at line 1 column 2$"):
        validate_trajectory(bad)
    arr = tmp_path / "arr.json"
    arr.write_text("[]")
    with pytest.raises(TrajectoryError, match=r"arr\.json: expected a JSON object at the top level, got list$"):
        validate_trajectory(arr)


def test_file_validation_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    data = _valid()
    data["steps"][2]["tool_calls"][0]["function_name"] = ""
    path.write_text(json.dumps(data))
    with pytest.raises(TrajectoryError) as info:
        validate_trajectory(path)
    assert str(info.value) == (
        f"{path}: steps[2] (step_id 3): tool_calls[0].function_name: string should have at least 1 character"
    )


def test_write_then_read_round_trip(tmp_path: Path) -> None:
    traj = validate_trajectory(_valid())
    path = write_trajectory(traj, tmp_path / "trial" / "trajectory.json")
    assert path.exists()
    again = validate_trajectory(path)
    assert again == traj
    assert json.loads(path.read_text()) == traj.to_json_dict()
    assert not list(path.parent.glob(".trajectory-*"))  # no temp file left behind
    sibling = path.parent / "skills.json"
    sibling.write_text("{}")
    assert path.stat().st_mode & 0o777 == sibling.stat().st_mode & 0o777  # not mkstemp's 0600 (issue 17)


def test_write_refuses_an_invalid_trajectory_and_leaves_no_file(tmp_path: Path) -> None:
    good = validate_trajectory(_valid())
    broken_steps = copy.deepcopy(good.steps)
    broken_steps[3] = broken_steps[3].model_copy(update={"step_id": 9})
    broken = Trajectory.model_construct(**{**dict(good), "steps": broken_steps})
    target = tmp_path / "trajectory.json"
    with pytest.raises(TrajectoryError, match=r"trajectory\.json: steps\[3\] \(step_id 9\): step_id: expected 4"):
        write_trajectory(broken, target)
    assert not target.exists()
    assert not list(tmp_path.iterdir())
