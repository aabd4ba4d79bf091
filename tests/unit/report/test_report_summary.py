"""build_summary against hand-computed values (see conftest.py for the trial table)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillworks.report import SCRIPTED_NOTE, build_summary


def _rate(summary, condition: str, agent: str = "a1"):  # type: ignore[no-untyped-def]
    return next(r for r in summary.pass_rates if r.condition == condition and r.agent == agent)


def test_pass_rates_counts_and_intervals(fx: Any, tmp_path: Path) -> None:
    s = build_summary(fx.write_run(tmp_path))
    none, cur = _rate(s, "none"), _rate(s, "curated")
    assert none.rate == pytest.approx(0.5)
    assert none.rate_excluding_errors == pytest.approx(2 / 3)
    assert cur.rate == pytest.approx(0.75)
    assert cur.rate_excluding_errors == pytest.approx(0.875)
    assert (none.n, cur.n) == (6, 6)  # tasks x trials
    assert none.wald is not None and none.wilson is not None
    assert (none.wald.low, none.wald.high) == pytest.approx((0.0999240270, 0.9000759730), abs=1e-6)
    assert (none.wilson.low, none.wilson.high) == pytest.approx((0.1876163065, 0.8123836935), abs=1e-6)
    assert none.n_excluding_errors == 5
    assert (cur.recorded, cur.missing, none.errored) == (5, 1, 1)
    c = s.counts
    assert (c.planned, c.recorded, c.scored, c.errored, c.missing) == (12, 11, 10, 1, 1)
    assert s.trials_per_task == 3
    assert s.tasks == ["t1", "t2"] and s.conditions == ["none", "curated"]


def test_delta_gain_and_bootstrap(fx: Any, tmp_path: Path) -> None:
    s = build_summary(fx.write_run(tmp_path), resamples=2000)
    (d,) = s.deltas
    assert (d.condition, d.baseline, d.agent) == ("curated", "none", "a1")
    assert d.delta_pp == pytest.approx(25.0)
    assert d.g == pytest.approx(0.5)
    assert not hasattr(d, "delta_pp_excluding_errors")  # an unpaired difference of two means: not reported
    assert d.paired.n_paired == 2 and d.paired.unpaired_tasks == []
    assert d.paired.delta_pp == pytest.approx(((1 - 1 / 3) + (0.75 - 1.0)) / 2 * 100)
    assert d.paired.ci_low_pp is None and d.paired.ci_high_pp is None  # 2 paired tasks: below the threshold
    assert d.paired.ci_note == "too few tasks for an interval — n=2"
    assert d.ci_method == "paired-t with trial-noise floor, skew-corrected" and d.ci_note == d.paired.ci_note
    (g,) = s.gain_summary
    assert g.mean_g == pytest.approx(0.5) and g.mean_delta_pp == pytest.approx(25.0)
    assert s.bootstrap.seed == 11 and s.bootstrap.resamples == 2000  # experiment seed by default


def test_bootstrap_seed_is_deterministic(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    assert build_summary(run, resamples=500, seed=3) == build_summary(run, resamples=500, seed=3)


def test_g_undefined_with_full_baseline(fx: Any, tmp_path: Path) -> None:
    results = [fx.trial(t, "none", k, 1.0) for t in ("t1", "t2") for k in range(3)]
    results += [fx.trial(t, "curated", k, 0.5) for t in ("t1", "t2") for k in range(3)]
    s = build_summary(fx.write_run(tmp_path, results), resamples=200)
    (d,) = s.deltas
    assert d.g is None and d.g_note is not None and "100%" in d.g_note
    assert d.delta_pp == pytest.approx(-50.0)
    (g,) = s.gain_summary
    assert g.mean_g is None and g.n_g_undefined == 1
    assert any("undefined" in n for n in s.notes)


def test_empty_condition(fx: Any, tmp_path: Path) -> None:
    exp = fx.experiment(conditions=("none", "curated", "self-generated"))
    s = build_summary(fx.write_run(tmp_path, exp=exp), resamples=200)
    sg = _rate(s, "self-generated")
    assert sg.rate == 0.0 and sg.recorded == 0 and sg.missing == 6
    assert sg.rate_excluding_errors is None and sg.wilson_excluding_errors is None
    assert sg.tasks_without_scored == ["t1", "t2"]
    d = next(d for d in s.deltas if d.condition == "self-generated")
    assert d.delta_pp == pytest.approx(-50.0)
    assert d.g == pytest.approx(-1.0)
    assert d.paired.n_paired == 0 and d.paired.delta_pp is None
    assert d.paired.unpaired_tasks == ["t1", "t2"]
    assert any("no trial recorded for condition 'self-generated'" in n for n in s.notes)
    assert s.counts.missing == 7


def test_task_with_all_trials_errored(fx: Any, tmp_path: Path) -> None:
    results = [r for r in fx.standard_results() if not (r.task_id == "t2" and r.condition == "none")]
    results += [fx.trial("t2", "none", k, None, error=fx.SANDBOX_ERROR) for k in range(3)]
    s = build_summary(fx.write_run(tmp_path, results), resamples=200)
    none = _rate(s, "none")
    assert none.rate == pytest.approx((1 / 3 + 0) / 2)
    assert none.rate_excluding_errors == pytest.approx(1 / 3)
    assert none.tasks_without_scored == ["t2"]
    (d,) = s.deltas
    assert d.paired.paired_tasks == ["t1"] and d.paired.unpaired_tasks == ["t2"]
    assert d.paired.delta_pp == pytest.approx((1 - 1 / 3) * 100)
    assert len([e for e in s.errors if not e.superseded]) == 3


def test_tables_errors_and_scripted_label(fx: Any, tmp_path: Path) -> None:
    s = build_summary(fx.write_run(tmp_path), resamples=200)
    assert s.scripted_provider is True and s.notes[0] == SCRIPTED_NOTE
    assert s.providers == {"scripted": 11}
    si = {r.condition: r for r in s.skill_invocation}
    assert si["curated"].rate == pytest.approx(0.6)  # 3 of 5 scored trials invoked a skill
    assert si["curated"].invoked.mean_reward == pytest.approx(1.0)
    assert si["curated"].not_invoked.mean_reward == pytest.approx(0.75)
    assert si["none"].rate == 0.0 and si["none"].errored_excluded == 1
    usage = {u.condition: u for u in s.usage}
    assert usage["none"].cost_usd == pytest.approx(0.05)
    assert usage["curated"].cost_usd == pytest.approx(0.10)
    assert usage["none"].input_tokens == 5000 and usage["none"].input_tokens_mean == pytest.approx(5000 / 6)
    assert usage["curated"].calls == 10
    times = {t.condition: t for t in s.phase_times}
    assert times["none"].setup_sec == pytest.approx((5 * 1 + 5) / 6)
    assert times["curated"].agent_sec == pytest.approx(10.0)
    oc = {o.condition: o for o in s.outcomes}
    assert (oc["none"].solved, oc["none"].failed, oc["none"].error) == (3, 2, 1)
    assert (oc["curated"].solved, oc["curated"].partial, oc["curated"].missing) == (4, 1, 1)
    fm = {f.condition: f for f in s.failure_modes}
    assert (fm["none"].timeout, fm["none"].verification_failed, fm["none"].execution_error) == (1, 1, 1)
    (err,) = s.errors
    assert (err.trial_id, err.phase, err.category) == ("t2__none__a1__t2", "setup", "sandbox_error")
    (miss,) = s.missing_trials
    assert (miss.task_id, miss.condition, miss.trial_index) == ("t2", "curated", 2)
    cells = {(c.condition, t.task_id): c for t in s.per_task for c in t.cells}
    assert cells[("curated", "t2")].rate == pytest.approx(0.5)
    assert cells[("none", "t1")].rate == pytest.approx(1 / 3)


def test_retry_supersedes_failed_attempt(fx: Any, tmp_path: Path) -> None:
    results = fx.standard_results()
    results.append(fx.trial("t2", "none", 2, 1.0, attempt=2))  # retry of the errored trial succeeded
    s = build_summary(fx.write_run(tmp_path, results), resamples=200)
    assert _rate(s, "none").rate == pytest.approx((1 / 3 + 1) / 2)
    assert s.counts.superseded_attempts == 1
    (err,) = s.errors
    assert err.superseded is True and err.attempt == 1


def test_combined_runs(fx: Any, tmp_path: Path) -> None:
    a = fx.write_run(tmp_path, name="run-1")
    b = fx.write_run(
        tmp_path,
        [r.model_copy(update={"run_id": "run-2"}) for r in fx.standard_results()],
        name="run-2",
        exp=fx.experiment(run_id="run-2"),
    )
    s = build_summary([a, b], resamples=200)
    assert s.run_ids == ["run-1", "run-2"]
    assert s.trials_per_task == 6
    assert _rate(s, "none").rate == pytest.approx(0.5)
    assert _rate(s, "none").n == 12
    assert s.counts.planned == 24 and s.counts.missing == 2


def test_multi_agent_aggregate_rows_and_mean_g(fx: Any, tmp_path: Path) -> None:
    agents = (
        {"name": "a1", "model": "m1", "provider": "scripted"},
        {"name": "a2", "model": "m2", "provider": "scripted"},
    )
    results = fx.standard_results()
    results += [fx.trial(t, "none", k, 0.0, agent="a2") for t in ("t1", "t2") for k in range(3)]
    results += [fx.trial(t, "curated", k, 1.0, agent="a2") for t in ("t1", "t2") for k in range(3)]
    s = build_summary(fx.write_run(tmp_path, results, exp=fx.experiment(agents=agents)), resamples=200)
    gains = {d.agent: d.g for d in s.deltas}
    assert gains["a1"] == pytest.approx(0.5) and gains["a2"] == pytest.approx(1.0)
    (g,) = s.gain_summary
    assert g.mean_g == pytest.approx(0.75) and g.n_configs == 2
    assert g.mean_delta_pp == pytest.approx((25 + 100) / 2)
    agg = [o for o in s.outcomes if o.agent is None]
    assert {o.condition for o in agg} == {"none", "curated"}
    none_all = next(o for o in agg if o.condition == "none")
    assert (none_all.solved, none_all.failed, none_all.error) == (3, 8, 1)


def test_ungraded_trials_are_called_out_and_eval_runs_are_recognised(fx: Any, tmp_path: Path) -> None:
    from skillworks.report import is_eval_run

    rows = [
        fx.trial("t1", "none", 0, None).model_copy(update={"outcome": "ungraded"}),
        fx.trial("t1", "curated", 0, 1.0),
    ]
    run = fx.write_run(tmp_path, rows, fx.experiment(tasks=("t1",), trials=1))
    summary = build_summary(run, resamples=100)
    assert any("1 trial(s) have no verifier" in w for w in summary.warnings)
    assert not is_eval_run(run)
    spec = json.loads((run / "experiment.json").read_text())
    spec["target_skill"] = {"name": "s", "path": "/s", "package_hash": "0" * 64}
    (run / "experiment.json").write_text(json.dumps(spec))
    assert is_eval_run(run)
