"""Report rows for conditions whose skills were produced per trial (e.g. `self-generated`): what the source
step itself used (creator sessions; never part of the solver's usage rows) and what it produced (each
generated pack: staged, withheld as an answer key, or rejected by `skillworks check`), and every skill the
gate withheld from a trial, whichever source produced it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillworks.results import TrialResult
from skillworks.stats.tables import usage_cost_known


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceUsageRow(_Strict):
    condition: str
    agent: str
    trials: int = Field(description="trials whose skills came from a source")
    source_runs: int = Field(description="trials that paid for a source step (a reused creation is paid once)")
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float
    calls: int
    seconds: float = Field(default=0.0, description="wall time of the paid source steps (creator sessions)")
    cost_unknown: int = Field(default=0, description="source steps with no known price, left out of cost_usd")


class GeneratedPackRow(_Strict):
    trial_id: str
    condition: str
    agent: str
    pack: str
    status: str = Field(
        description="staged | answer_key | check_failed | invalid | over_limit (generated packs) | gate_rejected "
        "(a skill any source produced that the gate withheld from the trial)"
    )
    reason: str | None = None
    package_hash: str | None = None
    findings: list[str] = Field(default_factory=list, description="check errors and leakage findings")


def source_usage_rows(results: Sequence[TrialResult]) -> list[SourceUsageRow]:
    groups: dict[tuple[str, str], list[TrialResult]] = {}
    for r in results:
        if r.skill_source is not None:
            groups.setdefault((r.condition, r.agent), []).append(r)
    rows = []
    for (condition, agent), rs in groups.items():
        paid = [r.skill_source for r in rs if r.skill_source is not None and r.skill_source.usage is not None]
        usages = [info.usage for info in paid if info.usage is not None]
        priced = [
            usage_cost_known(r.skill_source.usage, r.provider)
            for r in rs
            if r.skill_source is not None and r.skill_source.usage is not None
        ]
        rows.append(
            SourceUsageRow(
                condition=condition,
                agent=agent,
                trials=len(rs),
                source_runs=len(usages),
                input_tokens=sum(u.input_tokens for u in usages),
                output_tokens=sum(u.output_tokens for u in usages),
                cached_tokens=sum(u.cached_tokens for u in usages),
                cost_usd=float(sum(u.cost_usd for u in usages)),
                calls=sum(u.calls for u in usages),
                seconds=round(sum(float(info.record.get("creator_seconds") or 0.0) for info in paid), 3),
                cost_unknown=sum(1 for known in priced if not known),
            )
        )
    return rows


def generated_pack_rows(results: Sequence[TrialResult]) -> list[GeneratedPackRow]:
    rows = []
    for r in results:
        if r.skill_source is None:
            continue
        packs: list[dict[str, Any]] = r.skill_source.record.get("packs") or []
        problem = r.skill_source.record.get("generated_problem")
        if problem:  # the creator left no directory of packs to review (e.g. a symlink in its place)
            packs = [{"dir": "(generated-skills)", "status": "invalid", "reason": problem}, *packs]
        for p in packs:
            rows.append(
                GeneratedPackRow(
                    trial_id=r.trial_id,
                    condition=r.condition,
                    agent=r.agent,
                    pack=str(p.get("name") or p.get("dir")),
                    status=str(p.get("status")),
                    reason=p.get("reason"),
                    package_hash=p.get("package_hash"),
                    findings=[*p.get("check_errors", []), *p.get("leakage", [])],
                )
            )
        gate: dict[str, Any] = r.skill_source.record.get("gate") or {}
        for v in gate.get("rejected") or []:  # what the gate withheld (skillworks.provision.gate)
            reasons = list(v.get("reasons") or [])
            rows.append(
                GeneratedPackRow(
                    trial_id=r.trial_id,
                    condition=r.condition,
                    agent=r.agent,
                    pack=str(v.get("skill")),
                    status="gate_rejected",
                    reason=reasons[0] if reasons else None,
                    package_hash=v.get("package_hash"),
                    findings=reasons[1:],
                )
            )
    return rows
