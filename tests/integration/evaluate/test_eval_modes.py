"""Product mode (targets + pass@k), the visible-skill stress test and shared case files, end to end in the
local sandbox. The model provider is the gateway's scripted provider (agent and judge); nothing else is
faked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillworks.evaluate import EvalOptions, run_eval
from skillworks.stats.passk import pass_at_k

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
EX = REPO / "examples" / "eval"


def _results(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


async def test_product_mode_targets_and_pass_at_k(tmp_path: Path) -> None:
    product = tmp_path / "product.yaml"
    product.write_text(
        "targets:\n"
        "  - {name: plain, type: baseline}\n"
        f"  - {{name: skill, type: skill, path: {EX / 'skills' / 'invoice-vat-total'}}}\n"
        f"  - {{name: plugin, type: plugin, path: {EX / 'plugins' / 'acme-finance'}}}\n"
    )
    options = EvalOptions(
        skill=EX / "skills" / "invoice-vat-total",
        support=[EX / "support" / "json-basics"],
        decoys=[EX / "decoys" / "image-resize"],
        model=f"scripted/{EX / 'scripts' / 'invoice-agent.yaml'}",
        judge_model=f"scripted/{EX / 'scripts' / 'product-judge.yaml'}",
        targets=product,
        trials=2,
        pass_threshold=0.9,
        out=tmp_path / "runs",
        run_id="prod",
        concurrency=4,
    )
    outcome = await run_eval(options)
    run = outcome.run_dir
    results = _results(run)
    assert len(results) == 3 * 3 * 2 and all(r["outcome"] == "ungraded" for r in results)
    spec = json.loads((run / "experiment.json").read_text())
    assert spec["conditions"] == ["product-plain", "product-skill", "product-plugin"]
    targets = {t["name"]: t for t in spec["extra"]["eval"]["product"]["targets"]}
    assert targets["plain"]["baseline"] and targets["plain"]["skills"] == []
    assert [s.split("@")[0] for s in targets["plugin"]["skills"]] == ["vat-rates"]
    # every target's trials see its own skills plus support and decoys
    for r in results:
        visible = {v["name"] for v in json.loads((run / r["paths"]["skills"]).read_text())["visible"]}
        own = {"product-plain": set(), "product-skill": {"invoice-vat-total"}, "product-plugin": {"vat-rates"}}
        assert visible == {"json-basics", "image-resize"} | own[r["condition"]]
    summary = json.loads((run / "eval_summary.json").read_text())
    pairs = [(c["treatment"], c["baseline"]) for c in summary["comparisons"]]
    assert pairs == [("product-skill", "product-plain"), ("product-plugin", "product-plain")]
    # pass@k recomputed: success = overall >= 0.9 (no verifier)
    for row in summary["pass_at_k"]:
        counts: dict[str, list[int]] = {}
        for r in results:
            if r["condition"] == row["condition"]:
                n_c = counts.setdefault(r["task_id"], [0, 0])
                n_c[0] += 1
                n_c[1] += int(r["metrics"]["overall"] >= 0.9)
        expected = sum(pass_at_k(n, c, row["k"]) for n, c in counts.values()) / len(counts)
        assert row["value"] == pytest.approx(expected) and row["n_cases"] == 3
    assert {(p["condition"], p["k"]) for p in summary["pass_at_k"]} == {
        (c, k) for c in spec["conditions"] for k in (1, 2)
    }
    skill_row = next(m for m in summary["comparisons"][0]["metrics"] if m["metric"] == "skill_execution")
    assert skill_row["lift"] == pytest.approx(1.0)  # the skill target activates the skill; the baseline cannot


async def test_decoy_stress_tops_up_with_synthetic_decoys_and_shares_case_files(tmp_path: Path) -> None:
    options = EvalOptions(
        skill=EX / "skills" / "csv-column-stats",
        support=[EX / "support" / "json-basics"],
        decoys=[EX / "decoys" / "image-resize"],
        model=f"scripted/{EX / 'scripts' / 'csv-agent.yaml'}",
        judge_model=f"scripted/{EX / 'scripts' / 'csv-judge.yaml'}",
        decoy_counts=[1, 4],
        case_files="all",
        graders=[],
        out=tmp_path / "runs",
        run_id="stress",
        concurrency=4,
    )
    outcome = await run_eval(options)
    root = outcome.run_dir
    rows = json.loads((root / "decoy_stress.json").read_text())
    assert [(r["decoys"], r["synthetic"], r["run_dir"]) for r in rows] == [(1, 0, "decoys-1"), (4, 3, "decoys-4")]
    for row in rows:
        run = root / row["run_dir"]
        results = _results(run)
        assert row["trials"] == len(results) == 4
        summary = json.loads((run / "eval_summary.json").read_text())
        overall = next(m for m in summary["comparisons"][0]["metrics"] if m["metric"] == "overall")
        assert row["lift"] == overall["lift"] and row["wall_sec"] == summary["wall_sec"] > 0
        for r in results:
            visible = {v["name"] for v in json.loads((run / r["paths"]["skills"]).read_text())["visible"]}
            decoys = {n for n in visible if n not in ("json-basics", "csv-column-stats")}
            assert len(decoys) == row["decoys"] and "image-resize" in decoys
    spec4 = json.loads((root / "decoys-4" / "experiment.json").read_text())
    assert spec4["extra"]["eval"]["decoys_synthetic"] == 3
    assert all(n.startswith("decoy-") for n in spec4["extra"]["eval"]["decoy_names"][1:])
    md = (root / "decoys-4" / "eval_report.md").read_text()
    assert "3 of 4 decoy skills were synthetic" in md
    assert "| 4 | 3 |" in (root / "decoy_stress.md").read_text()
    # --case-files all: every case is seeded from one shared directory holding all cases' files
    assert (root / "workspaces" / "_all-cases" / "csv-column-stats" / "evals" / "files" / "sales.csv").is_file()
    assert not (root / "workspaces" / "csv-column-stats--1").exists()


async def test_resume_runs_only_missing_trials_and_refuses_changed_skills(tmp_path: Path) -> None:
    import shutil

    from skillworks.errors import UserError
    from skillworks.evaluate import resume_eval

    support = tmp_path / "json-basics"
    shutil.copytree(EX / "support" / "json-basics", support)
    options = EvalOptions(
        skill=EX / "skills" / "csv-column-stats",
        support=[support],
        model=f"scripted/{EX / 'scripts' / 'csv-agent.yaml'}",
        judge_model=f"scripted/{EX / 'scripts' / 'csv-judge.yaml'}",
        out=tmp_path / "runs",
        run_id="res",
    )
    first = await run_eval(options)
    run = first.run_dir
    complete = json.loads((run / "eval_summary.json").read_text())
    lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
    assert len(lines) == 4
    (run / "results.jsonl").write_text("".join(lines[:1]))  # as if killed after the first trial
    again = await resume_eval(run)
    assert again.runs[0].outcome.skipped == 1 and len(again.runs[0].outcome.results) == 3
    assert len(_results(run)) == 4
    resumed = json.loads((run / "eval_summary.json").read_text())
    assert resumed["comparisons"] == complete["comparisons"]  # deterministic scripted trials: same numbers
    assert len(list((run / "trials").glob("*.interrupted-1"))) == 3  # earlier attempts kept, not deleted
    with pytest.raises(UserError, match="run directory already exists; continue it with --resume"):
        await run_eval(options)
    (support / "SKILL.md").write_text((support / "SKILL.md").read_text() + "\nchanged\n")
    (run / "results.jsonl").write_text("".join(lines[:1]))
    with pytest.raises(UserError, match="cannot resume: skills changed since the run started: json-basics"):
        await resume_eval(run)


async def test_bring_your_own_task_dir_keeps_the_verifier_reward_beside_the_metrics(tmp_path: Path) -> None:
    skill = tmp_path / "answer-helper"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: answer-helper\ndescription: Writes answers to files.\n---\nWrite it.\n")
    task = tmp_path / "tasks" / "write-42"
    (task / "verifier").mkdir(parents=True)
    (task / "task.md").write_text(
        '---\nschema_version: "1.3"\nenvironment:\n  network_mode: no-network\n---\n'
        "Write the number 42 to answer.txt in the working directory.\n"
    )
    (task / "verifier" / "test.sh").write_text(
        "#!/bin/bash\nif grep -q 42 /app/answer.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
    )
    script = tmp_path / "agent.yaml"
    script.write_text(
        "default:\n"
        "  - tool_calls: [{name: write_file, arguments: {path: answer.txt, content: '42'}}]\n"
        "  - text: 'I wrote 42 to answer.txt.'\n"
    )
    outcome = await run_eval(
        EvalOptions(skill=skill, tasks=[task], model=f"scripted/{script}", out=tmp_path / "runs", run_id="byo")
    )
    results = _results(outcome.run_dir)
    assert {(r["condition"], r["outcome"], r["reward"]) for r in results} == {
        ("with-skill", "solved", 1.0),
        ("target-withheld", "solved", 1.0),
    }
    for r in results:
        assert r["metrics"]["security"] == 1.0 and "overall" in r["metrics"]
        assert "accuracy" not in r["metrics"]  # scripted agent model and no --judge-model: no judge
    summary = json.loads((outcome.run_dir / "eval_summary.json").read_text())
    reward = summary["comparisons"][0]["reward"]
    assert reward["n_paired"] == 1 and reward["lift"] == 0.0
    assert any("no judge model" in n for n in summary["notes"])
