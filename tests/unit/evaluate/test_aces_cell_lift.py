"""ACES fidelity in the eval report (hand-written run directories): the cell lift is the mean over metrics of
the cell's per-metric lifts (the overall-score Δ stays, named as what it is), and product-target comparisons
are a "Target delta", not Skill Lift."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from skillworks.experiment.spec import AgentConfig, ExperimentSpec, SkillRef, TaskRef
from skillworks.experiment.store import RunStore
from skillworks.report.eval_report import build_eval_summary, render_eval_markdown
from skillworks.results import TrialResult

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _run(root: Path, rows: list[tuple[str, str, dict[str, float]]], comparisons: list[dict[str, str]] | None) -> Path:
    run = root / "alpha"
    store = RunStore(run)
    conditions = list(dict.fromkeys(c for _, c, _ in rows))
    ev: dict[str, object] = {"skill": "alpha", "pass_threshold": 0.5}
    if comparisons:
        ev["comparisons"] = comparisons
    store.write_spec(
        ExperimentSpec(
            run_id="alpha",
            created_at=T0,
            skillworks_version="0",
            tasks=[TaskRef(id=f"alpha--{c}", path="/x", format="evals.json", content_hash="0") for c in ("a", "b")],
            conditions=conditions,
            agents=[AgentConfig(name="builtin", model="scripted/a.yaml")],
            trials=1,
            seed=0,
            concurrency=1,
            target_skill=SkillRef(name="alpha", path="/x", package_hash="0" * 64),
            extra={"eval": ev},
        )
    )
    for i, (case, cond, metrics) in enumerate(rows):
        tid = f"alpha--{case}__{cond}__builtin-a__t0"
        store.append(
            TrialResult(
                trial_id=tid,
                run_id="alpha",
                task_id=f"alpha--{case}",
                condition=cond,
                agent="builtin-a",
                provider="scripted",
                trial_index=0,
                seed=0,
                outcome="ungraded",
                metrics=metrics,
                started_at=T0 + timedelta(seconds=i),
                finished_at=T0 + timedelta(seconds=i + 1),
            )
        )
    return run


def test_cell_lift_is_the_mean_of_per_metric_lifts(tmp_path: Path) -> None:
    # security lifts 0 and 0 -> 0; accuracy 1.0 and 0.5 -> 0.75; efficiency is unpaired (baseline never
    # scored it) -> no lift. Cell lift = (0 + 0.75) / 2 = 0.375; the overall-score Δ is (0.6 + 0.2) / 2 = 0.4.
    w, b = "with-skill", "target-withheld"
    rows = [
        ("a", w, {"overall": 0.9, "security": 1.0, "accuracy": 1.0, "skill_efficiency": 0.8}),
        ("a", b, {"overall": 0.3, "security": 1.0, "accuracy": 0.0}),
        ("b", w, {"overall": 0.7, "security": 0.5, "accuracy": 1.0, "skill_efficiency": 0.6}),
        ("b", b, {"overall": 0.5, "security": 0.5, "accuracy": 0.5}),
    ]
    s = build_eval_summary(_run(tmp_path, rows, None), resamples=100)
    (c,) = s.comparisons
    assert c.kind == "Skill Lift"
    (cell,) = c.cells
    assert cell.lift == pytest.approx(0.4) and cell.cell_lift == pytest.approx(0.375) and cell.cell_lift_metrics == 2
    md = render_eval_markdown(s)
    assert "## Skill Lift: with-skill vs target-withheld" in md
    assert "| alpha | builtin-a | 2 | 0.800 | 0.400 | +0.400 | +0.375 |" in md


def test_product_target_comparisons_are_a_target_delta(tmp_path: Path) -> None:
    rows = [
        ("a", "product-v2", {"overall": 1.0}),
        ("a", "product-plain", {"overall": 0.5}),
        ("b", "product-v2", {"overall": 0.5}),
        ("b", "product-plain", {"overall": 0.5}),
    ]
    comparisons = [{"treatment": "product-v2", "baseline": "product-plain"}]
    s = build_eval_summary(_run(tmp_path, rows, comparisons), resamples=100)
    (c,) = s.comparisons
    assert c.kind == "Target delta"
    md = render_eval_markdown(s)
    assert "## Target delta: product-v2 vs product-plain" in md and "Skill Lift:" not in md
