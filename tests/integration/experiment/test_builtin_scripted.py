"""Issue 3 acceptance: the builtin agent over the gateway with the scripted provider.

The model provider is the one test double here (the `scripted` provider, since no model API is reachable
in tests); the sandbox, the gateway's HTTP channel, the agent's tools and the verifiers are all real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillworks.experiment import RunStore
from skillworks.gateway import read_calls
from skillworks.trajectory import validate_trajectory

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "scripted" / "quickstart-builtin.yaml"


def test_builtin_agent_paired_run_with_scripted_provider(runs_dir: Path, cli: Any, quickstart: Path) -> None:
    proc = cli(
        "run",
        str(quickstart),
        "--agent",
        "builtin",
        "--model",
        f"scripted/{SCRIPT}",
        "--conditions",
        "none,curated",
        "--out",
        str(runs_dir),
        "--run-id",
        "builtin",
    )
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    run_dir = runs_dir / "builtin"
    results = RunStore(run_dir).read_results()
    assert len(results) == 8
    gateway_sums: dict[str, dict[str, float]] = {}
    for r in results:
        assert r.error is None, r.error
        trial = run_dir / "trials" / r.trial_id
        traj = validate_trajectory(trial / "trajectory.json")
        assert traj.agent.name == "builtin"
        calls = read_calls(trial / "gateway.jsonl")
        assert calls and all(c.status == "ok" for c in calls)
        assert r.usage.source == "gateway"
        assert r.provider == "scripted"
        sums = gateway_sums.setdefault(
            r.condition, {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0, "calls": 0}
        )
        sums["input_tokens"] += sum(c.input_tokens for c in calls)
        sums["output_tokens"] += sum(c.output_tokens for c in calls)
        sums["cached_tokens"] += sum(c.cached_tokens for c in calls)
        sums["cost_usd"] += sum(c.cost_usd for c in calls)
        sums["calls"] += len(calls)
        if r.condition == "curated":
            assert r.reward == 1.0
            assert r.skill_use.invoked == [s.split("@")[0] for s in r.skills_staged]
            assert r.skill_use.scripts_run, r.skill_use
        else:
            assert r.reward == 0.0
            assert r.skill_use.invoked == [] and r.skill_use.listed == []

    # every token and cost figure of the report equals the sums over the trials' gateway.jsonl files
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = {row["condition"]: row for row in summary["usage"]}
    assert set(rows) == {"none", "curated"}
    for condition, sums in gateway_sums.items():
        for key, value in sums.items():
            assert rows[condition][key] == pytest.approx(value), (condition, key)
    assert sum(s["input_tokens"] for s in gateway_sums.values()) > 0
    report = (run_dir / "report.md").read_text()
    assert "scripted test provider" in report
    for condition in ("none", "curated"):
        assert f"{int(gateway_sums[condition]['input_tokens']):,}" in report


class _CallThenCrash:
    """A test agent that makes one model call through its gateway channel, then fails."""

    name = "call-then-crash"
    needs_model = True
    version = "test"

    def skills_dir(self, home: str, workdir: str) -> str | None:
        return None

    async def run(self, ctx: Any) -> Any:
        import httpx

        transport = httpx.AsyncHTTPTransport(uds=str(ctx.gateway_socket))
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            response = await client.post(
                "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            )
            response.raise_for_status()
        raise RuntimeError("agent crashed after one call")


def test_usage_of_a_crashed_agent_still_equals_its_gateway_calls(tmp_path: Path, quickstart: Path) -> None:
    import asyncio
    from datetime import UTC, datetime

    from skillworks import __version__
    from skillworks.agents import register_agent
    from skillworks.experiment import AgentConfig, ExperimentSpec, run_experiment
    from skillworks.experiment.spec import task_ref
    from skillworks.tasks import load_task

    script = tmp_path / "one.yaml"
    script.write_text("- text: hello\n  usage: {input_tokens: 321, output_tokens: 7}\n")
    register_agent("call-then-crash", lambda **_: _CallThenCrash())
    task = load_task(quickstart / "lab-units-to-si")
    spec = ExperimentSpec(
        run_id="crash",
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(task)],
        conditions=["none"],
        agents=[AgentConfig(name="call-then-crash", model=f"scripted/{script}")],
        trials=1,
        seed=0,
        concurrency=1,
    )
    (result,) = asyncio.run(run_experiment(spec, [task], tmp_path / "crash")).results
    assert result.outcome == "error" and result.error.category == "RuntimeError"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.calls) == (321, 7, 1)
    assert result.usage.source == "gateway"


@pytest.mark.parametrize(
    ("turn", "category"),
    [("fail: {status: 500, times: 99}", "server_error"), ("malformed: true", "malformed_response")],
)
def test_provider_failure_is_a_classified_trial_error_in_results_and_report(
    tmp_path: Path, cli: Any, quickstart: Path, turn: str, category: str
) -> None:
    script = tmp_path / "fail.yaml"
    script.write_text(f"- text: never delivered\n  {turn}\n")
    proc = cli(
        "run",
        str(quickstart / "lab-units-to-si"),
        "--agent",
        "builtin",
        "--model",
        f"scripted/{script}",
        "--conditions",
        "none",
        "--out",
        str(tmp_path / "runs"),
        "--run-id",
        "fail",
    )
    # every trial errored: the run is recorded and reported, and exits 1 saying so (see the exit codes)
    assert proc.returncode == 1, proc.stderr
    assert "failed: " in proc.stderr
    (result,) = RunStore(tmp_path / "runs" / "fail").read_results()
    assert result.outcome == "error" and result.reward is None
    assert result.error is not None and result.error.category == category and result.error.phase == "agent"
    calls = read_calls(tmp_path / "runs" / "fail" / "trials" / result.trial_id / "gateway.jsonl")
    assert calls[-1].status == "error" and calls[-1].error_class == category
    report = (tmp_path / "runs" / "fail" / "report.md").read_text()
    errors_section = report.split("## Errors", 1)[1]
    assert result.trial_id in errors_section and category in errors_section
