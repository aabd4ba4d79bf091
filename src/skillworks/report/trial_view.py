"""What a trajectory page shows about one trial, read from its directory: the ATIF steps with every tool
call and its result, which calls loaded a skill or ran a skill's script, usage per step, the verifier's
tests and reward, and the behaviour check's verdicts with their evidence.

Every file is optional (an errored trial may have none); a file that cannot be read becomes a one-line
problem shown on the page, never an exception. Long texts are cut so that a page stays small.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillworks.errors import first_validation_error
from skillworks.grading.ctrf import CTRF_NAMES
from skillworks.results import TrialResult
from skillworks.trajectory.models import Agent, ContentPart, Observation, ObservationResult, Step, ToolCall, Trajectory
from skillworks.trajectory.skill_use import StagedSkillRef, detect_skill_use, tool_result_failed

TEXT_LIMIT = 6_000  # characters of one message, argument block or tool result shown on a page
RAW_FILES = ("trajectory.json", "gateway.jsonl", "skills.json", "metrics.json", "behavior.json")
# every file of a trial dir `load_trial_view` reads or links to: a page is stale when one of them changed
VIEW_INPUTS = (*RAW_FILES, *(f"verifier/logs/{name}" for name in CTRF_NAMES))


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters in the trial's files)"


@dataclass(frozen=True)
class CallView:
    call_id: str
    name: str
    arguments: str
    result: str | None
    skill_loads: list[str]
    scripts_run: list[str]
    failed_loads: list[str]
    failed: bool = False  # the tool said it failed (an error result, as the harness's converter recorded it)


@dataclass(frozen=True)
class StepView:
    step_id: int
    source: str
    timestamp: str | None
    message: str
    reasoning: str | None
    calls: list[CallView]
    other_results: list[str]  # observation results that answer no call of the step
    usage: str | None

    @property
    def uses_skill(self) -> bool:
        return any(c.skill_loads or c.scripts_run or c.failed_loads for c in self.calls)


@dataclass(frozen=True)
class Verdict:
    assertion: str
    verdict: bool | None
    evidence: str


@dataclass
class TrialView:
    result: TrialResult
    trial_dir: Path
    steps: list[StepView] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    staged: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    behavior_score: float | None = None
    raw_files: list[str] = field(default_factory=list)  # files of the trial dir the page links to

    @property
    def skill_steps(self) -> int:
        return sum(1 for s in self.steps if s.uses_skill)


def _text(content: str | list[ContentPart] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text if p.type == "text" and p.text is not None else "[image]" for p in content)


def _usage(step: Step) -> str | None:
    m = step.metrics
    if m is None:
        return None
    parts = []
    if m.prompt_tokens is not None:
        parts.append(f"in {m.prompt_tokens:,}")
    if m.cached_tokens:
        parts.append(f"cached {m.cached_tokens:,}")
    if m.completion_tokens is not None:
        parts.append(f"out {m.completion_tokens:,}")
    if m.cost_usd:
        parts.append(f"${m.cost_usd:.4f}")
    return " · ".join(parts) or None


def _staged_refs(trial_dir: Path, problems: list[str]) -> tuple[list[StagedSkillRef], str | None]:
    path = trial_dir / "skills.json"
    if not path.is_file():
        return [], None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        skills_dir = data.get("skills_dir")
        refs = [
            StagedSkillRef(name=str(s["name"]), path=s.get("path") if isinstance(s.get("path"), str) else None)
            for s in data.get("visible") or data.get("expected") or []
        ]
        return refs, skills_dir if isinstance(skills_dir, str) else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        problems.append(f"skills.json: cannot read ({type(exc).__name__}: {exc})")
        return [], None


def _one_call(agent: Agent, call: ToolCall, result: ObservationResult | None) -> Trajectory:
    """A one-call trajectory (with the call's result, so that a failed skill load is told apart)."""
    observation = Observation.model_construct(results=[result]) if result is not None else None
    step = Step.model_construct(step_id=1, source="agent", message="", tool_calls=[call], observation=observation)
    return Trajectory.model_construct(agent=agent, steps=[step])


def _steps(traj: Trajectory, refs: list[StagedSkillRef], skills_dir: str | None) -> list[StepView]:
    out: list[StepView] = []
    for step in traj.steps:
        results = {r.source_call_id: r for r in (step.observation.results if step.observation else [])}
        calls: list[CallView] = []
        for call in step.tool_calls or []:
            answer = results.pop(call.tool_call_id, None)
            use = (
                detect_skill_use(_one_call(traj.agent, call, answer), refs, skills_dir, None, unanswered_ok=True)
                if refs
                else None
            )
            result = _text(answer.content) if answer is not None else None
            calls.append(
                CallView(
                    call_id=call.tool_call_id,
                    name=call.function_name,
                    arguments=clip(json.dumps(call.arguments, indent=1, ensure_ascii=False)),
                    result=clip(result) if result is not None else None,
                    skill_loads=list(use.invoked) if use else [],
                    scripts_run=list(use.scripts_run) if use else [],
                    failed_loads=list(use.failed) if use else [],
                    failed=answer is not None and tool_result_failed(answer),
                )
            )
        out.append(
            StepView(
                step_id=step.step_id,
                source=step.source,
                timestamp=step.timestamp,
                message=clip(_text(step.message)),
                reasoning=clip(step.reasoning_content) if step.reasoning_content else None,
                calls=calls,
                other_results=[clip(t) for t in (_text(r.content) for r in results.values()) if t],
                usage=_usage(step),
            )
        )
    return out


def _behavior(trial_dir: Path, view: TrialView) -> None:
    path = trial_dir / "behavior.json"
    if not path.is_file():
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        score = data.get("score")
        view.behavior_score = float(score) if isinstance(score, int | float) else None
        for item in data.get("assertions") or []:
            verdict = item.get("verdict")
            view.verdicts.append(
                Verdict(
                    assertion=str(item.get("assertion", "")),
                    verdict=verdict if isinstance(verdict, bool) else None,
                    evidence=clip(str(item.get("evidence") or ""), 2_000),
                )
            )
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        view.problems.append(f"behavior.json: cannot read ({type(exc).__name__}: {exc})")


def load_trial_view(run_dir: Path, result: TrialResult) -> TrialView:
    """The page data of ``result``, whose files live in ``run_dir/trials/<trial_id>``."""
    trial_dir = run_dir / "trials" / result.trial_id
    view = TrialView(result=result, trial_dir=trial_dir)
    refs, skills_dir = _staged_refs(trial_dir, view.problems)
    view.staged = [r.name for r in refs]
    traj_path = trial_dir / "trajectory.json"
    if traj_path.is_file():
        try:
            traj = Trajectory.model_validate_json(traj_path.read_bytes())
            view.steps = _steps(traj, refs, skills_dir)
        except ValidationError as exc:
            view.problems.append(f"trajectory.json: not valid ATIF ({first_validation_error(exc)})")
        except OSError as exc:
            view.problems.append(f"trajectory.json: cannot read ({exc})")
    else:
        view.problems.append("no trajectory.json recorded for this trial")
    _behavior(trial_dir, view)
    view.raw_files = [name for name in RAW_FILES if (trial_dir / name).is_file()]
    view.raw_files += [f"verifier/logs/{n}" for n in CTRF_NAMES if (trial_dir / "verifier" / "logs" / n).is_file()]
    return view


def as_jsonable(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)
