"""The dry-run's estimate of model calls, tokens and cost: from a pilot run the test writes (usage made by
hand, provider "scripted": constructed results, not a model evaluation) or from the token budget; prices
from LiteLLM's bundled table, "unknown" when a model is not in it."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.experiment.cost_estimate import Prices, TrialUsage, estimate_lines, model_prices, trial_cost
from skillworks.results import TrialResult, Usage

T0 = datetime(2026, 1, 1, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[3]
MODEL = "anthropic/claude-sonnet-4-5"


def _pilot(root: Path, agent: str = "a1") -> Path:
    run = root / "pilot"
    run.mkdir()
    exp = {
        "run_id": "pilot",
        "tasks": [{"id": "t1", "path": "tasks/t1"}],
        "conditions": ["none", "curated"],
        "agents": [{"name": "builtin", "model": MODEL, "options": {"label": agent}}],
        "trials": 2,
        "seed": 1,
        "lock": {"skills": {}},
    }
    (run / "experiment.json").write_text(json.dumps(exp), encoding="utf-8")
    rows = [
        TrialResult(
            trial_id=f"t1__{cond}__{agent}__t{k}",
            run_id="pilot",
            task_id="t1",
            condition=cond,
            agent=agent,
            model=MODEL,
            provider="scripted",
            trial_index=k,
            seed=k,
            reward=1.0,
            outcome="solved",
            usage=Usage(input_tokens=inp, output_tokens=out, cached_tokens=cached, calls=calls, source="gateway"),
            started_at=T0,
            finished_at=T0,
        )
        for cond, k, inp, out, cached, calls in (
            ("none", 0, 1000, 100, 0, 2),
            ("none", 1, 3000, 300, 1000, 4),
            ("curated", 0, 5000, 500, 2000, 6),
            ("curated", 1, 5000, 500, 2000, 6),
        )
    ]
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    return run


def test_prices_and_trial_cost() -> None:
    table = {"claude-x": {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5}}
    assert model_prices("anthropic/claude-x", table) == Prices(3e-6, 1.5e-5, 3e-6)  # no cache price: input's
    assert model_prices("nope/model", table) is None
    p = Prices(input=2e-6, output=1e-5, cached=2e-7)
    # 4000 input of which 1000 cached, 300 output
    assert trial_cost(TrialUsage(3, 4000, 300, 1000, bound=False), p) == pytest.approx(
        3000 * 2e-6 + 1000 * 2e-7 + 300 * 1e-5
    )
    assert trial_cost(TrialUsage(None, 10_000, 0, 0, bound=True), p) == pytest.approx(10_000 * 1e-5)  # at most
    real = model_prices(MODEL)  # LiteLLM's bundled table knows this model
    assert real is not None and real.input > 0 and real.output > real.input


def test_estimate_from_a_pilot(tmp_path: Path) -> None:
    pilot = _pilot(tmp_path)
    prices = model_prices(MODEL)
    assert prices is not None
    lines = estimate_lines(5, ["none", "curated"], [("a1", MODEL), ("a2", "scripted/x.yaml")], 3, pilot=pilot)
    # per trial: none = mean of (1000, 100, 0, 2) and (3000, 300, 1000, 4); curated = (5000, 500, 2000, 6)
    none = TrialUsage(3, 2000, 200, 500, bound=False)
    curated = TrialUsage(6, 5000, 500, 2000, bound=False)
    cost = 15 * (trial_cost(none, prices) + trial_cost(curated, prices))
    assert lines[0] == (
        f"estimated for a1 (from the pilot {pilot}): model calls {15 * 3 + 15 * 6}, "
        f"tokens {15 * (2200 + 5500) / 1e3:.1f}k, cost ${cost:.2f}"
    )
    # a2 is not in the pilot: all its trials are used; its model has no price
    assert lines[1].startswith("estimated for a2") and "cost unknown (no price for scripted/x.yaml" in lines[1]
    assert lines[-1] == "estimated cost: unknown"  # one part unknown: the total is too, never $0
    only_priced = estimate_lines(5, ["none", "curated"], [("a1", MODEL)], 3, pilot=pilot)
    assert only_priced[-1] == f"estimated cost: ${cost:.2f}"


def test_estimate_from_the_budget_and_without_anything() -> None:
    prices = model_prices(MODEL)
    assert prices is not None
    lines = estimate_lines(2, ["none"], [("a1", MODEL)], 2, trial_token_budget=10_000)
    assert "at most, from --max-trial-tokens 10000" in lines[0] and "model calls unknown" in lines[0]
    assert lines[-1] == f"estimated cost: ${4 * 10_000 * max(prices.input, prices.output):.2f}"
    assert estimate_lines(2, ["none"], [("a1", MODEL)], 2)[0].startswith("estimated cost: unknown (no pilot run")


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", "run", *args])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_dry_run_with_a_pilot_prints_the_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # a dry run needs no key
    pilot = _pilot(tmp_path)
    task = str(REPO / "examples" / "quickstart" / "lab-units-to-si")
    common = [task, "--agent", "builtin", "--model", MODEL, "--conditions", "none,curated", "--out", str(tmp_path)]
    assert _run(monkeypatch, *common, "--dry-run", "--pilot", str(pilot)) == 0
    err = capsys.readouterr().err
    assert f"(from the pilot {pilot}): model calls 9," in err and "estimated cost: $" in err
    assert _run(monkeypatch, *common, "--pilot", str(pilot)) == 2  # --pilot without --dry-run
    assert "error: --pilot is for --dry-run" in capsys.readouterr().err
    assert _run(monkeypatch, *common, "--dry-run", "--pilot", str(tmp_path / "absent")) == 2
    assert "run directory not found" in capsys.readouterr().err


def test_a_pilot_with_no_recorded_trial_gives_unknown(tmp_path: Path) -> None:
    pilot = _pilot(tmp_path)
    (pilot / "results.jsonl").write_text("", encoding="utf-8")
    (line,) = estimate_lines(5, ["none"], [("a1", MODEL)], 3, pilot=pilot)
    assert line == f"estimated model calls, tokens and cost: unknown (the pilot {pilot} has no recorded trial)"
