"""`skillworks import harbor`: Harbor job directories (written here in Harbor's format, see harbor_jobs.py)
become a run directory whose report is the report of a native run of the same trials."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.errors import UserError
from skillworks.experiment.store import RunStore
from skillworks.importers import HarborJob, import_harbor_jobs
from skillworks.report import build_summary
from skillworks.results import FailureMode, Timings, TrialError, TrialResult, Usage, outcome_for

from .harbor_jobs import LABEL, MODEL, T0, HarborTrial, claude_code_trajectory, write_job

SETUP_ERROR = ("EnvironmentStartError", "container failed to start")


def _jobs(root: Path) -> tuple[Path, Path]:
    """none: t1 1, 0, 0 (agent timed out, graded 0); t2 1, 1, environment error.
    curated: t1 1, 1, 1; t2 1, 0.5, (third trial never finished: no result.json)."""
    none = write_job(
        root,
        "no-skills",
        [
            HarborTrial("t1", 1.0, 0),
            HarborTrial("t1", 0.0, 1),
            HarborTrial("t1", 0.0, 2, exception=("AgentTimeoutError", "Agent timed out after 600s")),
            HarborTrial("t2", 1.0, 0),
            HarborTrial("t2", 1.0, 1),
            HarborTrial("t2", None, 2, exception=SETUP_ERROR, exception_at="setup", tokens=None),
        ],
    )
    curated = write_job(
        root,
        "with-skills",
        [
            HarborTrial("t1", 1.0, 0, cost=0.02),
            HarborTrial("t1", 1.0, 1, cost=0.02),
            HarborTrial("t1", 1.0, 2, cost=0.02),
            HarborTrial("t2", 1.0, 0, cost=0.02),
            HarborTrial("t2", 0.5, 1, cost=0.02),
        ],
    )
    unfinished = curated / "t2__unfinished"
    (unfinished / "agent").mkdir(parents=True)
    (unfinished / "config.json").write_text("{}")
    return none, curated


def _native(task: str, condition: str, k: int, reward: float | None, **kw: object) -> TrialResult:
    error = kw.get("error")
    assert error is None or isinstance(error, TrialError)
    failed = error is not None
    mode = kw.get("failure_mode")
    cost = kw.get("cost", 0.01)
    assert isinstance(cost, float)
    start = T0 + timedelta(minutes=k)
    return TrialResult(
        trial_id=f"{task}__{condition}__{LABEL}__t{k}",
        run_id="imported",
        task_id=task,
        condition=condition,
        agent=LABEL,
        model=MODEL,
        provider="anthropic",
        trial_index=k,
        seed=0,
        reward=reward,
        rewards={} if reward is None else {"reward": reward},
        outcome=outcome_for(reward, error),
        failure_mode=mode,  # type: ignore[arg-type]
        error=error,
        timings=Timings(setup_sec=5.0, total_sec=5.0)
        if failed
        else Timings(setup_sec=1.0, agent_sec=10.0, verify_sec=2.0, total_sec=13.0),
        usage=Usage()
        if failed
        else Usage(
            input_tokens=1000,
            output_tokens=200,
            cached_tokens=50,
            cost_usd=cost,
            source="harness",
            cost_source="harness",
            origin="harbor agent_result",
        ),
        started_at=start,
        finished_at=start + timedelta(seconds=5 if failed else 13),
    )


def test_imported_job_renders_the_same_report_as_a_native_run(tmp_path: Path) -> None:
    none, curated = _jobs(tmp_path / "jobs")
    out = tmp_path / "runs" / "imported"
    summary = import_harbor_jobs([HarborJob(none, "none"), HarborJob(curated, "curated")], out)
    assert (summary.trials, summary.errors, summary.by_condition) == (11, 1, {"none": 6, "curated": 5})
    assert summary.skipped == [str(curated / "t2__unfinished")]

    # the same trials as a native skillworks run would have recorded them
    fail: FailureMode = "verification_failed"
    native = [
        _native("t1", "none", 0, 1.0),
        _native("t1", "none", 1, 0.0, failure_mode=fail),
        _native("t1", "none", 2, 0.0, failure_mode="timeout"),
        _native("t2", "none", 0, 1.0),
        _native("t2", "none", 1, 1.0),
        _native(
            "t2",
            "none",
            2,
            None,
            error=TrialError(category="sandbox_error", message=": ".join(SETUP_ERROR), phase="setup"),
            failure_mode="execution_error",
        ),
        *[_native("t1", "curated", k, 1.0, cost=0.02) for k in range(3)],
        _native("t2", "curated", 0, 1.0, cost=0.02),
        _native("t2", "curated", 1, 0.5, failure_mode=fail, cost=0.02),
    ]
    native_dir = tmp_path / "native" / "imported"
    native_dir.mkdir(parents=True)
    (native_dir / "experiment.json").write_text(
        json.dumps(
            {
                "run_id": "imported",
                "tasks": [{"id": "t1", "path": "tasks/t1"}, {"id": "t2", "path": "tasks/t2"}],
                "conditions": ["none", "curated"],
                "agents": [{"name": "claude-code", "model": MODEL}],
                "trials": 3,
                "seed": 0,
            }
        )
    )
    store = RunStore(native_dir)
    for r in native:
        store.append(r)

    imported = RunStore(out).read_results()
    assert [r.model_dump(exclude={"paths"}) for r in imported] == [
        r.model_dump(exclude={"paths"})
        for r in sorted(native, key=lambda r: [x.trial_id for x in imported].index(r.trial_id))
    ]
    a = build_summary(out, resamples=300).model_dump(exclude={"run_dirs", "notes", "warnings"})
    b = build_summary(native_dir, resamples=300).model_dump(exclude={"run_dirs", "notes", "warnings"})
    assert a == b
    assert a["pass_rates"][0]["condition"] == "none" and a["counts"]["missing"] == 1

    # the files: trajectory-less trials keep agent logs, verifier files and Harbor's own files
    t = next(r for r in imported if r.trial_id == f"t1__none__{LABEL}__t2")
    assert set(t.paths) == {"harbor", "agent", "verifier"}
    assert (out / t.paths["verifier"] / "reward.txt").read_text() == "0.0\n"
    assert json.loads((out / t.paths["harbor"] / "exception.json").read_text())["exception_type"] == "AgentTimeoutError"
    assert (out / t.paths["agent"] / "claude-code.txt").is_file()
    spec = json.loads((out / "experiment.json").read_text())
    assert spec["env"] == "harbor" and spec["trials"] == 3 and spec["extra"]["imported_from"] == "harbor"
    assert [j["condition"] for j in spec["extra"]["jobs"]] == ["none", "curated"]


def _one(tmp_path: Path, trial: HarborTrial) -> TrialResult:
    job = write_job(tmp_path / "jobs", "j", [trial])
    out = tmp_path / "run"
    import_harbor_jobs([HarborJob(job)], out)
    (result,) = RunStore(out).read_results()
    assert result.condition == "j"  # no condition given: the job's name
    return result


@pytest.mark.parametrize(
    "trial,reward,category,mode",
    [
        # an agent-phase exception with a reward: graded, the reward stands (as a native agent timeout)
        (HarborTrial("t", 0.5, exception=("AgentTimeoutError", "timed out")), 0.5, None, "timeout"),
        (HarborTrial("t", 1.0, exception=("NonZeroAgentExitCodeError", "exit 1")), 1.0, None, "execution_error"),
        # an agent exception without a reward: an error, never a 0
        (HarborTrial("t", None, exception=("AgentTimeoutError", "timed out")), None, "agent_timeout", "timeout"),
        # a verifier exception makes the trial an error whatever reward was written
        (
            HarborTrial("t", 1.0, exception=("VerifierTimeoutError", "slow"), exception_at="verify"),
            None,
            "verifier_error",
            "timeout",
        ),
        (HarborTrial("t", None), None, "verifier_error", None),  # no exception, no reward
        (HarborTrial("t", 1.5), None, "verifier_error", None),  # reward outside [0, 1]
        (HarborTrial("t", 0.0, rewards={"a": 1.0, "b": 0.0}), 0.5, None, "verification_failed"),  # mean
    ],
)
def test_exception_and_reward_rules(
    tmp_path: Path, trial: HarborTrial, reward: float | None, category: str | None, mode: str | None
) -> None:
    result = _one(tmp_path, trial)
    assert result.reward == reward
    assert (result.error.category if result.error else None) == category
    assert result.failure_mode == mode
    assert result.outcome == outcome_for(reward, result.error)


def test_claude_code_usage_repeated_per_content_block_is_counted_once(tmp_path: Path) -> None:
    # Harbor's agent_result is the inflated step sum; the trajectory's calls are counted once instead
    traj = claude_code_trajectory()
    fm = traj["final_metrics"]
    tokens = (fm["total_prompt_tokens"], fm["total_completion_tokens"], fm["total_cached_tokens"])
    result = _one(tmp_path, HarborTrial("t", 1.0, trajectory=traj, tokens=tokens))
    u = result.usage
    assert (u.input_tokens, u.output_tokens, u.cached_tokens, u.calls) == (2700, 130, 2200, 2)
    assert u.origin == "atif steps, one count per API call (4 steps repeated the usage of 2 calls)"
    assert u.cost_usd == 0.01 and u.source == "harness"
    assert result.paths["trajectory"] == f"trials/{result.trial_id}/trajectory.json"


def test_trajectory_without_repetition_keeps_harbors_agent_result(tmp_path: Path) -> None:
    traj = claude_code_trajectory()
    traj["steps"][2]["metrics"] = {"prompt_tokens": 1300, "completion_tokens": 10}  # a distinct call
    traj["steps"] = [s for s in traj["steps"] if s["step_id"] != 5]
    for i, s in enumerate(traj["steps"]):
        s["step_id"] = i + 1
    traj["steps"][1]["metrics"] = {"prompt_tokens": 1100, "completion_tokens": 5}
    result = _one(tmp_path, HarborTrial("t", 1.0, trajectory=traj, tokens=(4000, 55, 0)))
    assert result.usage.origin == "harbor agent_result" and result.usage.input_tokens == 4000
    assert result.usage.calls == 3


def test_an_invalid_trajectory_is_kept_but_not_used(tmp_path: Path) -> None:
    traj = claude_code_trajectory()
    traj["steps"][1]["role"] = "assistant"
    job = write_job(tmp_path / "jobs", "j", [HarborTrial("t", 1.0, trajectory=traj)])
    summary = import_harbor_jobs([HarborJob(job)], tmp_path / "run")
    assert len(summary.warnings) == 1 and "steps[1] (step_id 2): role: unknown key" in summary.warnings[0]
    (result,) = RunStore(tmp_path / "run").read_results()
    assert "trajectory" not in result.paths
    assert (tmp_path / "run" / result.paths["agent"] / "trajectory.json").is_file()


def test_bad_input_is_one_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    job = write_job(tmp_path / "jobs", "j", [HarborTrial("t", 1.0), HarborTrial("u", 1.0)])
    out = tmp_path / "run"
    with pytest.raises(UserError, match="not a directory"):
        import_harbor_jobs([HarborJob(tmp_path / "nope")], out)
    with pytest.raises(UserError, match="job directory given twice"):
        import_harbor_jobs([HarborJob(job, "a"), HarborJob(job, "b")], out)
    trial_result = next(job.glob("u__*/result.json"))
    good = trial_result.read_text()
    trial_result.write_text(good[:-5])
    with pytest.raises(UserError, match=rf"^{trial_result}: not valid JSON"):
        import_harbor_jobs([HarborJob(job)], out)
    data = json.loads(good)
    del data["task_name"]
    trial_result.write_text(json.dumps(data))
    with pytest.raises(UserError, match=rf"^{trial_result}: not a Harbor trial result: task_name: Field required"):
        import_harbor_jobs([HarborJob(job)], out)
    assert not out.exists() and not list(tmp_path.glob(".run.importing-*"))
    trial_result.write_text(good)
    out.mkdir()
    (out / "results.jsonl").write_text("")
    with pytest.raises(UserError, match="already exists and is not empty"):
        import_harbor_jobs([HarborJob(job)], out)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no trial directories found"):
        import_harbor_jobs([HarborJob(empty)], tmp_path / "run2")


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", *args])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_cli_import_then_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    none, curated = _jobs(tmp_path / "jobs")
    out = tmp_path / "runs" / "r1"  # --out is where run dirs go, as for `run`; the run dir is OUT/RUN_ID
    args = ("import", "harbor", f"none={none}", f"curated={curated}", "--out", str(out.parent), "--run-id", "r1")
    assert _cli(monkeypatch, *args) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == f"imported 11 trials (none: 6, curated: 5; 1 errors) into {out}"
    assert "usage of 10 trials: harbor agent_result" in captured.out
    assert f"skipped (no result.json, unfinished): {curated / 't2__unfinished'}" in captured.err
    assert json.loads((out / "experiment.json").read_text())["run_id"] == "r1"
    assert _cli(monkeypatch, "report", str(out), "--resamples", "200") == 0
    report = capsys.readouterr().out
    # none: t1 1/3, t2 2/3 (the errored trial is a 0 in the frame) -> 50.0%; curated: t1 1, t2 1.5/3 -> 75.0%
    assert "50.0%" in report and "75.0%" in report
    assert _cli(monkeypatch, "import", "harbor", f"none={tmp_path / 'missing'}", "--out", str(tmp_path / "x")) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"error: {tmp_path / 'missing'}: not a directory (expected a Harbor job directory)"
    )


def _skill(root: Path, name: str = "csv-report") -> Path:
    skill = root / name
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Summarize CSV files into reports.\n---\n\nRun it.\n"
    )
    (skill / "scripts" / "summarize.py").write_text("print('report')\n")
    return skill


def test_skill_use_is_detected_against_the_skills_the_trial_could_see(tmp_path: Path) -> None:
    calls = [
        {"tool_call_id": "toolu_01", "function_name": "Skill", "arguments": {"skill": "csv-report"}},
        {
            "tool_call_id": "toolu_02",
            "function_name": "Bash",
            "arguments": {"command": "python3 /root/.claude/skills/csv-report/scripts/summarize.py data.csv"},
        },
    ]
    traj = claude_code_trajectory(skill_calls=calls)
    job = write_job(tmp_path / "jobs", "with-skills", [HarborTrial("t1", 1.0, trajectory=traj)])
    skills = tmp_path / "skills"
    _skill(skills)
    out = tmp_path / "run"
    summary = import_harbor_jobs([HarborJob(job, "curated")], out, skills={"curated": skills})
    assert summary.without_skill_info == 0
    (r,) = RunStore(out).read_results()
    assert r.skill_use.invoked == ["csv-report"] and r.skill_use.scripts_run == ["csv-report/scripts/summarize.py"]
    assert r.skills_staged[0].startswith("csv-report@")
    assert build_summary(out, resamples=10).skill_invocation[0].invoked_trials == 1

    # without --skills: the task's own environment/skills, when the task Harbor ran is on this machine
    task = tmp_path / "tasks" / "t1"
    _skill(task / "environment" / "skills")
    result_file = next(job.glob("t1__*/result.json"))
    data = json.loads(result_file.read_text())
    data["config"]["task"]["path"] = str(task)
    result_file.write_text(json.dumps(data))
    import_harbor_jobs([HarborJob(job, "curated")], tmp_path / "run2")
    (r2,) = RunStore(tmp_path / "run2").read_results()
    assert r2.skill_use.invoked == ["csv-report"]
    # neither: skill use is not recorded, and the summary counts the trials
    data["config"]["task"]["path"] = "tasks/not-here"
    result_file.write_text(json.dumps(data))
    assert import_harbor_jobs([HarborJob(job, "curated")], tmp_path / "run3").without_skill_info == 1
    with pytest.raises(UserError, match="no skill"):
        import_harbor_jobs([HarborJob(job, "curated")], tmp_path / "run4", skills={"curated": tmp_path / "jobs"})


def test_a_continued_trajectory_is_read_to_its_end_and_counted_once(tmp_path: Path) -> None:
    """A trajectory in parts (`continued_trajectory_ref`, as Terminus-2 writes after a context hand-off):
    the later part's usage and skill use count, its copies of the earlier context do not."""
    calls = [{"tool_call_id": "toolu_01", "function_name": "Skill", "arguments": {"skill": "csv-report"}}]
    first = claude_code_trajectory()
    first["continued_trajectory_ref"] = "trajectory.1.json"
    job = write_job(tmp_path / "jobs", "with-skills", [HarborTrial("t1", 1.0, trajectory=first, tokens=None)])
    agent_dir = next(job.glob("t1__*/agent"))
    later = claude_code_trajectory(skill_calls=calls)  # the skill is loaded only after the hand-off
    copied = dict(first["steps"][1], step_id=2, is_copied_context=True)
    later["steps"] = [
        {"step_id": 1, "source": "user", "message": "handoff summary"},
        copied,
        *[dict(s, step_id=i + 3) for i, s in enumerate(later["steps"][1:])],
    ]
    later.pop("final_metrics", None)
    (agent_dir / "trajectory.1.json").write_text(json.dumps(later))
    skills = tmp_path / "skills"
    _skill(skills)
    out = tmp_path / "run"
    summary = import_harbor_jobs([HarborJob(job, "curated")], out, skills={"curated": skills})
    assert summary.continued_trajectories == 1 and summary.warnings == []
    (r,) = RunStore(out).read_results()
    assert r.skill_use.invoked == ["csv-report"]  # from the continuation
    joined = json.loads((out / r.paths["trajectory"]).read_text())
    assert joined["extra"]["continuations"] == ["trajectory.1.json"] and "continued_trajectory_ref" not in joined
    assert not any(s.get("is_copied_context") for s in joined["steps"])
    assert [s["step_id"] for s in joined["steps"]] == list(range(1, len(joined["steps"]) + 1))
    single = import_harbor_jobs(
        [
            HarborJob(
                write_job(
                    tmp_path / "j2", "a", [HarborTrial("t1", 1.0, trajectory=claude_code_trajectory(), tokens=None)]
                )
            )
        ],
        tmp_path / "run2",
    )
    (one,) = RunStore(tmp_path / "run2").read_results()
    assert single.continued_trajectories == 0 and r.usage.calls > one.usage.calls  # the later part's calls count
    assert r.usage.input_tokens > one.usage.input_tokens

    # a reference out of the agent dir, or a loop, ends the chain with a warning; the first part stays
    for ref in ("../../../../etc/passwd", "trajectory.json"):
        first["continued_trajectory_ref"] = ref
        (next(job.glob("t1__*/agent")) / "trajectory.json").write_text(json.dumps(first))
        run = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
        summary = import_harbor_jobs([HarborJob(job, "curated")], run, skills={"curated": skills})
        assert len(summary.warnings) == 1 and "continued_trajectory_ref" in summary.warnings[0], summary.warnings
        (bad,) = RunStore(run).read_results()
        assert bad.skill_use.invoked == [] and "trajectory" in bad.paths
