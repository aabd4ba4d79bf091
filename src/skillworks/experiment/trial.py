"""One trial, start to finish. This is the one place where a trial starts, where skills are staged,
where the agent runs and where the reward comes from:

    skills for the condition (its source) ─► sandbox start ─► stage them ─► audit what is visible (skills.json)
    ─► agent run (model calls through the gateway) ─► upload + run verifier ─► reward
    ─► trajectory (ATIF) + skill use + usage ─► TrialResult
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skillworks._tempdirs import temp_prefix
from skillworks.agents.base import Agent, AgentOutcome
from skillworks.agents.phase import run_agent_phase, teardown_sandbox
from skillworks.errors import StagingError, UserError, VerifierError
from skillworks.experiment.fresh_verify import OutputsCopy, copy_outputs, verifier_sandbox
from skillworks.experiment.plan import TrialSpec
from skillworks.grading.reward_files import RewardFileRefused
from skillworks.grading.verifier import VerifierResult, run_verifier, verifier_dirs, verifier_exec
from skillworks.provision.conditions import Condition, SkillSet, get_condition
from skillworks.provision.sources import SkillProvision, SourceRequest, provide_skills
from skillworks.results import (
    FailureMode,
    ImageInfo,
    SkillSourceInfo,
    SkillUse,
    Timings,
    TrialError,
    TrialResult,
    Usage,
    outcome_for,
)
from skillworks.sandbox.base import Sandbox, SandboxBroken
from skillworks.skills.package import SkillPackage
from skillworks.skills.staging import audit_skills, stage_skills

if TYPE_CHECKING:
    from skillworks.gateway.server import TrialChannel
    from skillworks.trajectory.skill_use import SkillHandleRef

log = logging.getLogger(__name__)


class TrialGateway(Protocol):
    """What a trial needs of a model gateway (`skillworks.gateway.Gateway`, or a client of one running
    elsewhere on the node, as under the Ray executor)."""

    async def open_trial(self, trial_id: str, log_path: Path, task_id: str | None = None) -> TrialChannel: ...

    async def close_trial(self, trial_id: str) -> None: ...

    def trial_error(self, trial_id: str) -> TrialError | None: ...


@dataclass
class TrialEnvironment:
    """What every trial of a run shares: where to write, which sandbox backend, the gateway, the skills."""

    run_id: str
    run_dir: Path
    env: str = "local"
    env_options: dict[str, Any] = field(default_factory=dict)
    skill_set: SkillSet = field(default_factory=SkillSet)
    gateways: dict[str, TrialGateway] = field(default_factory=dict)  # by agent label; only agents that need a model
    channel_port: int = 4141
    agents: dict[str, Agent] = field(default_factory=dict)  # by AgentConfig.label
    # host paths no agent may read: every task of the run (their verifiers and oracles), the run dir
    hide_paths: list[Path] = field(default_factory=list)
    # download the final workspace to <trial_dir>/workspace at the end of the agent phase (custom graders)
    keep_workspace: bool = False
    # called with every finished result before it is recorded (e.g. ACES metrics); returns the result to record
    post_trial: Callable[[TrialSpec, TrialResult, Path], Awaitable[TrialResult]] | None = None
    # ExperimentSpec.extra: options of conditions' skill sources (e.g. extra["self_generated"])
    experiment_extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Phases:
    setup: float = 0.0
    agent: float = 0.0
    verify: float = 0.0


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


async def run_trial(spec: TrialSpec, tenv: TrialEnvironment) -> TrialResult:
    trial_dir = tenv.run_dir / "trials" / spec.trial_id
    agent_dir, verifier_dir = trial_dir / "agent", trial_dir / "verifier"
    agent_dir.mkdir(parents=True, exist_ok=True)
    verifier_dir.mkdir(parents=True, exist_ok=True)
    agent = tenv.agents[spec.agent.label]
    condition = get_condition(spec.condition)
    started, t0 = datetime.now(UTC), time.monotonic()
    phases = _Phases()
    error: TrialError | None = None
    failure_mode: FailureMode | None = None
    broken: str | None = None  # what the agent broke (the trial is then its failure, reward 0)
    verdict: VerifierResult | None = None
    outcome = AgentOutcome()
    paths: dict[str, str] = {"trial_dir": _rel(trial_dir, tenv.run_dir)}
    provision = SkillProvision()
    skills: list[SkillPackage] = []
    scratch = Path(tempfile.mkdtemp(prefix=f"{temp_prefix('scratch')}{tenv.run_id[:24]}-{spec.trial_id[:40]}-"))
    sandbox: Sandbox | None = None
    # the verifier's own sandbox (fresh verification), started while the agent works
    vsandbox: Sandbox | None = None
    vstart: asyncio.Future[None] | None = None
    vscratch = scratch / "verifier-sandbox"
    fresh = spec.task.verifier is not None and spec.task.verifier_isolation == "fresh"
    copied: OutputsCopy | None = None
    skills_dir: str | None = None
    stack = contextlib.ExitStack()  # the verifier's upload source (a copy when its dir holds symlinks)
    try:
        # --- skills: where this condition's skills come from (selected, or produced by its source)
        phase_start = time.monotonic()
        try:
            provision = await provide_skills(condition, SourceRequest(spec, tenv, trial_dir))
        except (UserError, StagingError) as exc:
            raise _TrialFailure("skill_source_error", str(exc), "setup") from exc
        skills = provision.skills

        # --- setup: a fresh sandbox for this trial
        from skillworks.sandbox import create_sandbox

        # an agent may need host files mounted read-only (e.g. an installed harness CLI)
        sandbox_binds = getattr(agent, "sandbox_binds", None)  # optional Agent hook
        binds = sandbox_binds() if sandbox_binds is not None else []
        tool_binds = getattr(agent, "tool_binds", None)  # optional Agent hook: what the source's tools need
        if tool_binds is not None and provision.tools:
            binds = [*binds, *tool_binds(provision.tools)]
        hide = [*tenv.hide_paths, spec.task.root, tenv.run_dir.resolve()]
        sandbox = create_sandbox(
            tenv.env,
            spec.task,
            scratch,
            extra_ro_binds=binds,
            run_id=tenv.run_id,
            hide_paths=hide,
            strip_task_skills=condition.strips_task_skills,
            **tenv.env_options,
        )
        try:
            await sandbox.start()
        except Exception as exc:  # the sandbox could not start (e.g. an image build failed): not a 0
            _keep_traceback(trial_dir)
            raise _TrialFailure("sandbox_error", f"sandbox failed to start: {exc}", "setup") from exc
        if fresh:  # the verifier's sandbox starts now, while the agent works (same image, now cached)
            vsandbox = verifier_sandbox(spec, tenv, vscratch, [*hide, scratch], condition.strips_task_skills)
            vstart = asyncio.ensure_future(vsandbox.start())

        # --- staging: the skills this condition allows, then an audit of what is visible
        skills_dir = agent.skills_dir(sandbox.home, sandbox.workdir)
        try:
            await stage_skills(sandbox, skills, skills_dir, scratch)
            record = await audit_skills(sandbox, spec.condition, skills, skills_dir)
            record = record.model_copy(update={"handles": [h.handle for h in provision.handles]})
        except StagingError as exc:
            raise _TrialFailure("staging_error", str(exc), "staging") from exc
        (trial_dir / "skills.json").write_text(record.model_dump_json(indent=2))
        paths["skills"] = _rel(trial_dir / "skills.json", tenv.run_dir)
        if not record.ok:
            raise _TrialFailure("staging_error", "; ".join(record.problems), "staging")
        phases.setup = time.monotonic() - phase_start

        # --- agent (the verifier's files, uploaded only once it has ended: by the same round trip where
        # the backend can, when nothing but the verifier comes next)
        phase_start = time.monotonic()
        verifier_source = None
        if spec.task.verifier is not None and (fresh or not tenv.keep_workspace):
            verifier_source = stack.enter_context(spec.task.verifier.upload_source())  # symlinks followed
        outcome, ended = await run_agent_phase(
            spec,
            tenv,
            agent,
            sandbox,
            trial_dir,
            skills,
            skills_dir,
            provision.tools,
            verify_next=not fresh,
            verifier_source=None if fresh else verifier_source,
        )
        # the verifier may have run in the round trip that ended the agent phase: its time is the verifier's
        ran_verifier = ended.then_result.duration_sec if ended.then_result is not None else 0.0
        phases.agent = time.monotonic() - phase_start - ran_verifier
        _record_harness_skills(trial_dir, record, outcome)
        _check_token_budget(trial_dir, outcome, tenv.experiment_extra.get("trial_token_budget"))
        if outcome.error is not None:
            raise _TrialFailure(outcome.error.category, outcome.error.message, outcome.error.phase)
        produced = ended.workspace_changed
        if tenv.keep_workspace:
            await sandbox.download(sandbox.workdir, trial_dir / "workspace")
            paths["workspace"] = _rel(trial_dir / "workspace", tenv.run_dir)

        # --- verify: verifier files reach the sandbox only now (a task without a verifier, e.g. an
        # evals.json case graded by metrics, skips this phase: reward None, outcome "ungraded")
        if spec.task.verifier is not None:
            phase_start = time.monotonic()
            try:
                if vsandbox is not None and vstart is not None:
                    try:
                        await vstart
                    except Exception as exc:
                        _keep_traceback(trial_dir)
                        raise _TrialFailure(
                            "sandbox_error", f"the verifier's sandbox failed to start: {exc}", "verify"
                        ) from exc
                    own = [p for p in (skills_dir, spec.task.oracle.mount if spec.task.oracle else None) if p]
                    copied = await copy_outputs(spec, sandbox, vsandbox, scratch, not_outputs=own)
                    # one round trip where the backend can: its dirs emptied, the verifier's files in, run
                    assert spec.task.verifier is not None
                    upload = (verifier_source, spec.task.verifier.mount) if verifier_source is not None else None
                    vended = await vsandbox.end_agent_phase(
                        reset=verifier_dirs(spec.task),
                        upload=upload,
                        then=verifier_exec(spec.task, verifier_dir) if upload is not None else None,
                    )
                    verdict = await run_verifier(
                        spec.task,
                        vsandbox,
                        verifier_dir,
                        reset=False,
                        uploaded=vended.uploaded,
                        result=vended.then_result,
                    )
                else:
                    # its dirs were emptied when the agent phase ended (nothing of the agent has run since)
                    verdict = await run_verifier(
                        spec.task, sandbox, verifier_dir, reset=False, uploaded=ended.uploaded, result=ended.then_result
                    )
            except RewardFileRefused:
                paths["verifier"] = _rel(verifier_dir, tenv.run_dir)
                raise
            except VerifierError as exc:
                raise _TrialFailure("verifier_error", str(exc), "verify") from exc
            finally:
                phases.verify = time.monotonic() - phase_start + ran_verifier
            paths["verifier"] = _rel(verifier_dir, tenv.run_dir)
            if verdict.reward < 1.0:
                failure_mode = _failure_mode(outcome, produced)
    except SandboxBroken as exc:  # the agent left the sandbox unusable for grading: its failure, not ours
        broken = str(exc)
        failure_mode = "sandbox_broken"
    except _OverBudget as exc:  # the agent spent more tokens than the trial may: its failure, ungraded
        broken = str(exc)
        failure_mode = "token_budget"
    except RewardFileRefused as exc:  # a link, FIFO, oversized or contradicting reward file: the agent's
        broken = str(exc)
        failure_mode = "reward_file_refused"
    except _TrialFailure as failure:
        error = TrialError(category=failure.category, message=failure.message, phase=failure.phase)
    except Exception as exc:  # a bug or an unexpected failure: recorded with its traceback, never a 0,
        # and never the end of the other trials of the run
        error = TrialError(category=type(exc).__name__, message=str(exc) or repr(exc), phase="internal")
        _keep_traceback(trial_dir)
        log.exception("trial %s failed", spec.trial_id)
    finally:
        stack.close()
        await teardown_sandbox([vsandbox, sandbox], scratch, spec.trial_id, pending=vstart)
    # whatever happened, the calls the gateway recorded are what this trial used (and cost), and the
    # trajectory the agent left says which skills it used (an errored trial keeps its skill use)
    usage = _usage(trial_dir, outcome)
    skill_use = _skill_use(outcome, skills, skills_dir, trial_dir, provision.handles)
    skill_use.harness_provided = [h.name for h in outcome.harness_skills or []]
    reward = verdict.reward if verdict is not None and error is None else None
    if broken is not None and error is None:
        reward, verdict = 0.0, None
    finished = datetime.now(UTC)
    for name in ("trajectory.json", "gateway.jsonl"):
        if (trial_dir / name).is_file():
            paths[name.split(".")[0]] = _rel(trial_dir / name, tenv.run_dir)
    paths["agent"] = _rel(agent_dir, tenv.run_dir)
    ungraded = spec.task.verifier is None and error is None and broken is None
    result = TrialResult(
        trial_id=spec.trial_id,
        run_id=tenv.run_id,
        task_id=spec.task.id,
        condition=spec.condition,
        agent=spec.agent.label,
        model=spec.agent.model,
        provider=spec.agent.provider,
        trial_index=spec.trial_index,
        seed=spec.seed,
        reward=reward,
        rewards=verdict.rewards if verdict is not None and error is None else {},
        outcome="ungraded" if ungraded else outcome_for(reward, error),
        failure_mode=failure_mode,
        failure_detail=broken,
        error=error,
        timings=Timings(
            setup_sec=round(phases.setup, 3),
            agent_sec=round(phases.agent, 3),
            verify_sec=round(phases.verify, 3),
            total_sec=round(time.monotonic() - t0, 3),
        ),
        usage=usage,
        skill_use=skill_use,
        skills_staged=[f"{s.name}@{s.short_hash}" for s in skills],
        image=_image_info(sandbox),
        verifier_isolation=spec.task.verifier_isolation if spec.task.verifier is not None else None,
        outputs_not_copied=copied.not_copied if copied is not None else [],
        outputs_skipped=copied.skipped if copied is not None else [],
        skill_source=_source_info(condition, provision),
        tests=verdict.tests if verdict is not None else [],
        paths=paths,
        started_at=started,
        finished_at=finished,
    )
    if tenv.post_trial is not None:
        try:
            result = await tenv.post_trial(spec, result, trial_dir)
        except Exception:  # grading must never lose the trial's own result
            log.exception("post-trial grading of %s failed", spec.trial_id)
    return result


def _image_info(sandbox: Sandbox | None) -> ImageInfo | None:
    """Where the trial's image came from, for backends that build images (an optional Sandbox hook)."""
    hook = getattr(sandbox, "image_info", None)
    return hook() if hook is not None else None


