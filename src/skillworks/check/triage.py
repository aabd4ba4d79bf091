"""Opt-in LLM triage of security findings (`check --triage MODEL`).

The static scan decides severity from where the text sits; a model can read the evidence the way a
reviewer would. For each error or warning security finding the model answers whether the skill *asks*
the agent to do the dangerous thing (`threat`) or only mentions, quotes, documents or tests it (`benign`).
A benign verdict lowers the finding one step (error -> warning, warning -> info) and says so in its reason;
a threat verdict keeps it; the model never raises a severity. A failed or off-format answer leaves the
finding as it was and records why. Calls go through LiteLLM, so `--api-base` can point at the gateway.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from skillworks.check.judge import Complete, _complete
from skillworks.check.model import Dimension, Finding, Severity
from skillworks.check.rules import RULES

MAX_PER_SKILL = 20  # findings triaged per skill; the rest keep the static verdict
SYSTEM_PROMPT = (
    "You triage findings of a static security scanner over agent skills (SKILL.md files, references and "
    "scripts an AI agent reads and runs). Answer with one JSON object and nothing else."
)
_LOWER = {Severity.ERROR: Severity.WARNING, Severity.WARNING: Severity.INFO, Severity.INFO: Severity.INFO}


def build_triage_messages(skill: str, f: Finding) -> list[dict[str, str]]:
    rule = RULES[f.rule_id]
    user = (
        f"Skill: {skill}\nRule: {f.rule_id} ({rule.title}): {rule.rationale}\n"
        f"File: {f.file or 'SKILL.md'} line {f.line}\nWhere the text sits: {f.context.value if f.context else '?'}\n"
        f"Scanner message: {f.message}\nEvidence:\n<evidence>\n{f.evidence or ''}\n</evidence>\n\n"
        "Does the skill ask the agent to do this dangerous thing (threat), or does it only mention, quote, "
        "warn against, document or test it, or is the match a false alarm (benign)?\n"
        'Reply with exactly: {"verdict": "threat" | "benign", "reason": "<one sentence>"}'
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_triage_answer(text: str) -> tuple[str, str]:
    """(verdict, reason) from a triage answer. Raises ValueError saying what is wrong."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("answer holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"answer is not valid JSON: {exc.msg}") from None
    verdict = data.get("verdict") if isinstance(data, dict) else None
    if verdict not in ("threat", "benign"):
        raise ValueError("'verdict' is not 'threat' or 'benign'")
    reason = data.get("reason")
    return verdict, " ".join(str(reason).split())[:300] if reason else ""


async def triage_findings(
    skill: str,
    findings: Sequence[Finding],
    model: str,
    *,
    api_base: str | None = None,
    complete: Complete | None = None,
) -> list[Finding]:
    """The findings with the model's verdict applied to up to MAX_PER_SKILL security errors and warnings."""
    call = complete or _complete
    out: list[Finding] = []
    asked = 0
    for f in findings:
        if f.dimension is not Dimension.SECURITY or f.severity is Severity.INFO or asked >= MAX_PER_SKILL:
            out.append(f)
            continue
        asked += 1
        try:
            verdict, why = parse_triage_answer(await call(model, build_triage_messages(skill, f), api_base))
        except ValueError as exc:
            out.append(replace(f, reason=f"{f.reason or ''}; triage by {model} failed: {exc}".lstrip("; ")))
            continue
        except Exception as exc:  # provider errors of any kind: the static verdict stands
            note = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]
            out.append(replace(f, reason=f"{f.reason or ''}; triage by {model} failed: {note}".lstrip("; ")))
            continue
        if verdict == "benign":
            lowered = _LOWER[f.severity]
            note = f"triage by {model}: benign ({why}) -> {lowered.value}"
            out.append(replace(f, severity=lowered, instruction=False, reason=f"{f.reason or ''}; {note}".lstrip("; ")))
        else:
            out.append(replace(f, reason=f"{f.reason or ''}; triage by {model}: threat ({why})".lstrip("; ")))
    return out
