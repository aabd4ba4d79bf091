"""Skill execution and skill efficiency, from the trajectory's tool calls (never from prose).

Skill execution (needs an expected skill: the case's ``expected_skill``, else the target skill):
  the mean of the applicable checks — the expected skill was activated (its SKILL.md read or loaded via a
  skill tool); the expected script was run (when the case names one); and the order was respected
  (activation came no later than the first run of that script).

Skill efficiency (ACES): of all the agent's tool calls, the share that use only relevant skills (load
one, read a file under it, run its scripts; relevant: the expected skill, the target and the support
skills). A call that uses a decoy, asks for a skill that is not available, or uses no skill at all is an
irrelevant call and lowers the score. None when no call touches a skill (skills were not used at all).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from skillworks.grading.metrics.context import MetricContext, MetricResult
from skillworks.grading.metrics.view import CallView, tool_calls
from skillworks.trajectory.models import Agent, Step, ToolCall, Trajectory
from skillworks.trajectory.skill_use import SKILL_TOOLS, StagedSkillRef, detect_skill_use

_UNDER_SKILLS = re.compile(r"/(?:skills|skill)/([A-Za-z0-9][A-Za-z0-9._-]*)/")


def _one_call(call: CallView) -> Trajectory:
    step = Step.model_construct(
        step_id=1,
        source="agent",
        message="",
        tool_calls=[ToolCall.model_construct(tool_call_id="c", function_name=call.name, arguments=call.arguments)],
    )
    return Trajectory.model_construct(agent=Agent.model_construct(name="x", version="0"), steps=[step])


def _staged_refs(ctx: MetricContext) -> list[StagedSkillRef]:
    return [
        StagedSkillRef.from_package(s, f"{ctx.skills_dir}/{s.name}" if ctx.skills_dir else None) for s in ctx.staged
    ]


@dataclass(frozen=True)
class CallSkillUse:
    invoked: list[str]
    scripts: list[str]
    touched: set[str]
    unavailable: list[str]


def call_uses(ctx: MetricContext) -> list[tuple[CallView, CallSkillUse]]:
    """Per tool call: skills invoked, scripts run, every staged skill touched, unavailable skills asked for."""
    refs = _staged_refs(ctx)
    staged_names = {r.name for r in refs}
    out: list[tuple[CallView, CallSkillUse]] = []
    for call in tool_calls(ctx.trajectory):
        use = detect_skill_use(_one_call(call), refs, ctx.skills_dir, None, unanswered_ok=True)
        touched = set(use.invoked) | {s.split("/", 1)[0] for s in use.scripts_run}
        text = " ".join(str(v) for v in call.arguments.values() if isinstance(v, str))
        touched |= {m for m in _UNDER_SKILLS.findall(text) if m in staged_names}
        unavailable: list[str] = []
        keys = SKILL_TOOLS.get(call.name.lower())
        if keys is not None:
            asked = next((call.arguments[k] for k in keys if isinstance(call.arguments.get(k), str)), None)
            if asked and asked.strip() not in staged_names:
                unavailable.append(asked.strip())
        out.append((call, CallSkillUse(list(use.invoked), list(use.scripts_run), touched, unavailable)))
    return out


def _script_matches(run: str, skill: str, expected: str) -> bool:
    """`run` is '<skill>/<rel>'; `expected` may be '<skill>/scripts/x.py', 'scripts/x.py' or 'x.py'."""
    name, _, rel = run.partition("/")
    if name != skill:
        return False
    want = posixpath.normpath(expected.lstrip("./"))
    if want.startswith(f"{skill}/"):
        want = want[len(skill) + 1 :]
    return rel == want or rel.endswith("/" + want)


def skill_execution_metric(ctx: MetricContext) -> MetricResult:
    expected = ctx.expected_skill
    if expected is None:
        return MetricResult("skill_execution", None, {"reason": "no expected skill"})
    ev = ctx.task.evaluation
    script = ev.expected_script if ev is not None else None
    activated_at: int | None = None
    script_at: int | None = None
    for call, use in call_uses(ctx):
        if activated_at is None and expected in use.invoked:
            activated_at = call.order
        if script and script_at is None and any(_script_matches(r, expected, script) for r in use.scripts):
            script_at = call.order
    checks: dict[str, bool] = {"activated": activated_at is not None}
    if script:
        checks["script_run"] = script_at is not None
        checks["order_respected"] = activated_at is not None and script_at is not None and activated_at <= script_at
    score = sum(checks.values()) / len(checks)
    return MetricResult(
        "skill_execution",
        score,
        {
            "expected_skill": expected,
            "expected_script": script,
            "checks": checks,
            "activated_at_call": activated_at,
            "script_at_call": script_at,
        },
    )


def skill_efficiency_metric(ctx: MetricContext) -> MetricResult:
    relevant = ctx.relevant_skills
    relevant_calls = irrelevant_calls = non_skill_calls = 0
    irrelevant: list[str] = []
    for call, use in call_uses(ctx):
        names = use.touched | set(use.unavailable)
        if not names:
            non_skill_calls += 1  # irrelevant to the skills: it lowers the score too
            continue
        if use.unavailable or not names <= relevant:
            irrelevant_calls += 1
            irrelevant.append(f"call {call.order} ({call.name}): {', '.join(sorted(names))}")
        else:
            relevant_calls += 1
    details = {
        "relevant_skills": sorted(relevant),
        "relevant_calls": relevant_calls,
        "irrelevant_calls": irrelevant_calls,
        "non_skill_calls": non_skill_calls,
        "irrelevant": irrelevant,
    }
    if relevant_calls + irrelevant_calls == 0:
        return MetricResult("skill_efficiency", None, {**details, "reason": "no tool call touched a skill"})
    return MetricResult(
        "skill_efficiency", relevant_calls / (relevant_calls + irrelevant_calls + non_skill_calls), details
    )
