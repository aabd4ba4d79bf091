"""The `compiled` condition: raw vs compiled as one paired run with the builtin agent through the gateway.

The model provider is the one test double (the `scripted` provider); the sandbox (bubblewrap), the gateway's
HTTP channel, the compiler, the MCP runtime (official SDK client and server) and the verifier are real."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillworks.experiment import RunStore

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "scripted" / "quickstart-compiled.yaml"
HANDLE = "run_loan_amortization_schedules"


def _run(cli: Any, task: Path, script: Path, conditions: str, runs_dir: Path, run_id: str) -> Path:
    proc = cli(
        "run",
        str(task),
        "--agent",
        "builtin",
        "--model",
        f"scripted/{script}",
        "--conditions",
        conditions,
        "--out",
        str(runs_dir),
        "--run-id",
        run_id,
    )
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    return runs_dir / run_id


def test_raw_vs_compiled_paired_run(runs_dir: Path, cli: Any, quickstart: Path) -> None:
    run_dir = _run(cli, quickstart / "loan-amortization", SCRIPT, "curated,compiled", runs_dir, "rc")
    results = {r.condition: r for r in RunStore(run_dir).read_results()}
    assert set(results) == {"curated", "compiled"}
    for r in results.values():
        assert r.error is None and r.reward == 1.0, r
    compiled = results["compiled"]
    trial = run_dir / "trials" / compiled.trial_id
    # the audit: no raw SKILL.md anywhere the harness looks; the agent saw only the runtime's handles
    audit = json.loads((trial / "skills.json").read_text())
    assert audit["expected"] == [] and audit["visible"] == [] and audit["handles"] == [HANDLE]
    assert compiled.skills_staged == []
    assert compiled.skill_source is not None
    record = compiled.skill_source.record
    assert record["visible_to_agent"][0] == HANDLE and record["raw_skills_staged"] == []
    assert record["compiled"][0]["shape"] == "workflow"
    assert (run_dir / "compiled").is_dir()  # the artifact cache, keyed by package hash
    traj = json.loads((trial / "trajectory.json").read_text())
    offered = {d["function"]["name"] for d in traj["agent"]["tool_definitions"]}
    assert HANDLE in offered and "skill" not in offered
    calls = [json.loads(line) for line in (trial / "agent" / "mcp-calls.jsonl").read_text().splitlines()]
    assert [c["result"]["status"] for c in calls] == ["guidance", "execute"]
    assert calls[1]["result"]["output"]["exit_code"] == 0
    # skill use counts the handle's calls: offered, answered, and the package script its operator ran
    skill = "loan-amortization-schedules"
    use = compiled.skill_use
    assert (use.listed, use.invoked, use.scripts_run) == ([skill], [skill], [f"{skill}/scripts/amortize.py"])
    # the curated trial of the pair saw the raw package
    assert results["curated"].skills_staged and results["curated"].skill_source is None
    # the report's raw-vs-compiled block: solve figures per condition, paired deltas, compile cost apart
    summary = json.loads((run_dir / "summary.json").read_text())
    (block,) = summary["compiled_vs_raw"]
    assert block["paired_tasks"] == 1 and block["raw_condition"] == "curated" and block["compile_tokens"] == 0
    metrics = {m["metric"]: m for m in block["metrics"]}
    assert metrics["reward"]["raw"] == metrics["reward"]["compiled"] == 1.0
    assert metrics["input_tokens"]["compiled"] == results["compiled"].usage.input_tokens
    assert (
        metrics["input_tokens"]["delta"]
        == results["compiled"].usage.input_tokens - results["curated"].usage.input_tokens
    )
    assert "## Raw vs compiled skills" in (run_dir / "report.md").read_text()


def test_compiled_runtime_attacks_stay_in_the_sandbox(
    runs_dir: Path, cli: Any, quickstart: Path, tmp_path: Path
) -> None:
    marker = Path("/tmp") / f"skillworks-host-marker-{uuid.uuid4().hex}"
    turns = [
        {
            "tool_calls": [
                {
                    "name": HANDLE,
                    "arguments": {
                        "operator": "amortize",
                        "inputs": {"loans": "/app/data/loans.csv", "schedule": str(marker)},
                    },
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "name": HANDLE,
                    "arguments": {"operator": "amortize", "inputs": {"loans": f"x; touch {marker}-2", "schedule": "y"}},
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "name": HANDLE,
                    "arguments": {"operator": "get_skill_asset", "inputs": {"path": "../contract.json"}},
                }
            ]
        },
        {
            "tool_calls": [
                {"name": HANDLE, "arguments": {"operator": "amortize", "inputs": {"loans": "a"}, "shell": "id"}}
            ]
        },
        {"text": "done"},
    ]
    script = tmp_path / "attack.yaml"
    script.write_text(yaml.safe_dump({"default": turns}))
    run_dir = _run(cli, quickstart / "loan-amortization", script, "compiled", runs_dir, "attack")
    (result,) = RunStore(run_dir).read_results()
    assert result.error is None and result.reward == 0.0
    trial = run_dir / "trials" / result.trial_id
    calls = [json.loads(line) for line in (trial / "agent" / "mcp-calls.jsonl").read_text().splitlines()]
    statuses = [c["result"]["status"] for c in calls]
    assert statuses == ["blocked", "execute", "blocked", "blocked"]
    assert "inside the workspace" in calls[0]["result"]["output"]  # /tmp is outside /app: refused before running
    assert not marker.exists() and not Path(f"{marker}-2").exists()  # nothing reached the host
