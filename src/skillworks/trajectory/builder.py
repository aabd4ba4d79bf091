"""TrajectoryBuilder: produce ATIF while an agent runs (the builtin agent and every log converter use it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from skillworks.trajectory.models import (
    SCHEMA_VERSION,
    Agent,
    FinalMetrics,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)
from skillworks.trajectory.validate import TrajectoryError, validate_trajectory

ToolCallLike = ToolCall | Mapping[str, Any]
ResultLike = ObservationResult | Mapping[str, Any]


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string (millisecond precision, `Z` suffix)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TrajectoryBuilder:
    """Accumulates steps; `finish()` returns a validated Trajectory with final_metrics summed from steps.

    Observation results attach to the agent step that issued the matching tool call (RFC: a result's
    `source_call_id` names a `tool_call_id` of the same step); when an id recurs across steps, a result
    answers the oldest call with that id not yet answered.
    """

    def __init__(
        self,
        agent_name: str,
        agent_version: str,
        model_name: str | None = None,
        tool_definitions: Sequence[Mapping[str, Any]] | None = None,
        *,
        session_id: str | None = None,
        agent_extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.agent = Agent(
            name=agent_name,
            version=agent_version,
            model_name=model_name,
            tool_definitions=[dict(t) for t in tool_definitions] if tool_definitions else None,
            extra=dict(agent_extra) if agent_extra else None,
        )
        self.session_id = session_id or str(uuid.uuid4())
        self.steps: list[Step] = []
        # id as the model gave it (and as recorded, when renamed) -> [(recorded id, index in self.steps)]
        self._slots: dict[str, list[tuple[str, int]]] = {}
        self._answered: set[tuple[str, int]] = set()
        self._n_calls = 0

    # -- adding steps ----------------------------------------------------------------------------------
    def add_system(self, text: str, *, timestamp: str | None = None, extra: Mapping[str, Any] | None = None) -> Step:
        return self._append(
            Step(
                step_id=1,
                source="system",
                message=text,
                timestamp=timestamp or now_iso(),
                extra=dict(extra) if extra else None,
            )
        )

    def add_user(self, text: str, *, timestamp: str | None = None, extra: Mapping[str, Any] | None = None) -> Step:
        return self._append(
            Step(
                step_id=1,
                source="user",
                message=text,
                timestamp=timestamp or now_iso(),
                extra=dict(extra) if extra else None,
            )
        )

    def add_agent(
        self,
        message: str = "",
        tool_calls: Iterable[ToolCallLike] | None = None,
        reasoning: str | None = None,
        metrics: Metrics | Mapping[str, Any] | None = None,
        *,
        model_name: str | None = None,
        timestamp: str | None = None,
        llm_call_count: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Step:
        calls = self._unique_calls(tool_calls or (), taken=set())
        step = Step(
            step_id=1,
            source="agent",
            message=message,
            reasoning_content=reasoning or None,
            tool_calls=calls or None,
            metrics=_metrics(metrics),
            model_name=model_name,
            timestamp=timestamp or now_iso(),
            llm_call_count=llm_call_count,
            extra=dict(extra) if extra else None,
        )
        self._append(step)
        self._register(calls, len(self.steps) - 1)
        return self.steps[-1]

    def add_tool_calls(self, tool_calls: Iterable[ToolCallLike]) -> Step:
        """Add tool calls to the last agent step (harness logs that stream calls after the text)."""
        index = self._last_agent_index()
        if index is None:
            return self.add_agent("", tool_calls=tool_calls)
        step = self.steps[index]
        calls = self._unique_calls(tool_calls, taken={c.tool_call_id for c in step.tool_calls or ()})
        self._register(calls, index)
        self.steps[index] = step.model_copy(update={"tool_calls": [*(step.tool_calls or ()), *calls]})
        return self.steps[index]

    def update_last_agent(
        self,
        *,
        message: str | None = None,
        reasoning: str | None = None,
        metrics: Metrics | Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Step | None:
        """Append text/reasoning to, or set metrics/extra on, the last agent step (None if there is none)."""
        index = self._last_agent_index()
        if index is None:
            return None
        step = self.steps[index]
        update: dict[str, Any] = {}
        if message:
            old = step.message if isinstance(step.message, str) else ""
            update["message"] = f"{old}\n\n{message}" if old else message
        if reasoning:
            update["reasoning_content"] = (
                f"{step.reasoning_content}\n\n{reasoning}" if step.reasoning_content else reasoning
            )
        if metrics is not None:
            update["metrics"] = _metrics(metrics)
        if extra:
            update["extra"] = {**(step.extra or {}), **extra}
        self.steps[index] = Step.model_validate({**step.model_dump(), **update})
        return self.steps[index]

    def add_observation(self, results: Iterable[ResultLike] | Mapping[str, str], *, step_id: int | None = None) -> None:
        """Attach results. A mapping is read as {tool_call_id: content}. Each result goes to the step whose
        tool call it answers; results without a source_call_id go to `step_id` or the last agent step."""
        if isinstance(results, Mapping):
            items = [ObservationResult(source_call_id=k, content=v) for k, v in results.items()]
        else:
            items = [
                r if isinstance(r, ObservationResult) else ObservationResult.model_validate(dict(r)) for r in results
            ]
        for result in items:
            if result.source_call_id is not None:
                slot = self._resolve(result.source_call_id)
                if slot is None:
                    raise TrajectoryError(
                        f"observation for unknown tool_call_id {result.source_call_id!r}", "trajectory builder"
                    )
                call_id, index = slot
                if call_id != result.source_call_id:
                    result = result.model_copy(update={"source_call_id": call_id})
                self._answered.add(slot)
            elif step_id is not None:
                if not 1 <= step_id <= len(self.steps):
                    raise TrajectoryError(f"no step with step_id {step_id}", "trajectory builder")
                index = step_id - 1
            else:
                last = self._last_agent_index()
                if last is None:
                    raise TrajectoryError("observation without a step to attach to", "trajectory builder")
                index = last
            step = self.steps[index]
            previous = step.observation.results if step.observation else []
            self.steps[index] = step.model_copy(update={"observation": Observation(results=[*previous, result])})

    def has_call(self, tool_call_id: str) -> bool:
        """Whether a call with this id (as the model gave it, or as recorded) was added."""
        return tool_call_id in self._slots

    # -- finishing -----------------------------------------------------------------------------------------
    def finish(
        self,
        *,
        notes: str | None = None,
        extra: Mapping[str, Any] | None = None,
        final_metrics: FinalMetrics | None = None,
    ) -> Trajectory:
        """The trajectory, validated. final_metrics are the sums of the steps' metrics unless given."""
        if not self.steps:
            raise TrajectoryError("no steps recorded (ATIF needs at least one)", "trajectory builder")
        if final_metrics is None:
            final_metrics = sum_metrics(self.steps)
        data = {
            "schema_version": SCHEMA_VERSION,
            "session_id": self.session_id,
            "agent": self.agent.model_dump(exclude_none=True),
            "steps": [s.model_dump(exclude_none=True) for s in self.steps],
            "notes": notes,
            "final_metrics": final_metrics.model_dump(exclude_none=True),
            "extra": dict(extra) if extra else None,
        }
        return validate_trajectory({k: v for k, v in data.items() if v is not None}, name="trajectory builder")

    # -- internals -----------------------------------------------------------------------------------------
    def _unique_calls(self, tool_calls: Iterable[ToolCallLike], *, taken: set[str]) -> list[ToolCall]:
        """Tool calls with ids unique within their step (Harbor's ATIF rule; an id may recur in later steps, as
        models reuse `call_0` every turn). A missing id is generated; one repeated within the step is renamed
        `<id>#<n>` (the original kept in `extra.original_tool_call_id`)."""
        out: list[ToolCall] = []
        taken = set(taken)
        for raw in tool_calls:
            call = raw if isinstance(raw, ToolCall) else None
            if call is None:
                data = dict(raw)
                if not data.get("tool_call_id"):
                    data["tool_call_id"] = f"call_{self._n_calls + len(out) + 1}"
                call = ToolCall.model_validate(data)
            original = call.tool_call_id
            if original in taken:
                n = 2
                while f"{original}#{n}" in taken:
                    n += 1
                call = call.model_copy(
                    update={
                        "tool_call_id": f"{original}#{n}",
                        "extra": {**(call.extra or {}), "original_tool_call_id": original},
                    }
                )
            taken.add(call.tool_call_id)
            out.append(call)
        return out

    def _register(self, calls: Sequence[ToolCall], index: int) -> None:
        """Remember where each call lives, under the id the model gave and the id recorded."""
        self._n_calls += len(calls)
        for call in calls:
            original = str((call.extra or {}).get("original_tool_call_id", call.tool_call_id))
            self._slots.setdefault(original, []).append((call.tool_call_id, index))
            if original != call.tool_call_id:
                self._slots.setdefault(call.tool_call_id, []).append((call.tool_call_id, index))

    def _resolve(self, source_call_id: str) -> tuple[str, int] | None:
        """The call a result for `source_call_id` answers: the oldest unanswered one with that id, else the
        latest."""
        slots = self._slots.get(source_call_id)
        if not slots:
            return None
        return next((s for s in slots if s not in self._answered), slots[-1])

    def _append(self, step: Step) -> Step:
        step = step.model_copy(update={"step_id": len(self.steps) + 1})
        self.steps.append(step)
        return step

    def _last_agent_index(self) -> int | None:
        for i in range(len(self.steps) - 1, -1, -1):
            if self.steps[i].source == "agent":
                return i
        return None


def sum_metrics(steps: Sequence[Step]) -> FinalMetrics:
    """final_metrics as the RFC defines them: sums over the steps' metrics; total_steps = len(steps)."""
    prompt = completion = cached = 0
    cost = 0.0
    have_cost = False
    for step in steps:
        m = step.metrics
        if m is None:
            continue
        prompt += m.prompt_tokens or 0
        completion += m.completion_tokens or 0
        cached += m.cached_tokens or 0
        if m.cost_usd is not None:
            cost += m.cost_usd
            have_cost = True
    return FinalMetrics(
        total_prompt_tokens=prompt,
        total_completion_tokens=completion,
        total_cached_tokens=cached,
        total_cost_usd=round(cost, 10) if have_cost else None,
        total_steps=len(steps),
    )


def _metrics(value: Metrics | Mapping[str, Any] | None) -> Metrics | None:
    if value is None or isinstance(value, Metrics):
        return value
    return Metrics.model_validate(dict(value))
