"""`skillworks compile --model`: an LLM judgement of a skill's shape through the gateway (the hybrid of
SkillSmith). The deterministic classification stays the default; the model's answer replaces it only when
the structural evidence is close (the two best shapes within `CLOSE_MARGIN`, or nothing reached the
threshold). The judgement's tokens, cost and time are the compile step's, recorded apart from any solve."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from skillworks.compile.classify import Classification
from skillworks.compile.contract import Shape
from skillworks.results import Usage
from skillworks.skills.package import SkillPackage

CLOSE_MARGIN = 1.0
MAX_BODY_CHARS = 12_000
_SHAPES: tuple[Shape, ...] = ("workflow", "dispatcher", "reference", "insufficient")
PROMPT = """Classify the agent skill below by its source shape. Answer with one JSON object only:
{{"shape": "workflow" | "dispatcher" | "reference" | "insufficient", "reason": "<one sentence>"}}

- workflow: an ordered procedure of steps (commands, scripts, checks) that produce a result;
- dispatcher: a menu of independent operations (scripts, subcommands, commands) to pick from;
- reference: knowledge to look up (rules, conventions, tables), little or nothing to run;
- insufficient: too little or too vague to act on.

Structural evidence (deterministic): {evidence}

<skill name="{name}">
{body}
</skill>"""


@dataclass(frozen=True)
class Judgement:
    model: str
    shape: Shape | None  # None: the answer could not be read
    reason: str
    usage: Usage
    seconds: float
    decided: bool  # the model's shape was used


def _parse(text: str) -> tuple[Shape | None, str]:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        return None, "no JSON object in the answer"
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None, "the answer's JSON does not parse"
    shape = data.get("shape") if isinstance(data, dict) else None
    if shape not in _SHAPES:
        return None, f"unknown shape {shape!r}"
    return shape, str(data.get("reason") or "")


def is_close(decision: Classification) -> bool:
    if decision.shape == "insufficient":
        return True
    ranked = sorted(decision.scores.values(), reverse=True)
    return len(ranked) > 1 and ranked[0] - ranked[1] < CLOSE_MARGIN


async def judge_shape(
    package: SkillPackage, decision: Classification, model: str, log_path: Path, api_base: str | None = None
) -> Judgement:
    """One chat completion through a gateway started for this call; the gateway's log is the accounting."""
    from skillworks.gateway import Gateway, usage_totals

    evidence = ", ".join(f"{k}={v:g}" for k, v in decision.scores.items()) + f"; deterministic: {decision.shape}"
    prompt = PROMPT.format(evidence=evidence, name=package.name, body=package.body[:MAX_BODY_CHARS])
    t0 = time.perf_counter()
    async with Gateway(model=model, api_base=api_base) as gateway:
        channel = await gateway.open_trial(f"compile-{package.name}", log_path, task_id=f"{package.name}@compile")
        try:
            transport = httpx.AsyncHTTPTransport(uds=str(channel.socket_path))
            async with httpx.AsyncClient(transport=transport, base_url="http://gateway", timeout=300) as client:
                response = await client.post(
                    "/v1/chat/completions",
                    json={"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0},
                )
        finally:
            await gateway.close_trial(channel.trial_id)
    seconds = time.perf_counter() - t0
    usage = usage_totals(log_path)
    if response.status_code >= 400:
        return Judgement(model, None, f"gateway answered {response.status_code}", usage, seconds, False)
    content = (response.json()["choices"][0]["message"].get("content") or "").strip()
    shape, reason = _parse(content)
    return Judgement(model, shape, reason, usage, seconds, decided=shape is not None and is_close(decision))
