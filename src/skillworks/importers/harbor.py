"""Import Harbor job directories into an ordinary skillworks run directory.

`import_harbor_jobs([(condition, job_dir), ...], out)` reads every trial of each job (its `result.json`,
`agent/trajectory.json` and `verifier/` files; see `harbor_format` for the layout) and writes `out` as a
run directory: `experiment.json`, `results.jsonl` and `trials/<task>__<condition>__<agent>__t<k>/` with the
trajectory, the agent's logs, the verifier's files and Harbor's own files under `harbor/`, copied
untouched. `report`, the statistics and skill-use analysis then work on it as on a native run.

Harbor has no skill conditions: each job directory is imported under one condition, named on the command
line (`none=jobs/a curated=jobs/b`) or else the job's name.

Rules (each one what a native skillworks trial would record):
- reward: the verifier's `reward` value, else its only value, else the mean of its values (as
  `reward.json` is read natively); a value outside [0, 1] is a verifier error;
- a trial with an exception *and* a reward: an exception of the agent phase (Harbor's `AgentTimeoutError`,
  a non-zero agent exit, or any exception raised before the verifier started) leaves the reward standing,
  as a native agent timeout does: the workspace was graded; the failure mode says `timeout` or
  `execution_error` and the exception is kept in `harbor/exception.json`. An exception of the environment
  or verifier phase makes the trial an error whatever reward was written (the grading is not trusted);
- no exception and no reward: a verifier error (never a 0);
- usage: Harbor's `agent_result` token counts, unless the trajectory repeats one API call's usage on several
  steps (Harbor's Claude Code ATIF does, and its `agent_result` is that inflated sum): then the trajectory's
  steps counted once per call. `usage.origin` says which was used;
- trial index: the order in which a task's trials of one condition and agent started; Harbor records no
  seeds, so `seed` is 0;
- skill use: detected in the trajectory against the skills the trial could see — those given for its
  condition (`skills={"curated": DIR}`, a directory of skill directories), else the task's own
  `environment/skills/*/SKILL.md` when the task directory Harbor ran is on this machine (the SkillsBench
  layout); with neither, no skill use is recorded (and the summary says so).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillworks.errors import UserError, first_validation_error
from skillworks.experiment.plan import trial_id as make_trial_id
from skillworks.experiment.spec import AgentConfig, ExperimentSpec, TaskRef
from skillworks.experiment.store import RunStore
from skillworks.grading.ctrf import read_ctrf
from skillworks.importers.harbor_format import ExceptionInfo, HarborTrialResult, JobConfig
from skillworks.results import FailureMode, Phase, SkillUse, Timings, TrialError, TrialResult, Usage, outcome_for
from skillworks.skills.package import SkillPackage
from skillworks.trajectory.models import Step, Trajectory
from skillworks.trajectory.skill_use import StagedSkillRef, detect_skill_use
from skillworks.trajectory.usage import usage_per_call
from skillworks.trajectory.validate import TrajectoryError, validate_trajectory

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class HarborJob:
    """One job directory (or a single trial directory) and the condition its trials are imported under."""

    path: Path
    condition: str | None = None


@dataclass
class ImportSummary:
    run_dir: Path
    trials: int = 0
    by_condition: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    skipped: list[str] = field(default_factory=list)  # trial dirs without a result.json (unfinished)
    warnings: list[str] = field(default_factory=list)
    usage_origins: dict[str, int] = field(default_factory=dict)
    without_skill_info: int = 0  # trials whose visible skills are unknown (no skill use recorded)
    continued_trajectories: int = 0  # trials whose trajectory came in parts (continued_trajectory_ref)


@dataclass
class _Trial:
    job: HarborJob
    condition: str
    dir: Path
    result: HarborTrialResult
    agent: AgentConfig


def parse_job_arg(arg: str) -> HarborJob:
    """`CONDITION=PATH` or `PATH` (a path holding `=` is taken whole when it exists)."""
    if "=" in arg and not Path(arg).exists():
        condition, _, path = arg.partition("=")
        if not condition or not path:
            raise UserError(f"expected CONDITION=JOB_DIR or JOB_DIR, got {arg!r}")
        return HarborJob(Path(path), condition)
    return HarborJob(Path(arg))


def import_harbor_jobs(
    jobs: Sequence[HarborJob],
    out: Path,
    *,
    run_id: str | None = None,
    skills: Mapping[str, Path] | None = None,
) -> ImportSummary:
    """Read every trial of `jobs` (all checked before anything is written), then write the run directory `out`
    (which must not exist or be empty). `skills` maps a condition to a directory of the skills its trials
    could see (for skill-use detection)."""
    if not jobs:
        raise UserError("no Harbor job directory given")
    staged_for = {cond: _skill_packages(path) for cond, path in (skills or {}).items()}
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError("already exists and is not empty; choose a new --out", out)
    resolved = [job.path.resolve() for job in jobs]
    for i, path in enumerate(resolved):
        if path in resolved[:i]:
            raise UserError("job directory given twice", jobs[i].path)
    summary = ImportSummary(run_dir=out)
    trials: list[_Trial] = []
    job_records: list[dict[str, Any]] = []
    n_attempts = 0
    concurrency = 1
    env_type: str | None = None
    for job in jobs:
        config, trial_dirs = _job_contents(job.path, summary)
        condition = job.condition or config.job_name or job.path.resolve().name
        n_attempts = max(n_attempts, config.n_attempts or 0)
        n_conc = (config.orchestrator or {}).get("n_concurrent_trials")
        concurrency = max(concurrency, n_conc if isinstance(n_conc, int) and n_conc > 0 else 1)
        env = (config.environment or {}).get("type")
        env_type = env_type or (str(env) if env else None)
        job_records.append({"path": str(job.path), "job_name": config.job_name, "condition": condition})
        for trial_dir in trial_dirs:
            result = _read_trial_result(trial_dir / "result.json")
            trials.append(_Trial(job, condition, trial_dir, result, _agent_config(result)))
    if not trials:
        raise UserError("no finished trial (a directory with result.json) found in the job directories")
    # trial index: order of start within (task, condition, agent)
    cells: dict[tuple[str, str, str], list[_Trial]] = defaultdict(list)
    for t in trials:
        cells[(t.result.task_name, t.condition, t.agent.label)].append(t)
    indexed: list[tuple[_Trial, int]] = []
    for cell in cells.values():
        cell.sort(key=lambda t: (t.result.started_at or _EPOCH, t.result.trial_name))
        indexed += [(t, k) for k, t in enumerate(cell)]

    run_id = run_id or out.resolve().name
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.importing-", dir=out.parent))
    try:
        store = RunStore(staging)
        store.write_spec(
            _spec(
                run_id,
                trials,
                jobs,
                job_records,
                max(n_attempts, max(len(c) for c in cells.values())),
                concurrency,
                env_type,
            )
        )
        for t, k in indexed:
            tid = make_trial_id(_safe(t.result.task_name), t.condition, t.agent.label, k)
            record = _import_trial(t, k, tid, run_id, staging, summary, staged_for)
            store.append(record)
            summary.trials += 1
            summary.by_condition[t.condition] = summary.by_condition.get(t.condition, 0) + 1
            summary.errors += record.outcome == "error"
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return summary


def _job_contents(path: Path, summary: ImportSummary) -> tuple[JobConfig, list[Path]]:
    if not path.is_dir():
        raise UserError("not a directory (expected a Harbor job directory)", path)
    own = path / "result.json"
    if own.is_file() and "trial_name" in _read_json(own):  # a single trial directory
        return _job_config(path.parent / "config.json"), [path]
    config = _job_config(path / "config.json")
    trial_dirs = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        if (child / "result.json").is_file():
            trial_dirs.append(child)
        elif (child / "config.json").is_file() or (child / "agent").is_dir():
            summary.skipped.append(str(child))
    if not trial_dirs and not summary.skipped:
        raise UserError("no trial directories found (is this a Harbor job directory?)", path)
    return config, trial_dirs


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read: {exc}", path) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON: {exc.msg} at line {exc.lineno}", path) from None
    if not isinstance(data, dict):
        raise UserError("expected a JSON object", path)
    return data


def _job_config(path: Path) -> JobConfig:
    if not path.is_file():
        return JobConfig()
    data = _read_json(path)
    if "task" in data and "trials_dir" in data:  # a trial's config.json, not a job's
        return JobConfig()
    try:
        return JobConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"not a Harbor job config: {first_validation_error(exc)}", path) from None


def _read_trial_result(path: Path) -> HarborTrialResult:
    try:
        return HarborTrialResult.model_validate(_read_json(path))
    except ValidationError as exc:
        raise UserError(f"not a Harbor trial result: {first_validation_error(exc)}", path) from None


def _agent_config(result: HarborTrialResult) -> AgentConfig:
    info = result.agent_info
    cfg = result.config.agent if result.config is not None else None
    name = (info.name if info is not None else None) or (cfg.name if cfg is not None else None) or "unknown"
    model = cfg.model_name if cfg is not None and cfg.model_name else None
    if model is None and info is not None and info.model_info is not None and info.model_info.name:
        mi = info.model_info
        model = f"{mi.provider}/{mi.name}" if mi.provider and "/" not in (mi.name or "") else mi.name
    return AgentConfig(name=name, model=model, version=info.version if info is not None else None)


def _safe(task_name: str) -> str:
    return task_name.replace("/", "--")


def _spec(
    run_id: str,
    trials: list[_Trial],
    jobs: Sequence[HarborJob],
    job_records: list[dict[str, Any]],
    n_trials: int,
    concurrency: int,
    env_type: str | None,
) -> ExperimentSpec:
    from skillworks import __version__

    tasks: dict[str, TaskRef] = {}
    agents: dict[str, AgentConfig] = {}
    for t in trials:
        r = t.result
        path = r.config.task.path if r.config is not None and r.config.task is not None else None
        tasks.setdefault(
            r.task_name, TaskRef(id=r.task_name, path=path or "", format="harbor", content_hash=r.task_checksum or "")
        )
        agents.setdefault(t.agent.label, t.agent)
    return ExperimentSpec(
        run_id=run_id,
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=sorted(tasks.values(), key=lambda ref: ref.id),
        conditions=list(dict.fromkeys(t.condition for t in trials)),
        agents=list(agents.values()),
        trials=n_trials,
        seed=0,
        concurrency=concurrency,
        env="harbor",
        env_options={"environment": env_type} if env_type else {},
        extra={
            "imported_from": "harbor",
            "jobs": job_records,
            "notes": "imported with `skillworks import harbor`; Harbor records no seeds (seed 0)",
        },
    )


def _skill_packages(tree: Path) -> list[SkillPackage]:
    from skillworks.skills.package import discover_skills, load_skill

    if not tree.is_dir():
        raise UserError("not a directory (expected a directory of skills)", tree)
    found = discover_skills(tree)
    if not found:
        raise UserError("no skill (a directory with SKILL.md) found", tree)
    return [load_skill(d) for d in found]


def _staged(t: _Trial, staged_for: Mapping[str, list[SkillPackage]]) -> list[SkillPackage] | None:
    """The skills the trial could see: given for its condition, else its task's environment/skills (the task
    path as Harbor recorded it, absolute or relative to the current directory); None when unknown."""
    if t.condition in staged_for:
        return staged_for[t.condition]
    cfg = t.result.config
    task_path = cfg.task.path if cfg is not None and cfg.task is not None else None
    if task_path and Path(task_path).is_dir():
        skills_dir = Path(task_path) / "environment" / "skills"
        return _skill_packages(skills_dir) if skills_dir.is_dir() else []
    return None


def _import_trial(
    t: _Trial,
    k: int,
    tid: str,
    run_id: str,
    run_dir: Path,
    summary: ImportSummary,
    staged_for: Mapping[str, list[SkillPackage]],
) -> TrialResult:
    r = t.result
    trial_dir = run_dir / "trials" / tid
    trial_dir.mkdir(parents=True)
    paths: dict[str, str] = {}
    harbor_dir = trial_dir / "harbor"
    harbor_dir.mkdir()
    for name in ("result.json", "config.json", "exception.txt", "trial.log"):
        if (t.dir / name).is_file():
            shutil.copy2(t.dir / name, harbor_dir / name)
    paths["harbor"] = f"trials/{tid}/harbor"
    for sub in ("agent", "verifier"):
        if (t.dir / sub).is_dir():
            shutil.copytree(t.dir / sub, trial_dir / sub, symlinks=True)
            paths[sub] = f"trials/{tid}/{sub}"

    traj, parts = _trajectory(t.dir / "agent" / "trajectory.json", summary)
    if traj is not None:
        if len(parts) > 1:  # the joined trajectory; Harbor's parts stay untouched under agent/
            (trial_dir / "trajectory.json").write_text(json.dumps(traj.to_json_dict(), ensure_ascii=False))
            summary.continued_trajectories += 1
        else:
            shutil.copy2(t.dir / "agent" / "trajectory.json", trial_dir / "trajectory.json")
        paths["trajectory"] = f"trials/{tid}/trajectory.json"

    skill_use = SkillUse()
    staged = _staged(t, staged_for)
    if staged is None:
        summary.without_skill_info += 1
    elif traj is not None:
        skill_use = detect_skill_use(traj, [StagedSkillRef.from_package(p) for p in staged], None, None)
    reward, rewards, error, failure_mode = _grade(t, harbor_dir, summary)
    if failure_mode is None and reward is not None and reward < 1.0:
        failure_mode = "verification_failed"
    usage = _usage(r, traj)
    if usage.origin:
        summary.usage_origins[usage.origin] = summary.usage_origins.get(usage.origin, 0) + 1
    tests = read_ctrf(t.dir / "verifier" / "ctrf.json") if (t.dir / "verifier" / "ctrf.json").is_file() else []
    started = r.started_at or (r.environment_setup.started_at if r.environment_setup else None)
    finished = r.finished_at or started
    mtime = datetime.fromtimestamp((t.dir / "result.json").stat().st_mtime, UTC)
    model = t.agent.model
    provider = None
    if r.agent_info is not None and r.agent_info.model_info is not None:
        provider = r.agent_info.model_info.provider
    if provider is None and model is not None:
        provider = t.agent.provider
    return TrialResult(
        trial_id=tid,
        run_id=run_id,
        task_id=r.task_name,
        condition=t.condition,
        agent=t.agent.label,
        model=model,
        provider=provider,
        trial_index=k,
        seed=0,
        reward=reward,
        rewards=rewards,
        outcome=outcome_for(reward, error),
        failure_mode=failure_mode,
        error=error,
        timings=_timings(r),
        usage=usage,
        skill_use=skill_use,
        skills_staged=[f"{p.name}@{p.short_hash}" for p in staged or []],
        paths=paths,
        tests=tests,
        started_at=started or mtime,
        finished_at=finished or mtime,
    )


_MAX_CONTINUATIONS = 100


def _trajectory(path: Path, summary: ImportSummary) -> tuple[Trajectory | None, list[str]]:
    """The trial's trajectory with its continuations (`continued_trajectory_ref`: the next part after a
    context hand-off, a file beside it) joined into one, and the names of the parts. A continuation's
    steps copied from the earlier context (`is_copied_context`) are left out, so that neither usage nor
    skill use counts them twice; a reference that leaves the agent dir, loops or does not validate ends
    the chain with a warning (the parts before it stay)."""
    if not path.is_file():
        return None, []
    try:
        first = validate_trajectory(path)
    except TrajectoryError as exc:
        summary.warnings.append(f"{exc} (kept under agent/, not used as the trial's trajectory)")
        return None, []
    parts, names = [first], [path.name]
    ref = first.continued_trajectory_ref
    while ref:
        nxt = path.parent / ref
        if "/" in ref or "\\" in ref or ref in (".", "..") or nxt.is_symlink() or not nxt.is_file():
            summary.warnings.append(
                f"{path.parent / names[-1]}: continued_trajectory_ref {ref!r} is not a file beside it"
            )
            break
        if ref in names or len(names) > _MAX_CONTINUATIONS:
            summary.warnings.append(f"{path.parent / names[-1]}: continued_trajectory_ref {ref!r} loops or runs on")
            break
        try:
            part = validate_trajectory(nxt)
        except TrajectoryError as exc:
            summary.warnings.append(f"{exc} (the continuation is not used)")
            break
        parts.append(part)
        names.append(ref)
        ref = part.continued_trajectory_ref
    if len(parts) == 1:
        return first, names
    steps: list[Step] = []
    for i, part in enumerate(parts):
        for step in part.steps:
            if i and step.is_copied_context:
                continue
            steps.append(step.model_copy(update={"step_id": len(steps) + 1}))
    extra = {**(first.extra or {}), "continuations": names[1:]}
    joined = first.model_copy(
        update={"steps": steps, "continued_trajectory_ref": None, "extra": extra, "final_metrics": None}
    )
    return joined, names


def _grade(
    t: _Trial, harbor_dir: Path, summary: ImportSummary
) -> tuple[float | None, dict[str, float], TrialError | None, FailureMode | None]:
    """(reward, rewards, error, failure mode) by the rules in the module docstring."""
    r = t.result
    rewards = dict(r.verifier_result.rewards or {}) if r.verifier_result is not None else {}
    reward: float | None = None
    if rewards:
        if "reward" in rewards:
            reward = rewards["reward"]
        elif len(rewards) == 1:
            reward = next(iter(rewards.values()))
        else:
            reward = sum(rewards.values()) / len(rewards)
    exc = r.exception_info
    if exc is not None and (exc.exception_type or exc.exception_message):
        (harbor_dir / "exception.json").write_text(exc.model_dump_json(indent=2))
        phase = _phase(exc, r)
        timed_out = "timeout" in exc.exception_type.lower()
        if phase == "agent" and reward is not None:
            mode: FailureMode = "timeout" if timed_out else "execution_error"
            return _checked(reward, rewards, mode)
        category = {
            "setup": "sandbox_error",
            "agent": "agent_timeout" if timed_out else "agent_error",
            "verify": "verifier_error",
        }.get(phase, exc.exception_type or "harbor_error")
        first_line = (exc.exception_message or "").strip().splitlines()
        message = f"{exc.exception_type}: {first_line[0] if first_line else ''}".strip(": ")
        failure: FailureMode = "timeout" if timed_out else "execution_error"
        return None, {}, TrialError(category=category, message=message, phase=phase), failure
    if reward is None:
        error = TrialError(
            category="verifier_error", message="no reward recorded (verifier_result empty)", phase="verify"
        )
        return None, {}, error, None
    return _checked(reward, rewards, None)


def _checked(
    reward: float, rewards: dict[str, float], mode: FailureMode | None
) -> tuple[float | None, dict[str, float], TrialError | None, FailureMode | None]:
    if not 0.0 <= reward <= 1.0:
        error = TrialError(category="verifier_error", message=f"reward {reward} is outside [0, 1]", phase="verify")
        return None, {}, error, None
    return reward, rewards, None, mode


def _phase(exc: ExceptionInfo, r: HarborTrialResult) -> Phase:
    kind = exc.exception_type.lower()
    if "verifier" in kind or "reward" in kind:
        return "verify"
    if "agent" in kind:
        return "agent"
    if any(word in kind for word in ("environment", "docker", "build", "sandbox", "image")):
        return "setup"
    when = exc.occurred_at
    verify_start = r.verifier.started_at if r.verifier is not None else None
    agent_start = r.agent_execution.started_at if r.agent_execution is not None else None
    if when is not None:
        if verify_start is not None and when >= verify_start:
            return "verify"
        if agent_start is not None and when >= agent_start:
            return "agent"
        return "setup"
    if verify_start is not None:
        return "internal"  # no time recorded and the verifier ran: the phase is unknown
    return "agent" if agent_start is not None else "setup"


def _timings(r: HarborTrialResult) -> Timings:
    setup = sum(x.seconds for x in (r.environment_setup, r.agent_setup) if x is not None)
    agent = r.agent_execution.seconds if r.agent_execution is not None else 0.0
    verify = r.verifier.seconds if r.verifier is not None else 0.0
    total = (r.finished_at - r.started_at).total_seconds() if r.started_at and r.finished_at else setup + agent + verify
    return Timings(
        setup_sec=round(setup, 3), agent_sec=round(agent, 3), verify_sec=round(verify, 3), total_sec=round(total, 3)
    )


def _usage(r: HarborTrialResult, traj: Trajectory | None) -> Usage:
    ar = r.agent_result
    cost = ar.cost_usd if ar is not None and ar.cost_usd is not None else None
    per_call = usage_per_call(traj) if traj is not None else None
    have_result = ar is not None and (ar.n_input_tokens is not None or ar.n_output_tokens is not None)
    if per_call is not None and per_call.calls and (per_call.repeated or not have_result):
        origin = "atif steps, one count per API call"
        if per_call.repeated:
            origin += f" ({per_call.steps_with_metrics} steps repeated the usage of {per_call.calls} calls)"
        if cost is None:
            cost = per_call.cost_usd
        return Usage(
            input_tokens=per_call.input_tokens,
            output_tokens=per_call.output_tokens,
            cached_tokens=min(per_call.cached_tokens, per_call.input_tokens),
            cost_usd=cost or 0.0,
            calls=per_call.calls,
            source="harness",
            cost_source="harness" if cost is not None else "none",
            origin=origin,
        )
    if have_result and ar is not None:
        prompt = ar.n_input_tokens or 0
        return Usage(
            input_tokens=prompt,
            output_tokens=ar.n_output_tokens or 0,
            cached_tokens=min(ar.n_cache_tokens or 0, prompt),
            cost_usd=cost or 0.0,
            calls=per_call.calls if per_call is not None else 0,
            source="harness",
            cost_source="harness" if cost is not None else "none",
            origin="harbor agent_result",
        )
    return Usage()
