"""Break-even of compiling in tokens: the compile step's model tokens over the solve tokens saved per solve."""

from __future__ import annotations

from datetime import UTC, datetime

from skillworks.report.compiled import compiled_comparisons
from skillworks.results import SkillSourceInfo, TrialResult, Usage, outcome_for

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _trial(task: str, condition: str, k: int, tokens: tuple[int, int], record: dict | None = None) -> TrialResult:
    return TrialResult(
        trial_id=f"{task}__{condition}__a__t{k}",
        run_id="r",
        task_id=task,
        condition=condition,
        agent="a",
        trial_index=k,
        seed=k,
        attempt=1,
        reward=1.0,
        outcome=outcome_for(1.0, None),
        usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1], calls=2, source="gateway"),
        skill_source=SkillSourceInfo(record=record) if record is not None else None,
        started_at=T0,
        finished_at=T0,
    )


def _record(path: str, tokens: int, reused: bool) -> dict:
    return {"compiled": [{"path": path, "compile_tokens": tokens, "compile_sec": 0.5, "reused": reused}]}


def test_break_even_in_tokens_counts_each_artifact_once() -> None:
    results = []
    for task, art in (("t1", "/c/a"), ("t2", "/c/b")):
        for k in range(2):
            results.append(_trial(task, "curated", k, (5000, 500)))
            # the same artifact serves both trials of a task (the second reuses it): its tokens count once
            results.append(_trial(task, "compiled", k, (3600, 400), _record(art, 1500, reused=k > 0)))
    (block,) = compiled_comparisons(results)
    assert block.compile_tokens == 3000
    assert block.solve_tokens_saved == 1500  # (5000 + 500) − (3600 + 400) per solve
    assert block.break_even_tokens == 2.0


def test_no_token_saving_means_no_break_even_and_a_deterministic_compile_is_free() -> None:
    worse = [
        _trial("t", "curated", 0, (1000, 100)),
        _trial("t", "compiled", 0, (1200, 100), _record("/c/x", 900, False)),
    ]
    (block,) = compiled_comparisons(worse)
    assert block.solve_tokens_saved == -200 and block.break_even_tokens is None
    free = [_trial("t", "curated", 0, (1000, 100)), _trial("t", "compiled", 0, (800, 100), _record("/c/y", 0, False))]
    (block,) = compiled_comparisons(free)
    assert block.compile_tokens == 0 and block.break_even_tokens == 0.0
