"""`skillworks trigger --optimize-description`: propose description variants with the model (through the
gateway), score each on a training split of the queries, and accept a variant only when it improves F1 on the
held-out split beyond its interval.

    split the queries (stratified by should_trigger, fixed seed) into training and held-out
    score the current description (a trigger run over every query)
    per round: the model sees the training mistakes and proposes variants; each is scored (a trigger run);
      the best on training, if it beats the current one there, faces the held-out test: a paired percentile
      bootstrap over held-out queries of ΔF1 (variant − current); accepted only when its 2.5th percentile > 0
      and at least MIN_QUERIES_FOR_INTERVAL held-out queries have a verdict on both sides
    write history.json (every candidate, its scores and the decision); rewrite SKILL.md only with --write

Held-out verdicts never steer a proposal: the model sees training mistakes only.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from skillworks.errors import UserError
from skillworks.skills.package import load_skill, split_frontmatter
from skillworks.trigger.propose import propose_variants, variants_prompt
from skillworks.trigger.queries import TriggerQuery
from skillworks.trigger.run import TriggerOptions, run_trigger
from skillworks.trigger.scoring import MIN_QUERIES_FOR_INTERVAL

Verdicts = dict[str, bool | None]  # query id -> triggered (rate >= threshold); None: no scored trial
Scorer = Callable[[str, str], Awaitable[Verdicts]]  # (description, label) -> verdicts
HISTORY = "history.json"
RESAMPLES = 2000


@dataclass
class OptimizeOptions:
    base: TriggerOptions
    rounds: int = 3
    variants: int = 3
    holdout: float = 0.5
    write: bool = False
    proposer_model: str | None = None  # default: base.model


@dataclass
class Candidate:
    round: int
    label: str
    description: str
    train_f1: float | None
    heldout_f1: float | None = None
    delta_ci: tuple[float, float] | None = None
    accepted: bool = False
    reason: str = ""


@dataclass
class OptimizeOutcome:
    out_dir: Path
    initial: str
    final: str
    accepted: bool
    candidates: list[Candidate] = field(default_factory=list)
    history: Path | None = None
    written: bool = False


def split_queries(queries: Sequence[TriggerQuery], holdout: float, seed: int) -> tuple[list[str], list[str]]:
    """Training and held-out query ids, stratified by should_trigger, reproducible for a seed."""
    if not 0.0 < holdout < 1.0:
        raise UserError("--holdout must be between 0 and 1 (the held-out share of the queries)")
    rng = random.Random(seed)
    train: list[str] = []
    held: list[str] = []
    for label in (True, False):
        ids = [q.id for q in queries if q.should_trigger is label]
        rng.shuffle(ids)
        cut = round(len(ids) * holdout)
        held += ids[:cut]
        train += ids[cut:]
    return sorted(train), sorted(held)


def f1_of(verdicts: Verdicts, truth: dict[str, bool], ids: Sequence[str]) -> float | None:
    tp = sum(1 for i in ids if verdicts.get(i) is True and truth[i])
    fp = sum(1 for i in ids if verdicts.get(i) is True and not truth[i])
    fn = sum(1 for i in ids if verdicts.get(i) is False and truth[i])
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else None


def paired_f1_delta(
    new: Verdicts, old: Verdicts, truth: dict[str, bool], ids: Sequence[str], seed: int = 0
) -> tuple[float | None, tuple[float, float] | None, int]:
    """ΔF1 (new − old) over `ids` judged on both sides, its paired percentile bootstrap 95% interval (None below
    MIN_QUERIES_FOR_INTERVAL queries), and that number of queries."""
    both = [i for i in ids if new.get(i) is not None and old.get(i) is not None]
    a, b = f1_of(new, truth, both), f1_of(old, truth, both)
    delta = None if a is None or b is None else a - b
    if len(both) < MIN_QUERIES_FOR_INTERVAL or delta is None:
        return delta, None, len(both)
    t = np.array([truth[i] for i in both])
    pn = np.array([bool(new[i]) for i in both])
    po = np.array([bool(old[i]) for i in both])
    idx = np.random.default_rng(seed).integers(0, len(both), size=(RESAMPLES, len(both)))

    def f1(p: np.ndarray) -> np.ndarray:
        tp = (t[idx] & p[idx]).sum(axis=1)
        fp = (~t[idx] & p[idx]).sum(axis=1)
        fn = (t[idx] & ~p[idx]).sum(axis=1)
        denom = 2 * tp + fp + fn
        return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), np.nan)

    d = f1(pn) - f1(po)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return delta, None, len(both)
    low, high = np.percentile(d, [2.5, 97.5])
    return delta, (float(low), float(high)), len(both)


def _trigger_scorer(options: TriggerOptions, queries: list[TriggerQuery], runs: Path) -> Scorer:
    async def score(description: str, label: str) -> Verdicts:
        run = replace(options, description=description, out=runs, run_id=label)
        outcome = await run_trigger(run, queries=queries)
        return {q.id: q.verdict for q in outcome.scores.queries}

    return score


def write_description(skill_md: Path, description: str) -> None:
    """Replace the description in a SKILL.md's frontmatter (other keys kept in order; the body byte for byte)."""
    text = skill_md.read_text(encoding="utf-8")
    front, body = split_frontmatter(text, skill_md)
    front = {**front, "description": description}
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000)
    skill_md.write_text(f"---\n{head}---\n{body}", encoding="utf-8")
    load_skill(skill_md.parent)  # what was written must still load