def _record_harness_skills(trial_dir: Path, record: Any, outcome: AgentOutcome) -> None:
    """skills.json also says which skills the harness brought itself ([] for an agent that brings none)."""
    updated = record.model_copy(update={"harness_skills": outcome.harness_skills})
    (trial_dir / "skills.json").write_text(updated.model_dump_json(indent=2))


def _source_info(condition: Condition, provision: SkillProvision) -> SkillSourceInfo | None:
    """Kept on the result only for conditions whose skills were produced for the trial."""
    if condition.source is None:
        return None
    return SkillSourceInfo(usage=provision.usage, record=provision.record)


def _keep_traceback(trial_dir: Path) -> None:
    """An internal error keeps its traceback next to the trial's logs (error.log)."""
    with (trial_dir / "error.log").open("a") as fh:
        fh.write(traceback.format_exc())


class _OverBudget(Exception):
    """The trial used more tokens than its budget (`--max-trial-tokens`)."""


def _check_token_budget(trial_dir: Path, outcome: AgentOutcome, budget: object) -> None:
    if not isinstance(budget, int) or isinstance(budget, bool):
        return
    used = _usage(trial_dir, outcome)
    tokens = used.input_tokens + used.output_tokens
    if tokens > budget:
        raise _OverBudget(f"used {tokens} tokens (in + out), over the trial's budget of {budget}")


