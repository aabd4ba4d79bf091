"""Model calls of the trigger tools (description variants, near-miss negatives), through the skillworks gateway:
every call is recorded in ``<dir>/judge.jsonl`` like any judge call. A scripted model (``scripted/<file>``) answers
by key: ``optimize-round-<n>@propose`` for description variants, ``negatives@generate`` for negatives."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillworks.errors import UserError
from skillworks.evaluate.judge import GatewayJudge
from skillworks.grading.metrics.judged import JudgeError
from skillworks.trigger.queries import TriggerQuery

_JSON = re.compile(r"\{.*\}", re.S)


async def ask_json(model: str, api_base: str | None, key: str, prompt: str, log_dir: Path) -> dict[str, Any]:
    """One recorded call; the reply's first JSON object (UserError naming the key when there is none)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    async with GatewayJudge(model, api_base) as judge, judge.trial(key, key, log_dir) as channel:
        try:
            reply = await channel.complete([{"role": "user", "content": prompt}])
        except JudgeError as exc:
            raise UserError(f"model call {key} failed: {exc}") from None
    match = _JSON.search(reply)
    try:
        data = json.loads(match.group(0)) if match else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise UserError(f"model reply to {key} holds no JSON object: {' '.join(reply.split())[:200]!r}")
    return data


def _strings(data: dict[str, Any], key: str, what: str) -> list[str]:
    items = data.get(key)
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise UserError(f"model reply: {key!r} must be a list of non-empty strings ({what})")
    return [" ".join(i.split()) for i in items]


def variants_prompt(name: str, description: str, errors: list[tuple[TriggerQuery, bool]], k: int) -> str:
    wrong = "\n".join(
        f"- {'should trigger but did not' if q.should_trigger else 'should NOT trigger but did'}: {q.query}"
        for q, _ in errors
    )
    return (
        f"An agent decides from a skill's description whether to load the skill. Skill `{name}` has the "
        f"description:\n\n{description}\n\nOn training queries it made these mistakes:\n{wrong or '- none'}\n\n"
        f"Propose {k} alternative descriptions (at most 1024 characters each) that would make the agent load the "
        'skill exactly when it should. Answer with JSON only: {"variants": ["...", "..."]}'
    )


def negatives_prompt(name: str, description: str, n: int) -> str:
    return (
        f"Skill `{name}` has the description:\n\n{description}\n\nWrite {n} realistic user requests that are close "
        "to this description (same domain, similar words) but should NOT make an agent load this skill. Answer with "
        'JSON only: {"queries": ["...", "..."]}'
    )


async def propose_variants(model: str, api_base: str | None, round_no: int, prompt: str, log_dir: Path) -> list[str]:
    data = await ask_json(model, api_base, f"optimize-round-{round_no}@propose", prompt, log_dir)
    return [v for v in _strings(data, "variants", "description variants") if len(v) <= 1024]


async def generate_negatives(
    model: str, api_base: str | None, name: str, description: str, n: int, log_dir: Path
) -> list[TriggerQuery]:
    """`n` near-miss queries (should_trigger false), marked as generated: for review, never mixed in silently."""
    data = await ask_json(model, api_base, "negatives@generate", negatives_prompt(name, description, n), log_dir)
    texts = list(dict.fromkeys(_strings(data, "queries", "near-miss queries")))[:n]
    return [
        TriggerQuery(id=f"neg{i + 1:02d}", query=t, should_trigger=False, note=f"generated near-miss ({model}); review")
        for i, t in enumerate(texts)
    ]
