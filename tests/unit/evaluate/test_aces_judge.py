"""The accuracy judge sees the trajectory by default (an option shows the answer only), and goal accuracy has
an LLM mode. The judge model is the scripted provider through the gateway (the only test double); its
`expect` checks what the judge was shown."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from skillworks.evaluate.judge import GatewayJudge
from skillworks.grading.metrics import MetricContext
from skillworks.grading.metrics.judged import accuracy_metric, goal_accuracy_llm_metric
from skillworks.grading.metrics.run import grade_trial
from skillworks.skills.package import load_skill
from skillworks.tasks.model import EvalExpectations, Task
from skillworks.trajectory import TrajectoryBuilder


def _ctx(tmp_path: Path, **kw: object) -> MetricContext:
    skill = tmp_path / "target-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: target-skill\ndescription: Totals invoices in EUR.\n---\n\nBody.\n")
    b = TrajectoryBuilder("builtin", "1.0", "m")
    b.add_user("What is the total?")
    b.add_agent(
        "", tool_calls=[{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "cat data.json"}}]
    )
    b.add_observation({"c1": "[720, 720]"})
    b.add_agent("10, 11 or 1440 EUR")
    task = Task(
        id="target-skill--c1",
        root=Path("/nonexistent"),
        source_format="evals.json",
        instruction="What is the total?",
        content_hash="0" * 64,
        evaluation=EvalExpectations(dialect="aces", case_id="c1", skill="target-skill", ground_truth=1440),
    )
    return MetricContext(
        task=task,
        trajectory=b.finish(),
        condition="with-skill",
        staged=(load_skill(skill),),
        skills_dir="/home/agent/.agents/skills",
        workdir="/app",
        target="target-skill",
        **kw,  # type: ignore[arg-type]
    )


def _model(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    path = tmp_path / "judge.yaml"
    path.write_text(json.dumps({"by_task": {"k": turns}}))
    return f"scripted/{path}"


async def test_accuracy_judge_sees_the_trajectory_by_default(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    assert ctx.judge_sees_trajectory
    expect = {"last_user_contains": "The agent's trajectory (how it reached the answer):"}
    model = _model(tmp_path, [{"text": '{"score": 0.25, "reason": "hedged"}', "expect": expect}] * 2)
    trial_dir = tmp_path / "t"
    trial_dir.mkdir()
    async with GatewayJudge(model) as judge, judge.trial("t1", "k", trial_dir) as tj:
        seen = await accuracy_metric(ctx, tj)
        # answer only: the prompt holds no trajectory, so the scripted judge's expectation is not met
        blind = await accuracy_metric(dataclasses.replace(ctx, judge_sees_trajectory=False), tj)
    assert seen.score == 0.25
    assert blind.score is None and "judge failed" in blind.details["reason"]


async def test_goal_accuracy_llm_mode(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, goal_mode="llm")
    expect = {"last_user_contains": "Ground truth:\n1440"}
    model = _model(tmp_path, [{"text": '{"score": 0.3, "reason": "hedges"}', "expect": expect}])
    trial_dir = tmp_path / "t"
    trial_dir.mkdir()
    async with GatewayJudge(model) as judge, judge.trial("t1", "k", trial_dir) as tj:
        goal = await goal_accuracy_llm_metric(ctx, tj)
    assert goal.score == 0.3 and goal.details["mode"] == "llm"
    report = await grade_trial(ctx, None)  # llm mode without a judge: not scored, never the match fallback
    result = next(r for r in report.results if r.name == "goal_accuracy")
    assert result.score is None and "no judge" in result.details["reason"]
    match = await grade_trial(dataclasses.replace(ctx, goal_mode="match"), None)
    assert next(r for r in match.results if r.name == "goal_accuracy").score == 1 / 3  # hedged: 1/k
