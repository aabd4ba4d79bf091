"""`--optimize-description` and `--generate-negatives` with scripted models (the one test double): the proposer
answers through the real gateway; each candidate description is scored by real trigger runs of the builtin agent
in the local sandbox, whose scripted model plays what an agent reading that description does. A variant that
gains only on the training split is refused; one whose held-out gain is beyond its interval is accepted; SKILL.md
changes only with write=True; generated negatives go to their own file, never into the query file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillworks.trigger import TriggerOptions, TriggerQuery, load_queries
from skillworks.trigger.optimize import OptimizeOptions, optimize_description, split_queries
from skillworks.trigger.run import run_trigger

REPO = Path(__file__).resolve().parents[3]
SKILL = REPO / "examples" / "eval" / "skills" / "csv-column-stats"
V_TRAIN_ONLY = "Column statistics for CSV files; use for sums and means of the columns named in training."
V_REAL = "Summarise any numeric CSV column (sum, mean, min, max, blanks skipped). Use for every CSV column total."

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


def _queries() -> list[TriggerQuery]:
    qs = [TriggerQuery(id=f"p{i:02d}", query=f"Total the column c{i} of table{i}.csv", should_trigger=True)
          for i in range(10)]  # fmt: skip
    qs += [TriggerQuery(id=f"n{i:02d}", query=f"Resize picture {i} to 200px", should_trigger=False) for i in range(10)]
    return qs


def _agent_script(path: Path, loads: set[str], queries: list[TriggerQuery]) -> Path:
    turns = {
        q.task_id: [{"tool_calls": [{"name": "skill", "arguments": {"name": "csv-column-stats"}}]}, {"text": "done"}]
        if q.id in loads
        else [{"text": "No skill needed."}]
        for q in queries
    }
    path.write_text(json.dumps({"by_task": turns}))
    return path


def test_only_a_held_out_gain_beyond_its_interval_is_accepted(tmp_path: Path) -> None:
    queries = _queries()
    train, held = split_queries(queries, 0.5, seed=0)
    assert len(held) == 10
    train_pos = [i for i in train if i.startswith("p")]
    positives = {q.id for q in queries if q.should_trigger}
    # what the (scripted) agent loads the skill for, under each description
    loads = {
        "current": {train_pos[0]},  # misses most positives
        V_TRAIN_ONLY: set(train_pos),  # fixes the training misses, none held out
        V_REAL: positives,  # fixes every miss
    }
    skill = tmp_path / "csv-column-stats"
    shutil.copytree(SKILL, skill)
    original = (skill / "SKILL.md").read_text()
    scripts = {d: _agent_script(tmp_path / f"agent-{k}.json", v, queries) for k, (d, v) in enumerate(loads.items())}
    proposer = tmp_path / "proposer.json"
    proposer.write_text(json.dumps({"by_task": {
        "optimize-round-1@propose": [{"text": json.dumps({"variants": [V_TRAIN_ONLY]})}],
        "optimize-round-2@propose": [{"text": "Here you go: " + json.dumps({"variants": [V_REAL]})}],
    }}))  # fmt: skip
    base = TriggerOptions(skill=skill, queries=tmp_path / "unused.json", agent="builtin", trials=1,
                          out=tmp_path / "runs", concurrency=4, write_reports=False)  # fmt: skip
    memo: dict[str, dict[str, bool | None]] = {}

    async def score(description: str, label: str) -> dict[str, bool | None]:
        key = "current" if description not in scripts else description
        if key not in memo:
            run = TriggerOptions(**{**base.__dict__, "model": f"scripted/{scripts[key]}", "description": description,
                                    "run_id": label})  # fmt: skip
            outcome = await run_trigger(run, queries=queries)
            memo[key] = {q.id: q.verdict for q in outcome.scores.queries}
        return memo[key]

    import asyncio

    opts = OptimizeOptions(base, rounds=2, variants=1, holdout=0.5, proposer_model=f"scripted/{proposer}")
    out = asyncio.run(optimize_description(opts, queries, score=score))
    by = {c.label: c for c in out.candidates}
    assert by["r1-v1"].description == V_TRAIN_ONLY and by["r1-v1"].train_f1 == 1.0  # training looks perfect …
    assert not by["r1-v1"].accepted and "includes 0" in by["r1-v1"].reason  # … but held out nothing changed
    assert by["r2-v1"].accepted and by["r2-v1"].delta_ci is not None and by["r2-v1"].delta_ci[0] > 0
    assert out.final == V_REAL and out.accepted and not out.written
    assert (skill / "SKILL.md").read_text() == original  # never without write
    history = json.loads((out.history or Path()).read_text())
    assert [c["accepted"] for c in history["candidates"]] == [False, False, True]
    assert set(history["heldout"]) == set(held) and (out.out_dir / "round-1" / "judge.jsonl").is_file()

    written = asyncio.run(optimize_description(
        OptimizeOptions(TriggerOptions(**{**base.__dict__, "run_id": "again"}), rounds=2, variants=1,
                        holdout=0.5, write=True, proposer_model=f"scripted/{proposer}"),
        queries, score=score))  # fmt: skip
    assert written.written
    text = (skill / "SKILL.md").read_text()
    assert V_REAL in text and text.endswith(original.split("---", 2)[2])  # the body is untouched


def test_generate_negatives_writes_a_review_file_and_leaves_the_queries_alone(tmp_path: Path) -> None:
    queries = REPO / "examples" / "trigger" / "csv-column-stats.queries.json"
    before = queries.read_text()
    script = tmp_path / "neg.yaml"
    script.write_text('by_task:\n  negatives@generate:\n    - text: \'{"queries": ["Convert the revenue column to '
                      'euros", "Sort sales.csv by revenue", "Sort sales.csv by revenue"]}\'\n')  # fmt: skip
    out = tmp_path / "neg.json"
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "trigger", str(SKILL), "--queries", str(queries),
         "--model", f"scripted/{script}", "--generate-negatives", "3", "--negatives-out", str(out)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    found = load_queries(out)
    assert [q.query for q in found] == ["Convert the revenue column to euros", "Sort sales.csv by revenue"]
    assert all(not q.should_trigger and "review" in (q.note or "") for q in found)
    assert queries.read_text() == before and (tmp_path / "judge.jsonl").is_file()
    again = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "trigger", str(SKILL), "--queries", str(queries),
         "--model", f"scripted/{script}", "--generate-negatives", "3", "--negatives-out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr


def test_the_cli_optimiser_keeps_a_description_that_changes_nothing(tmp_path: Path) -> None:
    """The real CLI path: trigger runs score each description (this scripted agent ignores the description), the
    proposer answers through the gateway; a variant no better on training never reaches the held-out test."""
    skill = tmp_path / "csv-column-stats"
    shutil.copytree(SKILL, skill)
    before = (skill / "SKILL.md").read_text()
    proposer = tmp_path / "proposer.json"
    proposer.write_text(json.dumps({"default": [{"text": json.dumps({"variants": [V_REAL]})}]}))
    agent = REPO / "examples" / "trigger" / "csv-column-stats.builtin.yaml"
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "trigger", str(skill), "--queries",
         str(REPO / "examples" / "trigger" / "csv-column-stats.queries.json"), "--model", f"scripted/{agent}",
         "--proposer-model", f"scripted/{proposer}", "--optimize-description", "--rounds", "1", "--variants", "1",
         "--trials", "1", "--concurrency", "4", "--write", "--out", str(tmp_path / "runs"), "--run-id", "opt"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    history = json.loads((tmp_path / "runs" / "opt" / "history.json").read_text())
    [current, variant] = history["candidates"]
    assert current["train_f1"] == variant["train_f1"]  # the same agent behaviour under both descriptions
    assert not history["accepted"] and "no better than the current description" in variant["reason"]
    assert (skill / "SKILL.md").read_text() == before  # --write changes nothing without an accepted variant
    assert "the description stays" in proc.stdout
