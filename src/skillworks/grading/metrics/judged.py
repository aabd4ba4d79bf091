"""The two LLM-judged metrics.

Accuracy: one judge call grades the final answer against the task, the ground truth / expected output and
the author's notes, and — by default, as in ACES — with the trajectory digest in view (how the answer was
reached: which files were read, what the tools returned); `MetricContext.judge_sees_trajectory = False`
shows the answer only. The judge answers ``{"score": <0..1>, "reason": "..."}``. No final answer scores 0
without a judge call.

Goal accuracy in LLM mode (`goal_mode = "llm"`): one judge call compares the final answer with the ground
truth only (a hedged or incomplete answer is not a match) and answers the same JSON; without a ground
truth the metric does not apply.

Behavior check: one judge call per ``expected_behavior`` assertion, in order, each answered
``{"verdict": "yes"|"no", "evidence": "..."}`` against the trajectory digest; the score is the fraction
answered yes. Every verdict and its evidence is kept (the caller writes them to the trial dir).

A judge failure (transport error, unparseable reply) leaves the metric unscored (None) with the reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skillworks.grading.metrics.context import Judge, MetricContext, MetricResult
from skillworks.grading.metrics.view import digest, final_answer

ACCURACY_SYSTEM = (
    "You grade an AI agent's final answer to a task. Compare it with the reference (ground truth or the "
    "description of the expected output). Judge correctness and completeness, not style. Reply with one JSON "
    'object only: {"score": <number from 0 to 1>, "reason": "<one sentence>"}.'
)
BEHAVIOR_SYSTEM = (
    "You check one assertion about how an AI agent behaved, against its trajectory (messages, tool calls "
    "and tool results). Answer yes only if the trajectory shows it. Reply with one JSON object only: "
    '{"verdict": "yes" or "no", "evidence": "<the step(s) and what they show>"}.'
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class JudgeError(Exception):
    """The judge could not be reached or answered with an error."""


def _json_reply(text: str) -> dict[str, Any] | None:
    match = _JSON_OBJECT.search(text)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_score(text: str) -> float | None:
    data = _json_reply(text)
    raw: Any = data.get("score") if data else None
    if raw is None:
        found = re.search(r"score\W{0,3}([01](?:\.\d+)?)", text, re.IGNORECASE)
        raw = found.group(1) if found else None
    try:
        score = float(raw) if raw is not None and not isinstance(raw, bool) else None
    except (TypeError, ValueError):
        return None
    if score is None or not 0.0 <= score <= 1.0:
        return None
    return score


def parse_verdict(text: str) -> tuple[bool | None, str]:
    data = _json_reply(text)
    if data is not None and isinstance(data.get("verdict"), str | bool):
        verdict = data["verdict"]
        evidence = str(data.get("evidence") or data.get("reason") or "")
        if isinstance(verdict, bool):
            return verdict, evidence
        word = verdict.strip().lower()
        if word in ("yes", "true", "pass"):
            return True, evidence
        if word in ("no", "false", "fail"):
            return False, evidence
        return None, evidence
    first = re.match(r"\W*(yes|no)\b", text, re.IGNORECASE)
    if first:
        return first.group(1).lower() == "yes", text[first.end() :].strip()
    return None, text.strip()


def _reference(ctx: MetricContext) -> str:
    ev = ctx.task.evaluation
    parts: list[str] = []
    if ev is not None:
        if ev.ground_truth is not None:
            truth = ev.ground_truth if isinstance(ev.ground_truth, str) else json.dumps(ev.ground_truth)
            parts.append(f"Ground truth:\n{truth}")
        if ev.expected_output:
            parts.append(f"Expected output:\n{ev.expected_output}")
        if ev.judge_notes:
            parts.append(f"Notes from the author:\n{ev.judge_notes}")
    return "\n\n".join(parts) or "(no reference given: judge from the task alone)"


async def accuracy_metric(ctx: MetricContext, judge: Judge) -> MetricResult:
    answer = final_answer(ctx.trajectory)
    if answer is None:
        return MetricResult("accuracy", 0.0, {"reason": "no final answer (judge not called)"})
    user = f"Task:\n{ctx.task.instruction}\n\n{_reference(ctx)}\n\nThe agent's final answer:\n{answer}"
    if ctx.judge_sees_trajectory:
        user += f"\n\nThe agent's trajectory (how it reached the answer):\n{digest(ctx.trajectory)}"
    messages = [{"role": "system", "content": ACCURACY_SYSTEM}, {"role": "user", "content": user}]
    try:
        reply = await judge.complete(messages)
    except JudgeError as exc:
        return MetricResult("accuracy", None, {"reason": f"judge failed: {exc}"})
    score = parse_score(reply)
    if score is None:
        return MetricResult("accuracy", None, {"reason": "unparseable judge reply", "reply": reply[:500]})
    data = _json_reply(reply) or {}
    return MetricResult("accuracy", score, {"reason": str(data.get("reason", ""))[:1000]})


async def behavior_check_metric(ctx: MetricContext, judge: Judge) -> MetricResult:
    ev = ctx.task.evaluation
    assertions = list(ev.expected_behavior) if ev is not None else []
    if not assertions:
        return MetricResult("behavior_check", None, {"reason": "no expected_behavior assertions", "assertions": []})
    trace = digest(ctx.trajectory)
    verdicts: list[dict[str, Any]] = []
    for i, assertion in enumerate(assertions, start=1):
        user = (
            f"Task given to the agent:\n{ctx.task.instruction}\n\nAssertion {i} of {len(assertions)}:\n{assertion}"
            f"\n\nTrajectory:\n{trace}"
        )
        messages = [{"role": "system", "content": BEHAVIOR_SYSTEM}, {"role": "user", "content": user}]
        try:
            reply = await judge.complete(messages)
        except JudgeError as exc:
            verdicts.append({"assertion": assertion, "verdict": None, "evidence": f"judge failed: {exc}"})
            continue
        verdict, evidence = parse_verdict(reply)
        entry: dict[str, Any] = {"assertion": assertion, "verdict": verdict, "evidence": evidence[:2000]}
        if verdict is None:
            entry["reply"] = reply[:500]
        verdicts.append(entry)
    answered = [v for v in verdicts if v["verdict"] is not None]
    details = {"assertions": verdicts, "answered": len(answered), "total": len(assertions)}
    if len(answered) < len(assertions):
        return MetricResult("behavior_check", None, {**details, "reason": "a judge verdict is missing"})
    return MetricResult("behavior_check", sum(1 for v in answered if v["verdict"]) / len(assertions), details)


GOAL_SYSTEM = (
    "You check whether an AI agent's final answer matches the ground truth. Score 1 when it states the "
    "ground-truth answer, 0 when it does not; an answer that hedges between several values, or gives only "
    'part of the answer, scores in between. Reply with one JSON object only: {"score": <number from 0 to 1>, '
    '"reason": "<one sentence>"}.'
)


async def goal_accuracy_llm_metric(ctx: MetricContext, judge: Judge) -> MetricResult:
    ev = ctx.task.evaluation
    if ev is None or ev.ground_truth is None:
        return MetricResult("goal_accuracy", None, {"reason": "no ground truth", "mode": "llm"})
    answer = final_answer(ctx.trajectory)
    if answer is None:
        return MetricResult("goal_accuracy", 0.0, {"reason": "no final answer (judge not called)", "mode": "llm"})
    truth = ev.ground_truth if isinstance(ev.ground_truth, str) else json.dumps(ev.ground_truth)
    user = f"Question:\n{ctx.task.instruction}\n\nGround truth:\n{truth}\n\nThe agent's final answer:\n{answer}"
    messages = [{"role": "system", "content": GOAL_SYSTEM}, {"role": "user", "content": user}]
    try:
        reply = await judge.complete(messages)
    except JudgeError as exc:
        return MetricResult("goal_accuracy", None, {"reason": f"judge failed: {exc}", "mode": "llm"})
    score = parse_score(reply)
    if score is None:
        return MetricResult("goal_accuracy", None, {"reason": "unparseable judge reply", "mode": "llm"})
    data = _json_reply(reply) or {}
    return MetricResult("goal_accuracy", score, {"reason": str(data.get("reason", ""))[:1000], "mode": "llm"})
