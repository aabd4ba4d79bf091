"""The run headline printed at the end of `skillworks run` (and `make demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillworks.report import SCRIPTED_NOTE, build_summary
from skillworks.report.headline import headline_lines


def test_headline_has_rates_errors_and_the_delta_with_its_interval(fx: Any, tmp_path: Path) -> None:
    lines = headline_lines(build_summary(fx.write_run(tmp_path), resamples=300))
    assert lines[0] == f"NOTE: {SCRIPTED_NOTE}"  # every trial of the fixture is from the scripted provider
    text = "\n".join(lines)
    # none: t1 1/3, t2 2/3 (one errored trial counts 0) -> 50.0%; curated: t1 1, t2 (1 + 0.5 + missing)/3 -> 75.0%
    assert "none     pass rate  50.0%" in text and "errors 1/6" in text
    assert "curated  pass rate  75.0%" in text and "errors 0/6" in text
    assert "Δ vs none +25.0 pp, too few tasks for an interval — n=2, g 0.50" in text  # 2 paired tasks
    assert all(len(line) <= 100 for line in lines)


def test_headline_without_scripted_trials_has_no_note(fx: Any, tmp_path: Path) -> None:
    results = [fx.trial("t1", "none", k, 1.0, provider="anthropic") for k in range(3)]
    agents = [{"name": "builtin", "model": "anthropic/claude-sonnet-4-5", "options": {"label": "a1"}}]
    run = fx.write_run(tmp_path, results, fx.experiment(conditions=["none"], tasks=["t1"], agents=agents))
    lines = headline_lines(build_summary(run, resamples=100))
    assert not any(line.startswith("NOTE") for line in lines)
    assert "pass rate 100.0%" in "\n".join(lines) and "Δ" not in "\n".join(lines)


def test_headline_of_two_agents_lists_each_agent_once_with_its_conditions(fx: Any, tmp_path: Path) -> None:
    """Pass-rate rows come condition by condition; the headline still gathers each agent's rows under it."""
    results = [
        fx.trial("t1", c, k, 1.0 if c == "curated" or agent == "a2" else 0.0, agent=agent)
        for agent in ("a1", "a2")
        for c in ("none", "curated")
        for k in range(2)
    ]
    agents = [{"name": "builtin", "model": "scripted/demo", "options": {"label": a}} for a in ("a1", "a2")]
    run = fx.write_run(tmp_path, results, fx.experiment(tasks=["t1"], trials=2, agents=agents))
    lines = headline_lines(build_summary(run, resamples=100))
    assert [line for line in lines if line.endswith(":")] == ["a1:", "a2:"]
    a1, a2 = lines.index("a1:"), lines.index("a2:")
    assert [line.split()[0] for line in lines[a1 + 1 : a2] if "pass rate" in line] == ["none", "curated"]
    assert [line.split()[0] for line in lines[a2 + 1 :] if "pass rate" in line] == ["none", "curated"]
    assert "Δ vs none +100.0 pp" in "\n".join(lines[a1:a2]) and "Δ vs none +0.0 pp" in "\n".join(lines[a2:])


def test_headline_fits_80_columns_with_a_long_condition_name(fx: Any, tmp_path: Path) -> None:
    """The Δ lines are indented by a fixed 4 columns, not by the condition column: 'self-generated' vs none,
    inconclusive over 20 tasks, still fits 80 columns."""
    tasks = [f"t{i}" for i in range(20)]
    results = [
        fx.trial(t, c, 0, float((i + (c == "none")) % 2))
        for i, t in enumerate(tasks)
        for c in ("none", "self-generated")
    ]
    run = fx.write_run(tmp_path, results, fx.experiment(conditions=["none", "self-generated"], tasks=tasks, trials=1))
    lines = headline_lines(build_summary(run, resamples=200))
    delta = next(line for line in lines if "Δ vs none" in line)
    assert delta.startswith("    Δ vs none +0.0 pp, 95% CI [") and "inconclusive (n=20)" in delta
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]


def test_pr_comment_of_two_agents_keeps_each_agent_s_conditions_together(fx: Any, tmp_path: Path) -> None:
    from skillworks.report.pr_comment import render_pr_comment

    results = [
        fx.trial(t, c, 0, float(c == "curated" and t == "t1"), agent=agent)
        for agent in ("a1", "a2")
        for t in ("t1", "t2")
        for c in ("none", "curated")
    ]
    agents = [{"name": "builtin", "model": "scripted/demo", "options": {"label": a}} for a in ("a1", "a2")]
    run = fx.write_run(tmp_path, results, fx.experiment(trials=1, agents=agents))
    text = render_pr_comment(build_summary(run, resamples=100))
    rows = [line.split(" | ")[:2] for line in text.splitlines() if line.startswith(("| none", "| curated"))]
    assert rows[:4] == [["| none", "a1"], ["| curated", "a1"], ["| none", "a2"], ["| curated", "a2"]]
    assert "| Task | none / a1 | curated / a1 | none / a2 | curated / a2 |" in text
    assert "| t1 | 0% | 100% | 0% | 100% |" in text
