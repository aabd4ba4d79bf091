"""`skillworks eval` end to end: the example skill's evals.json cases in the local (bubblewrap) sandbox,
driven by the builtin agent. The model provider is the only thing faked: the agent and the LLM judge are
the gateway's *scripted* provider (examples/eval/scripts/*.yaml).

Every number of the eval report is recomputed here independently from results.jsonl."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
EX = REPO / "examples" / "eval"
Z95 = 1.959963984540054
TARGET, SUPPORT, DECOYS = "invoice-vat-total", {"json-basics"}, {"image-resize", "changelog-writer"}

GRADER = """
from pathlib import Path

def files_seen(task, trajectory, workspace: Path):
    files = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file())
    return {"n_files": float(len(files)), "has_trajectory": float(trajectory is not None)}
"""


def skillworks(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    if pythonpath is not None:
        env["PYTHONPATH"] = f"{pythonpath}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("eval")
    (tmp / "my_graders.py").write_text(GRADER)
    proc = skillworks(
        "eval",
        str(EX / "skills" / TARGET),
        "--support", str(EX / "support" / "json-basics"),
        "--decoys", str(EX / "decoys" / "image-resize"),
        "--decoys", str(EX / "decoys" / "changelog-writer"),
        "--model", f"scripted/{EX / 'scripts' / 'invoice-agent.yaml'}",
        "--judge-model", f"scripted/{EX / 'scripts' / 'invoice-judge.yaml'}",
        "--grader", "my_graders:files_seen",
        "--out", str(tmp),
        "--run-id", "e2e",
        pythonpath=tmp,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    # the end of `eval`: the lift, with no interval over 3 paired cases (below the small-n threshold of 5)
    assert "Skill Lift (with-skill vs target-withheld): +0.222 (too few cases for an interval — n=3)" in proc.stdout
    return tmp / "e2e"


def _results(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


def test_trials_are_graded_not_errors(run: Path) -> None:
    results = _results(run)
    assert len(results) == 6
    for r in results:
        assert r["outcome"] == "ungraded" and r["error"] is None and r["reward"] is None
        assert set(r["metrics"]) >= {
            "security", "skill_execution", "skill_efficiency", "accuracy", "goal_accuracy", "behavior_check",
            "overall", "grader.files_seen.n_files", "grader.files_seen.has_trajectory",
        }  # fmt: skip
        assert all(0.0 <= v <= 1.0 for k, v in r["metrics"].items() if not k.startswith("grader."))
        trial = run / r["paths"]["trial_dir"]
        behavior = json.loads((trial / "behavior.json").read_text())
        assert behavior["assertions"] and all(a["evidence"] for a in behavior["assertions"])
        judge_calls = (trial / "judge.jsonl").read_text().splitlines()
        assert len(judge_calls) == 1 + len(behavior["assertions"])  # accuracy + one per assertion
        # --case-files own: the case's own input file only (downloaded for the custom grader)
        assert r["metrics"]["grader.files_seen.n_files"] == 1.0
        assert (trial / "workspace" / "evals" / "files").is_dir()
    by = {(r["task_id"].split("--")[1], r["condition"]): r["metrics"] for r in results}
    # hand-computed (weights accuracy=2, behavior_check=2 from EVAL.md)
    assert by[("standard-rate", "with-skill")]["overall"] == pytest.approx(1.0)
    assert by[("standard-rate", "target-withheld")]["overall"] == pytest.approx((1 + 0 + 0 + 2 + 1 + 2 / 3) / 8)
    assert by[("credit-note", "with-skill")]["overall"] == pytest.approx(0.5)
    assert by[("credit-note", "target-withheld")]["overall"] == pytest.approx(0.75)


def test_baseline_audit_target_absent_support_and_decoys_present(run: Path) -> None:
    results = _results(run)
    for r in results:
        record = json.loads((run / r["paths"]["skills"]).read_text())
        visible = {v["name"] for v in record["visible"]}
        assert record["ok"] is True
        assert visible >= SUPPORT and visible >= DECOYS
        if r["condition"] == "target-withheld":
            assert TARGET not in visible
            assert not any(TARGET in v["path"] for v in record["visible"])
        else:
            assert TARGET in visible
    spec = json.loads((run / "experiment.json").read_text())
    assert spec["baseline_policy"].startswith("target-withheld: the target skill invoice-vat-total@")
    staged_target = Path(spec["target_skill"]["path"])
    assert (staged_target / "SKILL.md").is_file()
    assert not (staged_target / "evals").exists() and not (staged_target / "EVAL.md").exists()
    summary = json.loads((run / "eval_summary.json").read_text())
    assert summary["audit"] == [
        {"condition": "target-withheld", "trials": 3, "target_absent": 3, "support_present": 3,
         "decoys_present": 3, "missing_audit": 0, "siblings_present": 3}
    ]  # fmt: skip


def _recompute(results: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """Skill Lift from scratch: per case, the mean over scored trials per side; paired deltas only."""
    sides: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    links: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r["outcome"] == "error" or metric not in r["metrics"]:
            continue
        key = (r["agent"], r["task_id"])
        sides[key][r["condition"]].append(r["metrics"][metric])
        links[key][r["condition"]].append(r["paths"]["trajectory"])
    paired = sorted(k for k in sides if "with-skill" in sides[k] and "target-withheld" in sides[k])
    w = [statistics.fmean(sides[k]["with-skill"]) for k in paired]
    b = [statistics.fmean(sides[k]["target-withheld"]) for k in paired]
    d = [x - y for x, y in zip(w, b, strict=True)]
    out: dict[str, Any] = {
        "n_paired": len(d),
        "treatment_mean": statistics.fmean(w),
        "baseline_mean": statistics.fmean(b),
        "lift": statistics.fmean(d),
        "positive_fraction": sum(1 for x in d if x > 0) / len(d),
        "negative": [(paired[i][1], d[i], links[paired[i]]["with-skill"], links[paired[i]]["target-withheld"])
                     for i in range(len(d)) if d[i] < 0],
    }  # fmt: skip
    half = Z95 * statistics.stdev(d) / math.sqrt(len(d))
    out["ci_normal"] = (out["lift"] - half, out["lift"] + half)
    return out


def test_every_report_number_recomputes_from_results(run: Path) -> None:
    results = _results(run)
    summary = json.loads((run / "eval_summary.json").read_text())
    assert summary["recorded"] == summary["planned"] == summary["graded"] == 6 and summary["errored"] == 0
    starts = [r["started_at"] for r in results]
    ends = [r["finished_at"] for r in results]
    from datetime import datetime

    wall = (max(map(datetime.fromisoformat, ends)) - min(map(datetime.fromisoformat, starts))).total_seconds()
    assert summary["wall_sec"] == pytest.approx(wall)
    (comparison,) = summary["comparisons"]
    assert [m["metric"] for m in comparison["metrics"]] == [
        "overall", "security", "skill_execution", "skill_efficiency", "accuracy", "goal_accuracy", "behavior_check",
    ]  # fmt: skip
    for row in comparison["metrics"]:
        mine = _recompute(results, row["metric"])
        for key in ("n_paired", "treatment_mean", "baseline_mean", "lift", "positive_fraction"):
            assert row[key] == pytest.approx(mine[key]), (row["metric"], key)
        assert row["ci_normal"] is None, row["metric"]  # 3 paired cases: below the small-n threshold, no interval
        assert row["n_unpaired"] == 0
        assert row["ci_bootstrap_skills"] is None and row["ci_bootstrap_cells"] is None  # one skill, one cell
    overall = _recompute(results, "overall")
    assert overall["lift"] == pytest.approx(2 / 9)  # (5/12 + 1/2 - 1/4) / 3, by hand
    assert [(n["task_id"], n["delta"], n["treatment_trajectories"], n["baseline_trajectories"])
            for n in comparison["negative_cases"]] == [
        (t, pytest.approx(d), tl, bl) for t, d, tl, bl in overall["negative"]
    ]  # fmt: skip
    assert [n["task_id"] for n in comparison["negative_cases"]] == ["invoice-vat-total--credit-note"]
    for n in comparison["negative_cases"]:
        for link in n["treatment_trajectories"] + n["baseline_trajectories"]:
            assert (run / link).is_file()
    (cell,) = comparison["cells"]
    assert cell["lift"] == pytest.approx(overall["lift"]) and cell["n_paired"] == 3
    graders = {g["metric"]: g for g in comparison["graders"]}
    assert set(graders) == {"grader.files_seen.n_files", "grader.files_seen.has_trajectory"}
    assert graders["grader.files_seen.n_files"]["lift"] == 0.0
    # the Markdown shows the same numbers, rounded
    md = (run / "eval_report.md").read_text()
    row = comparison["metrics"][0]
    assert (
        f"| overall | 3 | 0 | {row['treatment_mean']:.3f} | {row['baseline_mean']:.3f} | {row['lift']:+.3f} | too few cases for an interval — n=3 | – "
        in md
    )
    assert "trials/invoice-vat-total--credit-note__with-skill__" in md and "Custom graders" in md
    assert "scripted provider" in md


def test_report_is_a_pure_function_of_the_run_dir(run: Path) -> None:
    from skillworks.report.eval_report import build_eval_summary

    before = json.loads((run / "eval_summary.json").read_text())
    again = json.loads(build_eval_summary(run).model_dump_json())
    assert again == before


def test_eval_report_html_and_its_trajectory_pages_render_in_chromium(run: Path, chromium: Any) -> None:
    """The eval report in headless Chromium: forest plot and both case x metric heatmaps laid out, no
    console error or failed load, every link (trial pages, side-by-side pages) resolves inside the run."""
    from urllib.parse import unquote, urlparse

    page = chromium.load(run / "eval_report.html")
    assert page.errors == []
    kinds = sorted(c["kind"] for c in page.charts)
    assert kinds == ["forest", "heatmap", "heatmap"]
    assert all(c["width"] > 100 and c["marks"] > 0 for c in page.charts)
    targets = {Path(unquote(urlparse(u).path)) for u in page.links}
    assert all(urlparse(u).scheme == "file" for u in page.links + page.requests)
    assert targets and all(t.is_file() and t.is_relative_to(run) for t in targets)
    pairs = [t for t in targets if t.parent.name == "pairs"]
    assert pairs  # the negative-lift case opens side by side
    pair = chromium.load(pairs[0])
    assert pair.errors == [] and pair.skill_tags > 0
    assert all(Path(unquote(urlparse(u).path)).is_file() for u in pair.links)
