"""Unattended campaigns: retry of errored trials, the circuit breaker, spend caps that keep pairs whole, the
per-trial token budget. The model provider is the one test double (the `scripted` provider: no model API is
reachable in tests); the sandbox (bubblewrap), the gateway's HTTP channel, the builtin agent and the
verifier are real."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from skillworks import __version__
from skillworks.experiment import AgentConfig, ExperimentSpec, RunStore, run_experiment
from skillworks.experiment.campaign import CampaignLimits, read_campaign
from skillworks.experiment.runner import RunOutcome
from skillworks.experiment.spec import task_ref
from skillworks.gateway import read_calls
from skillworks.report import build_summary
from skillworks.tasks import load_task

pytestmark = [pytest.mark.bwrap]

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "tasks_sandbox" / "selfgen-sum"
OK_TURN = '- {text: "done", usage: {input_tokens: 100, output_tokens: 10}, cost_usd: 0.01}\n'
AUTH_FAIL = '- {text: "x", fail: {status: 401, message: "bad key"}}\n'
DOWN = '- {text: "x", fail: {status: 503, times: 99, message: "overloaded"}}\n'


def _run(
    script: Path,
    run_dir: Path,
    *,
    resume: bool = False,
    trials: int = 1,
    limits: CampaignLimits | None = None,
    conditions: tuple[str, ...] = ("none",),
    extra: dict[str, object] | None = None,
    concurrency: int = 1,
) -> RunOutcome:
    task = load_task(TASK)
    spec = ExperimentSpec(
        run_id="r",
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(task)],
        conditions=list(conditions),
        agents=[AgentConfig(name="builtin", model=f"scripted/{script}")],
        trials=trials,
        seed=0,
        concurrency=concurrency,
        extra=dict(extra or {}),
    )
    if resume:  # the run as it was planned
        spec = RunStore(run_dir).read_spec()
    return asyncio.run(run_experiment(spec, [task], run_dir, resume=resume, limits=limits))


def test_retry_errors_by_category_supersedes_and_keeps_both_attempts(tmp_path: Path) -> None:
    script, run_dir = tmp_path / "s.yaml", tmp_path / "run"
    script.write_text(AUTH_FAIL)
    first = _run(script, run_dir, trials=2)
    assert [r.error.category for r in first.results if r.error] == ["auth", "auth"]
    script.write_text(OK_TURN)
    # a category that did not occur retries nothing; a plain resume retries nothing either
    assert (
        _run(script, run_dir, resume=True, limits=CampaignLimits(retry_errors=frozenset({"rate_limit"}))).results == []
    )
    again = _run(script, run_dir, resume=True, limits=CampaignLimits(retry_errors=frozenset({"auth"})))
    assert again.retried == 2 and all(r.attempt == 2 and r.error is None for r in again.results)
    trials = run_dir / "trials"
    for r in again.results:
        old = trials / f"{r.trial_id}__a1"
        assert [c.error_class for c in read_calls(old / "gateway.jsonl")] == ["auth"]  # the first attempt, kept
        assert read_calls(trials / r.trial_id / "gateway.jsonl")[0].status == "ok"
    assert len(RunStore(run_dir).read_results()) == 4  # both attempts recorded
    summary = build_summary(run_dir)
    assert summary.counts.superseded_attempts == 2 and summary.counts.errored == 0
    assert summary.counts.recorded == 2  # the new attempts supersede the old in the frame
    assert summary.campaign is not None and summary.campaign.retried == 2
    assert summary.campaign.cost_usd_all_attempts == pytest.approx(0.02)
    # retry of all categories with nothing errored left: nothing runs
    assert _run(script, run_dir, resume=True, limits=CampaignLimits(retry_errors=frozenset())).results == []


def test_circuit_breaker_stops_after_consecutive_errors_and_resumes(tmp_path: Path) -> None:
    script, run_dir = tmp_path / "s.yaml", tmp_path / "run"
    script.write_text(AUTH_FAIL)
    out = _run(script, run_dir, trials=5, limits=CampaignLimits(max_consecutive_errors=2))
    assert len(out.results) == 2 and out.stopped is not None
    assert "2 consecutive 'auth' errors" in out.stopped and "--retry-errors=auth" in out.stopped
    assert read_campaign(run_dir).stopped == out.stopped
    script.write_text(OK_TURN)
    done = _run(script, run_dir, resume=True, limits=CampaignLimits(retry_errors=frozenset({"auth"})))
    assert done.stopped is None and len(done.results) == 5 and done.retried == 2
    assert build_summary(run_dir).counts.recorded == 5


def test_spend_cap_stops_whole_pairs_and_keeps_the_frame_paired(tmp_path: Path) -> None:
    script, run_dir = tmp_path / "s.yaml", tmp_path / "run"
    script.write_text(OK_TURN)  # $0.01 per trial; a pair (none + curated) $0.02
    out = _run(script, run_dir, trials=4, conditions=("none", "curated"), limits=CampaignLimits(max_cost_usd=0.045))
    assert out.stopped is not None and out.stopped.startswith("spend cap reached")
    by_pair: dict[int, set[str]] = {}
    for r in out.results:
        by_pair.setdefault(r.trial_index, set()).add(r.condition)
    assert all(conds == {"none", "curated"} for conds in by_pair.values())  # only whole pairs ran
    assert len(by_pair) == 2 and len(out.not_run) == 4
    assert sum(r.usage.cost_usd for r in out.results) <= 0.045
    summary = build_summary(run_dir)
    assert summary.campaign is not None and summary.campaign.not_run == 4
    assert summary.counts.missing == 0  # not run is out of the frame, not a 0
    assert {(p.condition, p.planned) for p in summary.pass_rates} == {("none", 2), ("curated", 2)}
    # a raised cap continues the run: the pairs not run run now
    more = _run(script, run_dir, resume=True, limits=CampaignLimits(max_cost_usd=1.0))
    assert more.stopped is None and len(more.results) == 4 and more.not_run == []
    assert build_summary(run_dir).campaign is None


def test_token_cap_counts_tokens(tmp_path: Path) -> None:
    script, run_dir = tmp_path / "s.yaml", tmp_path / "run"
    script.write_text(OK_TURN)  # 110 tokens a trial
    out = _run(script, run_dir, trials=3, limits=CampaignLimits(max_tokens=150))
    assert len(out.results) == 1 and out.stopped is not None and "token cap" in out.stopped


def test_trial_over_its_token_budget_is_the_agents_failure(tmp_path: Path) -> None:
    script, run_dir = tmp_path / "s.yaml", tmp_path / "run"
    turn = '- {tool_calls: [{name: bash, arguments: {command: "true"}}], usage: {input_tokens: 80, output_tokens: 5}}\n'
    script.write_text(turn * 3 + OK_TURN)
    (r,) = _run(script, run_dir, extra={"trial_token_budget": 100}).results
    assert r.error is None and r.outcome == "failed" and r.reward == 0.0
    assert r.failure_mode == "token_budget" and "over the trial's budget of 100" in (r.failure_detail or "")
    calls = read_calls(run_dir / "trials" / r.trial_id / "gateway.jsonl")
    assert [c.error_class for c in calls] == [None, None, "token_budget"]  # refused once over, not asked
    assert build_summary(run_dir).failure_modes[0].token_budget == 1


def test_gateway_stops_a_trials_retries_once_the_provider_is_known_down(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(DOWN)
    from skillworks.gateway.retry import RetryPolicy

    async def main() -> list[int]:
        import aiohttp

        from skillworks.gateway import Gateway

        gw = Gateway(f"scripted/{script}", retry=RetryPolicy(max_attempts=3, base_delay_sec=0.01), tcp_port=0)
        async with gw:
            ch = await gw.open_trial("t1", tmp_path / "g.jsonl")
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            async with aiohttp.ClientSession() as http:
                for _ in range(3):  # a harness CLI retrying on its own
                    async with http.post(f"{ch.tcp_base_url}/v1/chat/completions", json=body) as resp:
                        assert resp.status >= 500
            await gw.close_trial("t1")
        return [c.attempts for c in read_calls(tmp_path / "g.jsonl")]

    assert asyncio.run(main()) == [3, 0, 0]  # 3 upstream attempts in all, not 9


def test_cli_breaker_exits_3_and_retry_errors_all_resumes(tmp_path: Path, cli: Any) -> None:
    script, runs = tmp_path / "s.yaml", tmp_path / "runs"
    script.write_text(AUTH_FAIL)
    args = ["--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "none", "--trials", "3"]
    first = cli(
        "run",
        str(TASK),
        *args,
        "--concurrency",
        "1",
        "--max-consecutive-errors",
        "2",
        "--out",
        str(runs),
        "--run-id",
        "r",
    )
    assert first.returncode == 3, first.stderr
    assert "stopped: circuit breaker: 2 consecutive 'auth' errors" in first.stderr
    script.write_text(OK_TURN)
    again = cli("run", "--resume", str(runs / "r"), "--retry-errors", "all")
    assert again.returncode == 0, again.stderr
    assert "ran 3 trial(s) (0 already recorded, 2 retried, 0 error(s))" in again.stderr
    bad = cli("run", str(TASK), "--retry-errors", "all", "--out", str(runs))
    assert bad.returncode == 2 and "--retry-errors needs --resume" in bad.stderr


def test_response_cache_serves_identical_calls_across_runs(tmp_path: Path) -> None:
    script, cache = tmp_path / "s.yaml", tmp_path / "cache"
    script.write_text(OK_TURN)
    task = load_task(TASK)

    def run(run_dir: Path) -> RunOutcome:
        spec = ExperimentSpec(
            run_id=run_dir.name,
            created_at=datetime.now(UTC),
            skillworks_version=__version__,
            tasks=[task_ref(task)],
            conditions=["none"],
            agents=[AgentConfig(name="builtin", model=f"scripted/{script}")],
            trials=1,
            seed=0,
            concurrency=1,
        )
        return asyncio.run(run_experiment(spec, [task], run_dir, response_cache=cache))

    (first,) = run(tmp_path / "a").results
    assert first.usage.cost_usd == pytest.approx(0.01) and any(cache.rglob("*.json"))
    script.write_text(AUTH_FAIL)  # the provider would now fail every call: only the cache can answer
    (second,) = run(tmp_path / "b").results
    assert second.error is None and second.outcome == first.outcome and second.usage.cost_usd == 0.0
    calls = read_calls(tmp_path / "b" / "trials" / second.trial_id / "gateway.jsonl")
    assert [(c.status, c.attempts) for c in calls] == [("ok", 0)]  # served without a provider attempt
    bad = tmp_path / "file"
    bad.write_text("")
    from skillworks.errors import UserError
    from skillworks.gateway.response_cache import ResponseCache

    with pytest.raises(UserError, match="--cache: not a directory"):
        ResponseCache(bad)


def test_regrade_runs_a_changed_verifier_on_saved_workspaces(tmp_path: Path, cli: Any) -> None:
    import shutil

    task = tmp_path / "task"
    shutil.copytree(TASK, task)
    runs = tmp_path / "runs"
    first = cli(
        "run",
        str(task),
        "--agent",
        "oracle",
        "--conditions",
        "none",
        "--keep-workspace",
        "--out",
        str(runs),
        "--run-id",
        "r",
    )
    assert first.returncode == 0, first.stderr
    (r1,) = RunStore(runs / "r").read_results()
    assert r1.outcome == "solved"
    test_sh = task / "verifier" / "test.sh"  # the "fix": the total must now be 999
    test_sh.write_text(test_sh.read_text().replace('"1234.5"', '"999"'))
    done = cli("regrade", str(runs / "r"))
    assert done.returncode == 0, done.stderr
    assert "regraded 1 trial(s) (0 solved" in done.stderr
    old, new = RunStore(runs / "r").read_results()
    assert (new.attempt, new.reward, new.outcome) == (2, 0.0, "failed") and new.usage == old.usage
    trial = runs / "r" / "trials" / r1.trial_id
    assert [p.read_text().strip() for p in (trial / "verifier.a1").rglob("reward.txt")] == ["1.0"]  # kept
    assert [p.read_text().strip() for p in (trial / "verifier").rglob("reward.txt")] == ["0.0"]
    summary = build_summary(runs / "r")
    assert summary.pass_rates[0].rate == 0.0 and summary.counts.superseded_attempts == 1
    nothing = cli("regrade", str(tmp_path))
    assert nothing.returncode == 2 and "experiment.json" in nothing.stderr
