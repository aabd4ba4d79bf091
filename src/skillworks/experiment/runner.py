"""The scheduler: runs a plan of trials concurrently (asyncio), appends each result as it finishes,
resumes from results.jsonl, and stops cleanly on Ctrl-C / SIGTERM (running trials are cancelled,
their sandboxes torn down, recorded results kept)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from skillworks.agents.base import Agent
from skillworks.agents.registry import create_agent
from skillworks.errors import UserError
from skillworks.experiment.campaign import (
    CampaignGate,
    CampaignLimits,
    not_run_trials,
    pair_order,
    select_retries,
    set_aside_attempt,
    write_campaign,
)
from skillworks.experiment.executor import Executor, LocalExecutor, PostTrial, RunContext, TrialRunner
from skillworks.experiment.plan import TrialSpec, plan_trials
from skillworks.experiment.prebuild import image_jobs
from skillworks.experiment.progress import RunProgress
from skillworks.experiment.spec import ExperimentSpec
from skillworks.experiment.store import RunStore
from skillworks.provision.conditions import SkillSet, get_condition
from skillworks.results import TrialResult
from skillworks.tasks.model import Task

if TYPE_CHECKING:
    from skillworks.gateway import Gateway
    from skillworks.report.trial_pages import TrialPageWriter

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    run_dir: Path
    planned: int
    skipped: int
    results: list[TrialResult] = field(default_factory=list)
    retried: int = 0  # errored trials run again this session (--retry-errors)
    not_run: list[TrialSpec] = field(default_factory=list)  # trials of pairs a spend cap kept from starting
    stopped: str | None = None  # why the session stopped early (circuit breaker, spend cap): resumable


def _check_resume_compatible(old: ExperimentSpec, new: ExperimentSpec, store: RunStore) -> None:
    old_tasks = {t.id: t.content_hash for t in old.tasks}
    new_tasks = {t.id: t.content_hash for t in new.tasks}
    changed = sorted(t for t in new_tasks if t in old_tasks and old_tasks[t] != new_tasks[t])
    if changed:
        raise UserError(
            f"cannot resume: task content changed since the run started: {', '.join(changed)}", store.experiment_path
        )
    if [a.label for a in old.agents] != [a.label for a in new.agents] or old.trials != new.trials:
        raise UserError("cannot resume: agents or trial count differ from the original run", store.experiment_path)


def _set_aside_interrupted(store: RunStore, plan: list[TrialSpec], recorded: set[str]) -> None:
    """A trial dir without a recorded result is the remains of an interrupted trial: keep it, renamed."""
    for spec in plan:
        path = store.trial_dir(spec.trial_id)
        if spec.trial_id not in recorded and path.exists():
            n = 1
            while path.with_name(f"{path.name}.interrupted-{n}").exists():
                n += 1
            path.rename(path.with_name(f"{path.name}.interrupted-{n}"))


def _make_gateways(spec: ExperimentSpec, agents: dict[str, Agent], cache_dir: Path | None = None) -> dict[str, Gateway]:
    """One gateway per distinct (model, api_base) among the agents that need a model, by agent label.
    Built (not started) before the run directory exists: a bad model (e.g. a missing `scripted/`
    script) is a one-line error that leaves nothing behind."""
    needed = [cfg for cfg in spec.agents if agents[cfg.label].needs_model]
    if not needed:
        return {}
    from skillworks.gateway import Gateway

    by_key: dict[tuple[str, str | None], Gateway] = {}
    for cfg in needed:
        if cfg.model is None:
            raise UserError(f"agent {cfg.name} needs a model: pass --model provider/name")
        key = (cfg.model, cfg.api_base)
        if key not in by_key:
            by_key[key] = Gateway(model=cfg.model, api_base=cfg.api_base, cache_dir=cache_dir, **gateway_options(spec))
    return {cfg.label: by_key[(cfg.model or "", cfg.api_base)] for cfg in needed}


def gateway_options(spec: ExperimentSpec) -> dict[str, Any]:
    """What the plan says about every gateway of the run (also the Ray nodes' gateways): the per-trial token
    budget, what one model call may ask for, whether answers are recorded in full, and, for a replay, the
    recorded run that answers."""
    from skillworks.gateway import CallLimits

    replay_of = spec.extra.get("replay_of")
    return {
        "trial_token_budget": spec.extra.get("trial_token_budget"),
        "call_limits": CallLimits.from_plan(spec.extra),
        "record_bodies": bool(spec.extra.get("record_bodies", True)),
        "replay_from": Path(replay_of) / "trials" if isinstance(replay_of, str) else None,
    }


async def run_experiment(
    spec: ExperimentSpec,
    tasks: list[Task],
    run_dir: Path,
    *,
    skill_set: SkillSet | None = None,
    resume: bool = False,
    console: Console | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    keep_workspace: bool = False,
    post_trial: PostTrial | None = None,
    executor: Executor | None = None,
    limits: CampaignLimits | None = None,
    response_cache: Path | None = None,
    prebuild: bool = True,
) -> RunOutcome:
    """Run (or resume) the plan of `spec`. `keep_workspace` downloads each trial's final workspace into its
    trial dir; `post_trial` grades each result before it is recorded (see TrialEnvironment); `executor`
    says where trials run (default: this process); `limits` what the session may do unattended (retry
    errored trials, stop on a run of errors or a spend cap; see experiment/campaign.py); `response_cache` a
    directory of model responses shared across runs (gateway/response_cache.py; this process's gateways);
    `prebuild` False turns off the image phase of a container run with a registry (experiment/prebuild.py)."""
    # a library caller (eval, oracle check) that gives no limits gets no breaker: it would not report a stop
    limits = limits or CampaignLimits(max_consecutive_errors=0)
    store = RunStore(run_dir)
    if resume:
        _check_resume_compatible(store.read_spec(), spec, store)
        store.repair_torn_tail()
    elif store.experiment_path.exists():
        raise UserError("run directory already exists; pass --resume to continue it", run_dir)
    for name in spec.conditions:  # every condition must be able to pick its skills for every task
        condition = get_condition(name)
        for task in tasks:
            condition.select(task, skill_set or SkillSet())
    from skillworks.sandbox import preflight_sandbox

    if any(cfg.name == "oracle" for cfg in spec.agents):  # only the oracle agent needs a task's solution
        for task in tasks:
            if task.oracle is None:
                why = task.extra.get("oracle_problem") or "it has no oracle/solution directory with solve.sh"
                raise UserError(f"the oracle agent cannot run task {task.id}: {why}", task.root)
    for task in tasks:  # e.g. bubblewrap missing, or a Dockerfile task on `local`: one line, before any trial
        preflight_sandbox(spec.env, task, **spec.env_options)
    if not resume:  # what this host's sandbox will not enforce, said per run (and kept in experiment.json)
        from skillworks.sandbox import sandbox_warnings

        spec.warnings = [*spec.warnings, *sandbox_warnings(spec.env, tasks, **spec.env_options)]
        for warning in spec.warnings:
            (console or Console(stderr=True)).print(f"[bold yellow]warning:[/] {warning}", highlight=False)
    agents = {
        cfg.label: create_agent(cfg.name, model=cfg.model, **{k: v for k, v in cfg.options.items() if k != "label"})
        for cfg in spec.agents
    }
    for cfg in spec.agents:
        if agents[cfg.label].needs_model and cfg.model is None:
            raise UserError(f"agent {cfg.name} needs a model: pass --model provider/name (or scripted/<script>)")
        preflight = getattr(agents[cfg.label], "preflight", None)  # optional Agent hook
        if preflight is not None:
            await preflight()  # e.g. a harness that is not installed fails here, before any trial
        check_tools = getattr(agents[cfg.label], "check_tools", None)  # optional Agent hook
        kinds = {kind for name in spec.conditions for kind in get_condition(name).tools}
        if check_tools is not None and kinds:
            check_tools(kinds)  # e.g. a harness that cannot be given compiled skills
        cfg.version = agents[cfg.label].version
        locked = getattr(agents[cfg.label], "locked_options", None)  # optional Agent hook
        if locked is not None:  # e.g. harness_skills, recorded in experiment.json even when left at its default
            cfg.options = {**locked(), **cfg.options}
    gateways_by_label = _make_gateways(spec, agents, response_cache)
    with store.exclusive():  # one writer per run directory
        store.write_spec(spec)

        plan = plan_trials(tasks, spec.conditions, spec.agents, spec.trials, spec.seed)
        previous = store.read_results()
        recorded = {r.trial_id for r in previous}
        _set_aside_interrupted(store, plan, recorded)
        retries = select_retries(previous, limits.retry_errors)
        todo = pair_order([t for t in plan if t.trial_id not in recorded or t.trial_id in retries])
        outcome = RunOutcome(run_dir=run_dir, planned=len(plan), skipped=len(plan) - len(todo))
        gate = CampaignGate.for_session(limits, todo, previous)

        run = RunContext(
            spec=spec,
            run_dir=run_dir,
            tasks=tasks,
            agents=agents,
            gateways=gateways_by_label,
            skill_set=skill_set or SkillSet(),
            keep_workspace=keep_workspace,
            post_trial=post_trial,
            images=image_jobs(todo, spec, enabled=prebuild),
            say=lambda line: (console or Console(stderr=True)).print(line, highlight=False, soft_wrap=True),
        )
        pages = _trial_page_writer(spec, store, recorded)

        def record(result: TrialResult) -> None:
            if pages is not None:
                try:
                    pages.add(result)
                except Exception:  # a page is a view of the result: never the end of the run
                    log.exception("writing the trajectory page of %s failed", result.trial_id)
            if on_result is not None:
                on_result(result)

        async with (executor or LocalExecutor()).session(run) as run_one:
            try:
                await _schedule(todo, run_one, store, spec.concurrency, outcome, console, record, gate, retries)
            finally:
                outcome.stopped = gate.stopped
                outcome.not_run = not_run_trials(todo, gate, {r.trial_id for r in outcome.results})
                write_campaign(run_dir, stopped=gate.stopped, not_run=outcome.not_run, retried=outcome.retried)
    return outcome


def _trial_page_writer(spec: ExperimentSpec, store: RunStore, recorded: set[str]) -> TrialPageWriter | None:
    """Trajectory pages are written as trials are recorded: the report after the run renders only what
    changed (a run of thousands of trials would otherwise wait for thousands of pages at its end)."""
    from skillworks.report.trial_pages import TrialPageWriter
    from skillworks.report.write import FILE_NAMES, baselines_of, is_eval_run

    run_dir = store.run_dir
    reports = [run_dir / FILE_NAMES["html"]]
    if is_eval_run(run_dir):
        reports.append(run_dir / "eval_report.html")
    try:
        return TrialPageWriter(
            run_dir,
            baselines=baselines_of(spec.conditions, run_dir),
            reports=reports,
            recorded=store.read_results() if recorded else [],
        )
    except Exception:  # e.g. a results.jsonl the report cannot read: the report step will say so
        log.exception("cannot write trajectory pages during the run")
        return None


async def _schedule(
    todo: list[TrialSpec],
    run_one: TrialRunner,
    store: RunStore,
    concurrency: int,
    outcome: RunOutcome,
    console: Console | None,
    on_result: Callable[[TrialResult], None] | None,
    gate: CampaignGate | None = None,
    retries: dict[str, int] | None = None,
) -> None:
    """Run `todo` with at most `concurrency` trials at once. On cancellation (Ctrl-C, SIGTERM) every
    running trial is cancelled and torn down before the CancelledError propagates. `gate` may keep a
    trial from starting (a spend cap) or stop the run (the circuit breaker: what runs is cancelled);
    `retries` maps the errored trials run again to the attempt they supersede."""
    semaphore = asyncio.Semaphore(max(1, concurrency))
    progress = RunProgress(console, len(todo))
    gate = gate or CampaignGate.for_session(CampaignLimits(max_consecutive_errors=0), todo, [])
    retries = retries or {}
    jobs: list[asyncio.Task[None]] = []

    async def one(spec: TrialSpec) -> None:
        async with semaphore:
            if not gate.admit(spec):
                return
            progress.started()
            result: TrialResult | None = None
            superseded = retries.get(spec.trial_id)
            try:
                if superseded is not None:
                    set_aside_attempt(store.trials_dir, spec.trial_id, superseded)
                result = await run_one(spec)
                if superseded is not None:
                    result = result.model_copy(update={"attempt": superseded + result.attempt})
                    outcome.retried += 1
                store.append(result)
                outcome.results.append(result)
            finally:
                progress.finished(result)
            if on_result is not None:
                on_result(result)
            if gate.finished(result):  # the breaker: nothing new starts, what runs is cancelled
                for job in jobs:
                    if job is not asyncio.current_task():
                        job.cancel()

    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        if main is not None:
            loop.add_signal_handler(signal.SIGTERM, main.cancel)
    with progress:
        jobs.extend(asyncio.create_task(one(spec)) for spec in todo)
        try:
            done = await asyncio.gather(*jobs, return_exceptions=True)
            failures = [d for d in done if isinstance(d, BaseException) and not isinstance(d, asyncio.CancelledError)]
            if failures:
                raise failures[0]
        except asyncio.CancelledError:
            for job in jobs:
                job.cancel()
            # let every cancelled trial run its teardown (sandbox stop) before propagating
            await asyncio.gather(*jobs, return_exceptions=True)
            raise
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGTERM)
