"""ACES isolation vs group workspaces through `skillworks eval`, in the local (bubblewrap) sandbox with the
builtin agent. The model provider is the only test double: the gateway's *scripted* provider replays the
agent's turns (no judge). Isolation stages the target alone; group stages the target with its sibling
skills (the other skills of examples/eval/skills) in both conditions and reports which skill was loaded."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from skillworks.cli.main import main

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

EX = Path(__file__).resolve().parents[3] / "examples" / "eval"
TARGET, SIBLING = "csv-column-stats", "invoice-vat-total"
# case 1 routes to the target, case 2 misroutes to the sibling (reads its SKILL.md), in both conditions
# (a read counts only for a skill staged in that trial)
AGENT = f"""by_task:
  {TARGET}--1:
    - tool_calls: [{{name: bash, arguments: {{command: "cat ~/.agents/skills/{TARGET}/SKILL.md"}}}}]
    - text: "Total revenue is 2500.00; 2 rows were skipped."
  {TARGET}--2:
    - tool_calls: [{{name: bash, arguments: {{command: "cat ~/.agents/skills/{SIBLING}/SKILL.md"}}}}]
    - text: "The average is 833.33."
"""


def _eval(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, run_id: str, *args: str) -> Path:
    script = tmp_path / "agent.yaml"
    script.write_text(AGENT)
    argv = ["skillworks", "eval", str(EX / "skills" / TARGET), "--model", f"scripted/{script}"]
    monkeypatch.setattr(sys, "argv", [*argv, "--out", str(tmp_path), "--run-id", run_id, "--concurrency", "4", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code in (0, None)
    return tmp_path / run_id


def _trials(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


def _visible(run: Path, trial: dict[str, Any]) -> dict[str, str]:
    record = json.loads((run / trial["paths"]["skills"]).read_text())
    return {s["name"]: s["package_hash"] for s in record["visible"]}


def test_isolation_stages_the_target_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    run = _eval(monkeypatch, tmp_path, "iso")
    spec = json.loads((run / "experiment.json").read_text())
    assert spec["extra"]["eval"]["workspace"] == "isolation" and spec["sibling_skills"] == []
    trials = _trials(run)
    assert len(trials) == 4 and all(t["error"] is None for t in trials)
    for t in trials:
        expected = {TARGET: spec["target_skill"]["package_hash"]} if t["condition"] == "with-skill" else {}
        assert _visible(run, t) == expected
    summary = json.loads((run / "eval_summary.json").read_text())
    assert summary["workspace"] == "isolation" and summary["routing"] == []
    assert "workspace isolation (the target alone); case files own" in (run / "eval_report.md").read_text()


def test_group_stages_siblings_in_both_conditions_and_reports_routing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _eval(monkeypatch, tmp_path, "grp", "--workspace", "group")
    spec = json.loads((run / "experiment.json").read_text())
    assert spec["extra"]["eval"]["workspace"] == "group"
    assert spec["extra"]["eval"]["sibling_names"] == [SIBLING]
    sibling = spec["sibling_skills"][0]
    assert sibling["name"] == SIBLING and not (Path(sibling["path"]) / "evals").exists()  # staged without evals
    assert SIBLING in spec["baseline_policy"]
    trials = _trials(run)
    assert len(trials) == 4 and all(t["error"] is None for t in trials)
    for t in trials:
        expected = {SIBLING: sibling["package_hash"]}
        if t["condition"] == "with-skill":
            expected[TARGET] = spec["target_skill"]["package_hash"]
        assert _visible(run, t) == expected
    summary = json.loads((run / "eval_summary.json").read_text())
    assert summary["workspace"] == "group" and summary["siblings"] == [SIBLING]
    routing = {r["condition"]: r for r in summary["routing"]}
    assert routing["with-skill"] == {
        "condition": "with-skill", "trials": 2, "target_loaded": 1, "sibling_loaded": 1, "sibling_only": 1,
        "none_loaded": 0, "by_sibling": {SIBLING: 1},
    }  # fmt: skip
    # the baseline cannot load the withheld target; the sibling is there to be (mis)loaded
    assert (routing["target-withheld"]["target_loaded"], routing["target-withheld"]["sibling_only"]) == (0, 1)
    assert summary["audit"][0]["siblings_present"] == 2 and summary["audit"][0]["target_absent"] == 2
    md = (run / "eval_report.md").read_text()
    assert f"workspace group (target + siblings {SIBLING})" in md and "## Routing (group workspace)" in md
    assert f"| with-skill | 2 | 1 | 1 | 1 | 0 | {SIBLING} 1 |" in md
    assert "Routing (group workspace)" in (run / "eval_report.html").read_text()