async def optimize_description(
    options: OptimizeOptions, queries: list[TriggerQuery], *, score: Scorer | None = None
) -> OptimizeOutcome:
    base = options.base
    model = options.proposer_model or base.model
    if model is None:
        raise UserError("--optimize-description needs --model (the model that proposes description variants)")
    if options.rounds < 1 or options.variants < 1:
        raise UserError("--rounds and --variants must be at least 1")
    skill = load_skill(base.skill)
    stamp = base.run_id or f"optimize-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    out_dir = base.out.resolve() / stamp
    if (out_dir / HISTORY).exists():
        raise UserError("an optimisation history already exists here; choose another --run-id", out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scorer = score or _trigger_scorer(base, queries, out_dir / "runs")
    truth = {q.id: q.should_trigger for q in queries}
    train, held = split_queries(queries, options.holdout, base.seed)
    by_id = {q.id: q for q in queries}

    current = skill.description
    current_v = await scorer(current, "r0-current")
    outcome = OptimizeOutcome(out_dir, current, current, False)
    outcome.candidates.append(
        Candidate(
            0,
            "r0-current",
            current,
            f1_of(current_v, truth, train),
            f1_of(current_v, truth, held),
            reason="the description in SKILL.md",
        )
    )
    for round_no in range(1, options.rounds + 1):
        errors = [(by_id[i], bool(current_v[i])) for i in train if current_v.get(i) not in (None, truth[i])]
        if not errors:
            break  # nothing left to learn from on the training split
        prompt = variants_prompt(skill.name, current, errors, options.variants)
        proposals = await propose_variants(model, base.api_base, round_no, prompt, out_dir / f"round-{round_no}")
        proposals = [p for p in dict.fromkeys(proposals) if p != current][: options.variants]
        scored: list[tuple[Candidate, Verdicts]] = []
        for j, text in enumerate(proposals, 1):
            label = f"r{round_no}-v{j}"
            v = await scorer(text, label)
            scored.append((Candidate(round_no, label, text, f1_of(v, truth, train)), v))
        outcome.candidates += [c for c, _ in scored]
        if not scored:
            continue
        best, best_v = max(scored, key=lambda cv: -1.0 if cv[0].train_f1 is None else cv[0].train_f1)
        cur_train = f1_of(current_v, truth, train)
        for c, _ in scored:
            c.reason = "not the best variant of its round on training"
        if best.train_f1 is None or (cur_train is not None and best.train_f1 <= cur_train):
            best.reason = "no better than the current description on training"
            continue
        delta, ci, n = paired_f1_delta(best_v, current_v, truth, held, seed=base.seed + round_no)
        best.heldout_f1 = f1_of(best_v, truth, held)
        best.delta_ci = ci
        if ci is None:
            few = n < MIN_QUERIES_FOR_INTERVAL
            best.reason = f"too few held-out queries for an interval — n={n}" if few else "held-out F1 undefined"
        elif ci[0] > 0:
            best.accepted = True
            best.reason = f"held-out ΔF1 {delta:+.3f}, 95% CI [{ci[0]:+.3f}, {ci[1]:+.3f}] above 0"
            current, current_v = best.description, best_v
        else:
            shown = f"{delta:+.3f}" if delta is not None else "–"
            best.reason = f"held-out ΔF1 {shown}, 95% CI [{ci[0]:+.3f}, {ci[1]:+.3f}] includes 0"
    outcome.final = current
    outcome.accepted = current != outcome.initial
    outcome.history = out_dir / HISTORY
    outcome.history.write_text(json.dumps(_history(outcome, train, held, model), indent=2, ensure_ascii=False))
    if options.write and outcome.accepted:
        write_description(skill.root / "SKILL.md", current)
        outcome.written = True
    return outcome


def _history(outcome: OptimizeOutcome, train: list[str], held: list[str], model: str) -> dict[str, Any]:
    return {
        "schema": "skillworks.description-optimisation/1",
        "proposer_model": model,
        "train": train,
        "heldout": held,
        "initial": outcome.initial,
        "final": outcome.final,
        "accepted": outcome.accepted,
        "candidates": [
            {
                "round": c.round,
                "label": c.label,
                "description": c.description,
                "train_f1": c.train_f1,
                "heldout_f1": c.heldout_f1,
                "heldout_delta_ci": list(c.delta_ci) if c.delta_ci else None,
                "accepted": c.accepted,
                "reason": c.reason,
            }
            for c in outcome.candidates
        ],
    }
