"""Routing in an ACES group workspace: with the target's sibling skills visible, which skill did the agent
load in each trial — the target, a sibling, both, or none?

A skill counts as *loaded* in a trial when its skill-use record (`TrialResult.skill_use`, from the
trajectory) has it invoked, its SKILL.md read, or one of its scripts run. Errored trials are left out
(they are listed with the unscored trials). Only runs with siblings (``extra.eval.sibling_names``) count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from skillworks.results import TrialResult


class RoutingRow(BaseModel):
    condition: str
    trials: int = Field(description="trials without an error")
    target_loaded: int = Field(description="trials that loaded the target (alone or with a sibling)")
    sibling_loaded: int = Field(description="trials that loaded at least one sibling")
    sibling_only: int = Field(description="trials that loaded a sibling but not the target (a misroute)")
    none_loaded: int = Field(description="trials that loaded neither the target nor a sibling")
    by_sibling: dict[str, int] = Field(
        default_factory=dict, description="sibling -> trials that loaded it (siblings never loaded are left out)"
    )


def loaded_skills(result: TrialResult) -> set[str]:
    """Skills the trial loaded: invoked, SKILL.md read, or a script run."""
    use = result.skill_use
    return {*use.invoked, *use.read, *(s.split("/", 1)[0] for s in use.scripts_run)}


def routing_rows(runs: Iterable[tuple[dict[str, Any], Sequence[TrialResult]]]) -> list[RoutingRow]:
    """Per condition, over the runs given as (experiment.json, results) with siblings staged."""
    rows: dict[str, RoutingRow] = {}
    order: list[str] = []
    for spec, results in runs:
        order += [c for c in spec.get("conditions") or [] if c not in order]
        siblings = sorted((spec.get("extra") or {}).get("eval", {}).get("sibling_names") or [])
        target = (spec.get("target_skill") or {}).get("name")
        if not siblings:
            continue
        for r in results:
            if r.error is not None or r.outcome == "error":
                continue
            row = rows.setdefault(
                r.condition,
                RoutingRow(
                    condition=r.condition,
                    trials=0,
                    target_loaded=0,
                    sibling_loaded=0,
                    sibling_only=0,
                    none_loaded=0,
                    by_sibling={},
                ),
            )
            loaded = loaded_skills(r)
            hit_target = target in loaded
            hit_siblings = [s for s in siblings if s in loaded]
            row.trials += 1
            row.target_loaded += int(hit_target)
            row.sibling_loaded += int(bool(hit_siblings))
            row.sibling_only += int(bool(hit_siblings) and not hit_target)
            row.none_loaded += int(not hit_target and not hit_siblings)
            for s in hit_siblings:
                row.by_sibling[s] = row.by_sibling.get(s, 0) + 1
    return sorted(rows.values(), key=lambda row: order.index(row.condition) if row.condition in order else len(order))


def routing_markdown(rows: Sequence[RoutingRow]) -> list[str]:
    if not rows:
        return []
    lines = [
        "## Routing (group workspace)",
        "",
        "Which skill the agent loaded (invoked, read its SKILL.md, or ran its script) with the target's sibling "
        "skills visible; *sibling only* is a misroute in the with-skill condition.",
        "",
        "| condition | trials | target loaded | sibling loaded | sibling only | neither | by sibling |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        by = ", ".join(f"{name} {n}" for name, n in r.by_sibling.items()) or "–"
        lines.append(
            f"| {r.condition} | {r.trials} | {r.target_loaded} | {r.sibling_loaded} | {r.sibling_only} "
            f"| {r.none_loaded} | {by} |"
        )
    lines.append("")
    return lines
