"""ATIF (Agent Trajectory Interchange Format) pydantic models, field names as in Harbor's RFC 0001.

Accepted versions: v1.0 to v1.8 (v1.8, Harbor's current default and what skillworks writes, adds audio
content parts). Rules enforced here, each as Harbor's models apply them:
- every object is strict (`extra="forbid"`): an unknown key is an error; custom data goes in `extra`;
- `step_id` starts at 1 and is sequential; `timestamp` is ISO 8601;
- `model_name`, `reasoning_effort`, `reasoning_content`, `tool_calls` and `metrics` only on agent steps;
- an agent step with `llm_call_count == 0` (deterministic dispatch, v1.7) carries no `metrics` and no
  `reasoning_content`;
- an observation result's `source_call_id` names a `tool_call_id` of the same step;
- `tool_call_id`s are unique within a step (Harbor's rule: not across the whole trajectory, since models
  and harnesses reuse ids such as `call_0` from turn to turn; a result is paired within its own step);
- embedded subagent trajectories (v1.7) each carry a unique `trajectory_id`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

SchemaVersion = Literal[
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
    "ATIF-v1.8",
]
SCHEMA_VERSION: SchemaVersion = "ATIF-v1.8"
StepSource = Literal["system", "user", "agent"]
AGENT_ONLY_FIELDS = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageSource(_Strict):
    """Where an image of a multimodal content part lives (ATIF v1.6)."""

    media_type: str = Field(description="e.g. image/png")
    path: str | None = Field(default=None, description="file path relative to the trajectory")
    url: str | None = None

    @model_validator(mode="after")
    def _one_location(self) -> ImageSource:
        if self.path is None and self.url is None:
            raise ValueError("an image source needs 'path' or 'url'")
        return self


class AudioSource(_Strict):
    """Where the audio of an audio content part lives (ATIF v1.8)."""

    media_type: str = Field(description="e.g. audio/wav, audio/mpeg")
    path: str = Field(min_length=1, description="file path relative to the trajectory")
    duration_sec: float | None = Field(default=None, ge=0)

    @field_validator("media_type")
    @classmethod
    def _audio_type(cls, value: str) -> str:
        if not value.startswith("audio/"):
            raise ValueError(f"not an audio media type: {value!r}")
        return value


def _source_kind(value: Any) -> str:
    media_type = value.get("media_type") if isinstance(value, dict) else getattr(value, "media_type", None)
    return "audio-source" if isinstance(media_type, str) and media_type.startswith("audio/") else "image-source"


# An image source and an audio source are told apart by their media type (audio/... is audio).
_MediaSource = Annotated[
    Annotated[ImageSource, Tag("image-source")] | Annotated[AudioSource, Tag("audio-source")],
    Discriminator(_source_kind),
]


class ContentPart(_Strict):
    """One part of a multimodal message or observation: text (v1.6), image (v1.6) or audio (v1.8)."""

    type: Literal["text", "image", "audio"]
    text: str | None = None
    source: _MediaSource | None = None

    @model_validator(mode="after")
    def _text_xor_media(self) -> ContentPart:
        if self.type == "text" and (self.text is None or self.source is not None):
            raise ValueError("a 'text' part carries 'text' and no 'source'")
        if self.type == "image" and (not isinstance(self.source, ImageSource) or self.text is not None):
            raise ValueError("an 'image' part carries an image 'source' and no 'text'")
        if self.type == "audio" and (not isinstance(self.source, AudioSource) or self.text is not None):
            raise ValueError("an 'audio' part carries an audio 'source' and no 'text'")
        return self


class Agent(_Strict):
    name: str = Field(description="agent system, e.g. claude-code, codex, builtin")
    version: str
    model_name: str | None = Field(default=None, description="default model; a step's model_name overrides it")
    tool_definitions: list[dict[str, Any]] | None = Field(
        default=None, description="tools offered to the model (OpenAI function-calling style schemas)"
    )
    extra: dict[str, Any] | None = None


class ToolCall(_Strict):
    tool_call_id: str = Field(min_length=1)
    function_name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(description="JSON object; may be empty")
    extra: dict[str, Any] | None = None


class Metrics(_Strict):
    prompt_tokens: int | None = Field(default=None, ge=0, description="all input tokens, cached included")
    completion_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0, description="subset of prompt_tokens read from cache")
    cost_usd: float | None = Field(default=None, ge=0)
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRef(_Strict):
    session_id: str | None = None
    trajectory_id: str | None = None
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None


class ObservationResult(_Strict):
    source_call_id: str | None = Field(default=None, description="tool_call_id of the same step's call")
    content: str | list[ContentPart] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Strict):
    results: list[ObservationResult]


class Step(_Strict):
    step_id: int = Field(ge=1, description="1-based, sequential")
    timestamp: str | None = Field(default=None, description="ISO 8601")
    source: StepSource
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str | list[ContentPart] = Field(description="required; may be an empty string")
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None

    @field_validator("timestamp")
    @classmethod
    def _iso8601(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
        return value

    @model_validator(mode="after")
    def _source_rules(self) -> Step:
        if self.source != "agent":
            for name in AGENT_ONLY_FIELDS:
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}: only allowed on agent steps (this step's source is {self.source!r})")
        elif self.llm_call_count == 0:
            for name in ("metrics", "reasoning_content"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}: must be absent when llm_call_count is 0 (deterministic dispatch)")
        seen: set[str] = set()
        for j, call in enumerate(self.tool_calls or ()):
            if call.tool_call_id in seen:
                raise ValueError(
                    f"tool_calls[{j}].tool_call_id: {call.tool_call_id!r} is used twice in this step "
                    "(ids must be unique within a step)"
                )
            seen.add(call.tool_call_id)
        if self.observation is not None:
            ids = seen
            for i, result in enumerate(self.observation.results):
                if result.source_call_id is not None and result.source_call_id not in ids:
                    raise ValueError(
                        f"observation.results[{i}].source_call_id: {result.source_call_id!r} is not the "
                        "tool_call_id of a tool call of this step"
                    )
        return self


class FinalMetrics(_Strict):
    total_prompt_tokens: int | None = Field(default=None, ge=0)
    total_completion_tokens: int | None = Field(default=None, ge=0)
    total_cached_tokens: int | None = Field(default=None, ge=0)
    total_cost_usd: float | None = Field(default=None, ge=0)
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class Trajectory(_Strict):
    schema_version: SchemaVersion = SCHEMA_VERSION
    session_id: str | None = Field(default=None, description="run-scoped id (optional since v1.7)")
    trajectory_id: str | None = Field(default=None, description="per-document id (v1.7)")
    agent: Agent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="after")
    def _cross_step_rules(self) -> Trajectory:
        for i, step in enumerate(self.steps):
            if step.step_id != i + 1:
                raise ValueError(f"steps[{i}] (step_id {step.step_id}): step_id: expected {i + 1} (sequential from 1)")
        ids: set[str] = set()
        for k, sub in enumerate(self.subagent_trajectories or ()):
            if sub.trajectory_id is None:
                raise ValueError(f"subagent_trajectories[{k}].trajectory_id: required on embedded subagents")
            if sub.trajectory_id in ids:
                raise ValueError(f"subagent_trajectories[{k}].trajectory_id: {sub.trajectory_id!r} is not unique")
            ids.add(sub.trajectory_id)
        return self

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form written to trajectory.json (unset optional fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)
