"""The eval report on hand-written run directories (no sandbox): combining runs, unpaired and errored
cases, the verifier reward beside the metrics, pass@k, and CLI errors."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.experiment.spec import AgentConfig, ExperimentSpec, SkillRef, TaskRef
from skillworks.experiment.store import RunStore
from skillworks.report.eval_report import build_eval_summary, render_eval_markdown, write_eval_report
from skillworks.results import TrialError, TrialResult

T0 = datetime(2026, 1, 1, tzinfo=UTC)
W, B = "with-skill", "target-withheld"


def _write_run(
    root: Path, skill: str, rows: list[tuple[str, str, int, float | None, float | None, bool]], trials: int = 1
) -> Path:
    """rows: (case, condition, trial index, overall, reward, errored)."""
    run = root / skill
    store = RunStore(run)
    cases = sorted({r[0] for r in rows})
    store.write_spec(
        ExperimentSpec(
            run_id=skill,
            created_at=T0,
            skillworks_version="0",
            tasks=[TaskRef(id=f"{skill}--{c}", path="/x", format="evals.json", content_hash="0") for c in cases],
            conditions=[W, B],
            agents=[AgentConfig(name="builtin", model="scripted/a.yaml")],
            trials=trials,
            seed=0,
            concurrency=1,
            target_skill=SkillRef(name=skill, path="/x", package_hash="0" * 64),
            support_skills=[SkillRef(name="helper", path="/x", package_hash="1" * 64)],
            extra={"eval": {"skill": skill, "judge_model": "scripted/j.yaml", "pass_threshold": 0.5}},
        )
    )
    for i, (case, cond, k, overall, reward, errored) in enumerate(rows):
        tid = f"{skill}--{case}__{cond}__builtin-a__t{k}"
        tdir = run / "trials" / tid
        tdir.mkdir(parents=True)
        visible = [{"name": "helper", "package_hash": "1" * 64}]
        if cond == W:
            visible.append({"name": skill, "package_hash": "0" * 64})
        (tdir / "skills.json").write_text(json.dumps({"visible": visible}))
        store.append(
            TrialResult(
                trial_id=tid,
                run_id=skill,
                task_id=f"{skill}--{case}",
                condition=cond,
                agent="builtin-a",
                provider="scripted",
                trial_index=k,
                seed=0,
                reward=reward,
                outcome="error" if errored else "ungraded",
                error=TrialError(category="sandbox_error", message="boom", phase="setup") if errored else None,
                metrics={} if overall is None or errored else {"overall": overall, "security": 1.0},
                paths={"trajectory": f"trials/{tid}/trajectory.json", "skills": f"trials/{tid}/skills.json"},
                started_at=T0 + timedelta(seconds=i),
                finished_at=T0 + timedelta(seconds=i + 2),
            )
        )
    return run


def test_single_run_numbers_unpaired_errors_reward_and_passk(tmp_path: Path) -> None:
    run = _write_run(
        tmp_path,
        "alpha",
        [
            ("a", W, 0, 1.0, 1.0, False),
            ("a", W, 1, 0.0, 0.0, False),
            ("a", B, 0, 0.25, 0.0, False),
            ("a", B, 1, 0.25, 0.0, False),
            ("b", W, 0, 0.2, None, False),
            ("b", W, 1, 0.4, None, False),
            ("b", B, 0, 0.6, None, False),
            ("b", B, 1, None, None, True),  # errored: not scored, the case stays paired through trial 0
            ("c", W, 0, 0.9, None, False),
            ("c", B, 0, None, None, True),  # the only baseline trial errored: unpaired
        ],
        trials=2,
    )
    s = build_eval_summary(run)
    assert (s.planned, s.recorded, s.errored, s.graded) == (12, 10, 2, 8)
    assert s.wall_sec == pytest.approx(11.0)
    (c,) = s.comparisons
    overall = c.metrics[0]
    assert overall.metric == "overall" and overall.n_paired == 2 and overall.n_unpaired == 1
    # a: 0.5 vs 0.25 -> +0.25 ; b: 0.3 vs 0.6 -> -0.3
    assert overall.lift == pytest.approx((0.25 - 0.3) / 2)
    assert [(n.task_id, round(n.delta, 6)) for n in c.negative_cases] == [("alpha--b", -0.3)]
    assert [(u.task_id, u.missing) for u in c.unpaired] == [("alpha--c", "baseline")]
    assert c.reward is not None and c.reward.n_paired == 1 and c.reward.lift == pytest.approx(0.5)
    # pass@k with success = reward 1 where there is one, else overall >= 0.5
    rows = {(p.condition, p.k): p.value for p in s.pass_at_k}
    assert rows[(W, 1)] == pytest.approx((0.5 + 0.0 + 1.0) / 3)  # a: 1 of 2; b: 0 of 2; c: 1 of 1
    assert rows[(W, 2)] == pytest.approx((1.0 + 0.0) / 2)  # c has 1 attempt only: left out at k=2
    assert rows[(B, 1)] == pytest.approx((0.0 + 1.0) / 2)
    assert s.audit[0].model_dump() == {
        "condition": B,
        "trials": 5,
        "target_absent": 5,
        "support_present": 5,
        "decoys_present": 5,
        "missing_audit": 0,
        "siblings_present": 5,
    }
    md = render_eval_markdown(s)
    assert "Verifier reward (beside the metrics)" in md and "`alpha--c` (builtin-a): no score for the baseline" in md
    assert "Metric weights in the overall score: " in md and "security 1" in md  # the weights used are printed


def test_combining_runs_gives_cluster_bootstraps_and_relative_links(tmp_path: Path) -> None:
    runs = [
        _write_run(tmp_path, "alpha", [("a", W, 0, 1.0, None, False), ("a", B, 0, 0.0, None, False),
                                       ("b", W, 0, 0.5, None, False), ("b", B, 0, 0.5, None, False)]),
        _write_run(tmp_path, "beta", [("a", W, 0, 0.0, None, False), ("a", B, 0, 0.5, None, False)]),
    ]  # fmt: skip
    out = tmp_path / "combined"
    files = write_eval_report(runs, out)
    s = json.loads(files["eval_summary"].read_text())
    overall = s["comparisons"][0]["metrics"][0]
    assert overall["n_paired"] == 3 and overall["n_skills"] == 2
    assert overall["lift"] == pytest.approx((1.0 + 0.0 - 0.5) / 3)
    assert overall["ci_bootstrap_skills"] is not None and overall["ci_bootstrap_cells"] is not None
    low, high = overall["ci_bootstrap_skills"]
    # resampling two skills: alpha-only (mean 0.5), beta-only (-0.5) or both (1/6)
    assert low == pytest.approx(-0.5) and high == pytest.approx(0.5)
    (neg,) = s["comparisons"][0]["negative_cases"]
    assert neg["treatment_trajectories"] == ["../beta/trials/beta--a__with-skill__builtin-a__t0/trajectory.json"]
    assert s["audit"][0]["trials"] == 3 and s["audit"][0]["target_absent"] == 3
    with pytest.raises(Exception, match="give an output directory"):
        write_eval_report(runs)


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_eval_report_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = _write_run(tmp_path, "alpha", [("a", W, 0, 1.0, None, False), ("a", B, 0, 0.5, None, False)])
    assert _cli(monkeypatch, "eval-report", str(run)) == 0
    out = capsys.readouterr().out
    assert "Skill Lift (with-skill vs target-withheld): +0.500 (too few cases for an interval — n=1); 0 negative" in out
    assert (run / "eval_report.md").is_file()
    assert _cli(monkeypatch, "eval-report", str(tmp_path / "nope")) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'nope'}: not a run directory (no experiment.json)"


def test_eval_html_has_forest_heatmaps_negative_pairs_weights_and_unscored_reasons(tmp_path: Path) -> None:
    from html.parser import HTMLParser

    rows = [("a", W, 0, 1.0, None, False), ("a", B, 0, 0.0, None, False), ("b", W, 0, 0.25, None, False),
            ("b", B, 0, 0.5, None, False), ("c", W, 0, 0.5, None, False), ("c", B, 0, None, None, True),
            ("d", W, 0, None, None, False), ("d", B, 0, 0.5, None, False)]  # fmt: skip
    run = _write_run(tmp_path, "alpha", rows)
    files = write_eval_report(run)
    html = files["eval_html"].read_text()
    assert html.count('data-chart="forest"') == 1 and html.count('data-chart="heatmap"') == 2
    # lift (1 - 0.25) / 2 = +0.375 over 2 paired cases: too few for an interval, no verdict
    assert "too few cases for an interval — n=2" in html and "inconclusive (n=2)" not in html
    assert "side by side" in html and "pairs/alpha--b__with-skill__builtin-a__t0__vs__target-withheld.html" in html
    assert '<td>security</td><td class="n">1</td>' in html  # weights used (1 unless set)
    assert "setup / sandbox_error: boom" in html  # the errored baseline of case c
    assert "not graded: no metrics.json" in html  # case d's treatment: ungraded, nothing errored

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.hrefs: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.hrefs += [v for k, v in attrs if k == "href" and v]

    parser = Links()
    parser.feed(html)
    assert parser.hrefs and all(not h.startswith(("http:", "https:", "//")) for h in parser.hrefs)
    assert all((run / h).is_file() for h in parser.hrefs), [h for h in parser.hrefs if not (run / h).is_file()]
    page = (run / "trials" / "alpha--b__with-skill__builtin-a__t0" / "trial.html").read_text()
    assert 'href="../../eval_report.html"' in page


def test_eval_forest_extends_its_axis_to_every_interval_end_and_never_draws_zero_width(tmp_path: Path) -> None:
    """A grader on 0–5 (not [0, 1]): lift +2.2 with a 95% CI near [+1.6, +2.8]. The old ±1 axis drew it as a
    clipped line at the edge; now the axis reaches ±4 and nothing is cut. ``security`` is 1 on both sides of
    every case: lift 0 with no case that differs, so no interval (issue 23: never a zero-width interval from
    noise-free summaries; the small-n rule needs 6 cases that differ), drawn as a dot without a bar."""
    import re
    import xml.etree.ElementTree as ET

    rows = [(c, W, 0, 4.0 if c == "e" else 3.0, None, False) for c in "abcde"]
    rows += [(c, B, 0, 1.0, None, False) for c in "abcde"]
    html = write_eval_report(_write_run(tmp_path, "alpha", rows))["eval_html"].read_text()
    (svg_text,) = re.findall(r'<svg class="chart" data-chart="forest".*?</svg>', html, re.S)
    svg = ET.fromstring(svg_text)
    ticks = [t.text for t in svg.iter("text") if t.get("class") == "tick-label"]
    assert ticks == ["-4", "-2", "0", "+2", "+4"]
    assert not any("clipped" in (p.get("class") or "") for p in svg.iter("path"))
    rows_by_metric = {next(t.text for t in g.iter("text")): g for g in svg.iter("g") if g.get("class") == "row"}
    overall, security = rows_by_metric["overall"], rows_by_metric["security"]
    assert overall.get("data-interval") == "interval"
    line = next(e for e in overall.iter("line") if e.get("class") == "ci")
    x1, x2 = float(line.get("x1") or 0), float(line.get("x2") or 0)
    axis = next(e for e in svg.iter("line") if e.get("class") == "axis")
    right = float(axis.get("x2") or 0)
    assert x1 < x2 < right - 1  # the interval's high end is inside the plot, not pinned to its edge
    assert security.get("data-interval") == "no-interval"
    assert not any(e.get("class") == "ci" for e in security.iter("line"))
    assert not any("(zero-width interval)" in (t.text or "") for t in security.iter("text"))
    assert "too few cases that differ for an interval — 0 of 5 cases differ" in html
    assert [t.text for t in svg.iter("text") if t.get("class") == "axis-label"] == [
        "lift = treatment − baseline (metric units); 0 = no effect"
    ]
