"""Statistics as the papers define them: the headline Δ's interval is on its own (fixed) frame, the scored-only
variant is labelled as such, and the mean row over configurations is reported (hand-computed runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillworks.report import build_summary, render_markdown
from skillworks.report.headline import headline_lines
from skillworks.results import TrialError

ERR = TrialError(category="sandbox_error", message="no container", phase="setup")


def test_headline_delta_gets_an_interval_on_its_own_frame(fx: Any, tmp_path: Path) -> None:
    # none: 0.5 on every task; curated: t1 all errored (0 in the frame), t2 and t3 solved.
    # Fixed frame: 0.667 - 0.5 = +16.7 pp. Scored-only pairs t2, t3 only: +50 with the CI [50, 50],
    # which excludes the headline Δ; the headline's own interval (diffs -0.5, +0.5, +0.5) contains it.
    results = []
    for task in ("t1", "t2", "t3"):
        for k in range(2):
            results.append(fx.trial(task, "none", k, 1.0 if k == 0 else 0.0))
            if task == "t1":
                results.append(fx.trial(task, "curated", k, None, error=ERR))
            else:
                results.append(fx.trial(task, "curated", k, 1.0))
    run = fx.write_run(tmp_path, results, fx.experiment(tasks=("t1", "t2", "t3"), trials=2))
    s = build_summary(run, resamples=2000)
    (d,) = s.deltas
    assert round(d.delta_pp, 1) == 16.7
    assert d.ci_low_pp is None and d.ci_note == "too few tasks for an interval — n=3"  # never [x, x] from 3 tasks
    assert d.paired.delta_pp == 50.0 and d.paired.ci_low_pp is None
    text = "\n".join(headline_lines(s))
    assert "Δ vs none +16.7 pp, too few tasks for an interval — n=3, g 0.33" in text
    assert "scored-only: Δ +50.0 pp over 2 paired tasks, no interval (n=2)" in text
    md = render_markdown(s)
    assert (
        "| curated | a1 | 66.7% | 50.0% | +16.7 | too few tasks for an interval — n=3 | 0.333 | "
        "too few tasks for an interval — n=3 | +50.0 | "
        "too few tasks for an interval — n=2 | 2 | t1 |"
    ) in md


def test_mean_row_over_configurations(fx: Any, tmp_path: Path) -> None:
    # a1: none 0.5, curated 1.0 (g 1.0); a2: none 0, curated 0.5 (g 0.5).
    # mean row: none 25%, curated 75%, Δ +50, mean g 0.75 (g of the means would be 0.667)
    results = []
    for agent, none, curated in (("a1", (1.0, 0.0), (1.0, 1.0)), ("a2", (0.0, 0.0), (1.0, 0.0))):
        for k in range(2):
            results.append(fx.trial("t1", "none", k, none[k], agent=agent))
            results.append(fx.trial("t1", "curated", k, curated[k], agent=agent))
    agents = (
        {"name": "builtin", "model": "scripted/demo", "options": {"label": "a1"}},
        {"name": "builtin", "model": "scripted/demo", "options": {"label": "a2"}},
    )
    run = fx.write_run(tmp_path, results, fx.experiment(tasks=("t1",), trials=2, agents=agents))
    s = build_summary(run, resamples=200)
    (row,) = s.gain_summary
    assert (row.n_configs, row.mean_without_rate, row.mean_with_rate, row.mean_delta_pp) == (2, 0.25, 0.75, 50.0)
    assert row.mean_g == 0.75
    md = render_markdown(s)
    assert "| curated | 2 | 75.0% | 25.0% | +50.0 | 0.750 | 0 |" in md


def test_a_baseline_without_a_scored_trial_gets_no_delta(fx: Any, tmp_path: Path) -> None:
    results = []
    for task in ("t1", "t2", "t3", "t4", "t5", "t6"):
        results.append(fx.trial(task, "none", 0, None, error=ERR))  # every baseline trial errored
        results.append(fx.trial(task, "curated", 0, 1.0))
    run = fx.write_run(tmp_path, results, fx.experiment(tasks=("t1", "t2", "t3", "t4", "t5", "t6"), trials=1))
    (d,) = build_summary(run).deltas
    assert d.delta_pp is None and d.g is None and d.ci_low_pp is None
    assert d.ci_note == "no Δ: the 'none' baseline has no scored trial"
    assert "    no Δ: the 'none' baseline has no scored trial" in headline_lines(build_summary(run))


def test_six_tasks_get_a_delta_interval_everywhere(fx: Any, tmp_path: Path) -> None:
    """At 6 paired tasks, each with the same observed difference, the interval is not zero-width."""
    tasks = tuple(f"t{i}" for i in range(6))
    results = []
    for task in tasks:
        for k in range(2):
            results.append(fx.trial(task, "none", k, 1.0 if k == 0 else 0.0))
            results.append(fx.trial(task, "curated", k, 1.0))
    s = build_summary(fx.write_run(tmp_path, results, fx.experiment(tasks=tasks, trials=2)))
    (d,) = s.deltas
    assert d.ci_low_pp is not None and d.ci_high_pp is not None and d.ci_note is None
    assert d.ci_low_pp < 50.0 < d.ci_high_pp and d.ci_high_pp - d.ci_low_pp > 20.0
    text = "\n".join(headline_lines(s))
    assert f"Δ vs none +50.0 pp, 95% CI [{d.ci_low_pp:+.1f}, {d.ci_high_pp:+.1f}]" in text
    assert f"+50.0 | [{d.ci_low_pp:+.1f}, {d.ci_high_pp:+.1f}]" in render_markdown(s)
    # g = 0.5 / 0.5 = 1 (curated solved everything): its interval reaches 1 and is not zero-width
    assert d.g == 1.0 and d.g_ci_low is not None and d.g_ci_high == 1.0 and d.g_ci_low < 0.9
    assert f"| 1.000 | [{d.g_ci_low:+.2f}, +1.00] |" in render_markdown(s)
    # the headline and the PR comment show g with its interval too
    from skillworks.report.pr_comment import render_pr_comment

    assert f"    g 1.00, 95% CI [{d.g_ci_low:+.2f}, +1.00]" in headline_lines(s)
    assert f"| 1.00, 95% CI [{d.g_ci_low:+.2f}, +1.00] |" in render_pr_comment(s)


def test_pass_rate_interval_over_tasks_in_headline_and_pr_comment(fx: Any, tmp_path: Path) -> None:
    from skillworks.report.pr_comment import render_pr_comment

    # curated: t0-t5 pass 1 of 2 trials, t6-t7 both (6 tasks failed a trial, 8 passed one): 62.5 %
    tasks = tuple(f"t{i}" for i in range(8))
    results = [
        fx.trial(t, c, k, 1.0 if c == "none" or k == 0 or t in ("t6", "t7") else 0.0)
        for t in tasks
        for c in ("none", "curated")
        for k in range(2)
    ]
    s = build_summary(fx.write_run(tmp_path, results, fx.experiment(tasks=tasks, trials=2)))
    row = next(r for r in s.pass_rates if r.condition == "curated")
    assert row.task_interval is not None and row.task_interval.low < 0.625 < row.task_interval.high < 1.0
    shown = f"[{row.task_interval.low * 100:.1f}, {row.task_interval.high * 100:.1f}]"
    assert f"curated  pass rate  62.5%  95% CI {shown}" in "\n".join(headline_lines(s))
    assert f"| curated | a1 | 62.5% | {shown} |" in render_pr_comment(s)
    # none passed every trial: no interval, the reason in the headline and the PR comment
    note = "too few tasks that failed a trial for an interval — 0 of 8 tasks did"
    base = next(r for r in s.pass_rates if r.condition == "none")
    assert base.task_interval is None and base.task_interval_note == note
    assert note in "\n".join(headline_lines(s)) and note in render_pr_comment(s)
