"""The optimiser's split and acceptance arithmetic (the proposer is a scripted model behind the real gateway;
the verdicts per description are given, so only the rules are under test here)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from skillworks.trigger import TriggerOptions, TriggerQuery
from skillworks.trigger.optimize import OptimizeOptions, optimize_description, paired_f1_delta, split_queries

REPO = Path(__file__).resolve().parents[3]
SKILL = REPO / "examples" / "eval" / "skills" / "csv-column-stats"


def _qs(n: int) -> list[TriggerQuery]:
    return [TriggerQuery(id=f"q{i:02d}", query=f"query {i}", should_trigger=i % 2 == 0) for i in range(n)]


def test_split_is_stratified_and_reproducible() -> None:
    qs = _qs(20)
    train, held = split_queries(qs, 0.5, seed=1)
    assert split_queries(qs, 0.5, seed=1) == (train, held) and not set(train) & set(held)
    assert sum(int(i[1:]) % 2 == 0 for i in held) == 5 and len(held) == 10


def test_too_few_held_out_queries_means_no_acceptance(tmp_path: Path) -> None:
    qs = _qs(8)  # 4 held out
    proposer = tmp_path / "p.json"
    proposer.write_text(json.dumps({"default": [{"text": '{"variants": ["better"]}'}]}))

    async def score(description: str, label: str) -> dict[str, bool | None]:
        good = description == "better"
        return {q.id: (q.should_trigger if good else False) for q in qs}

    base = TriggerOptions(skill=SKILL, queries=tmp_path / "q.json", out=tmp_path)
    out = asyncio.run(optimize_description(
        OptimizeOptions(base, rounds=1, variants=1, proposer_model=f"scripted/{proposer}"), qs, score=score))  # fmt: skip
    variant = out.candidates[-1]
    assert variant.train_f1 == 1.0 and not variant.accepted and out.final == out.initial
    assert variant.reason == "too few held-out queries for an interval — n=4"


def test_paired_delta_interval() -> None:
    qs = _qs(12)
    truth = {q.id: q.should_trigger for q in qs}
    ids = list(truth)
    perfect = dict(truth)
    one_off = {**truth, "q00": False}
    delta, ci, n = paired_f1_delta(perfect, one_off, truth, ids)
    assert n == 12 and delta is not None and delta > 0 and ci is not None and ci[0] <= 0  # one query: not beyond
    none = {i: False for i in ids}
    delta, ci, _ = paired_f1_delta(perfect, none, truth, ids)
    assert delta == 1.0 and ci is not None and ci[0] > 0