class _TrialFailure(Exception):
    def __init__(self, category: str, message: str, phase: Any) -> None:
        super().__init__(message)
        self.category, self.message, self.phase = category, message, phase


def _failure_mode(outcome: AgentOutcome, produced_output: bool) -> FailureMode:
    if outcome.timed_out:
        return "timeout"
    if outcome.exit_code not in (0, None):
        return "execution_error"
    if not produced_output:
        return "no_output"
    return "verification_failed"


def _usage(trial_dir: Path, outcome: AgentOutcome) -> Usage:
    """The gateway's record is the accounting of record; the harness's own numbers are the fallback."""
    log_path = trial_dir / "gateway.jsonl"
    if log_path.is_file():
        from skillworks.gateway import usage_totals

        totals: Usage = usage_totals(log_path)
        return totals
    return outcome.usage or Usage()


def _skill_use(
    outcome: AgentOutcome,
    skills: list[SkillPackage],
    skills_dir: str | None,
    trial_dir: Path,
    handles: list[SkillHandleRef],
) -> SkillUse:
    """Skill use is read from the trial's ATIF trajectory, the same way for every agent. What the harness
    itself reported listing (e.g. Claude Code's init event) is taken as `listed` when it gave one; skills the
    source gave as runtime tools (`handles`, compiled skills) count through calls of those tools."""
    path = outcome.trajectory_path or trial_dir / "trajectory.json"
    if not path.is_file():
        return outcome.skill_use or SkillUse()
    from skillworks.trajectory import StagedSkillRef, TrajectoryError, detect_skill_use, validate_trajectory

    staged = [StagedSkillRef.from_package(s, f"{skills_dir}/{s.name}" if skills_dir else None) for s in skills]
    listed = outcome.skill_use.listed if outcome.skill_use is not None else None
    try:
        return detect_skill_use(validate_trajectory(path), staged, skills_dir, listed, handles=handles)
    except TrajectoryError as exc:  # a bad trajectory must not cost the trial its reward
        log.warning("skill use of %s unknown: %s", trial_dir.name, exc)
        with (trial_dir / "error.log").open("a") as fh:
            fh.write(f"skill-use detection skipped: {exc}\n")
        return outcome.skill_use or SkillUse()
