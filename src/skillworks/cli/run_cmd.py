"""`skillworks run`: a paired benchmark of tasks × conditions × agents × trials."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from skillworks._aio import run_async
from skillworks._printable import printable
from skillworks.cli._container_flags import (
    CaBundle,
    ContainerBuildFlags,
    ContainerCli,
    ContainerGlobalFlags,
    ContainerRunFlags,
    ForceBuild,
    ImageMap,
    ImageRegistry,
    ImageRegistryTlsVerify,
    Prebuild,
    container_env_options,
)
from skillworks.cli.run_checks import (
    check_fail_on,
    check_models_configured,
    plan_lines,
    results_exit_code,
    results_exit_reason,
)
from skillworks.errors import TaskError, UserError

if TYPE_CHECKING:
    from skillworks.experiment.campaign import CampaignLimits
    from skillworks.experiment.executor import Executor
    from skillworks.experiment.runner import RunOutcome


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def parse_agent_options(items: list[str] | None) -> dict[str, Any]:
    """`KEY=VALUE` pairs; values are read as YAML scalars (20 -> int, 0.2 -> float, true -> bool)."""
    import yaml

    options: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--agent-option expects KEY=VALUE, got {item!r}")
        options[key.strip()] = yaml.safe_load(value) if value else ""
    return options


def _self_generated_options(creator_skill: str, reuse: bool, agents: list[str]) -> dict[str, Any]:
    """The self-generated condition's record in experiment.json; a bad --creator-skill fails here."""
    from skillworks.provision.selfgen.source import BUNDLED_CREATORS, SelfGenOptions

    if creator_skill == "bundled":
        lacking = [a for a in agents if a not in BUNDLED_CREATORS]
        if lacking:
            raise UserError(
                f"--creator-skill bundled: agent {lacking[0]} bundles no skill creator "
                f"(known: {', '.join(sorted(BUNDLED_CREATORS))})"
            )
    elif creator_skill != "default":
        creator_skill = str(Path(creator_skill).resolve())
    options = SelfGenOptions(reuse=reuse, creator_skill=creator_skill)
    return options.to_extra()  # loads (and so validates) the authoring skill


def _executor(name: str, address: str | None, retries: int, cpus_per_trial: float | None) -> Executor:
    from skillworks.experiment import LocalExecutor

    if name == "local":
        if address is not None:
            raise UserError("--ray-address needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        from skillworks.experiment.ray_executor import RayExecutor

        return RayExecutor(address, retries=retries, cpus_per_trial=cpus_per_trial)
    raise UserError(f"unknown --executor {name!r}: use local or ray")


def _from_command_line(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)  # an enum of typer's own click copy: compare by name
    return source is not None and source.name == "COMMANDLINE"


def _given_on_command_line(ctx: typer.Context, keep: set[str]) -> list[str]:
    """The flags (and arguments) the user typed, except those in `keep`, as they are spelled."""
    given: list[str] = []
    for param in ctx.command.params:
        if param.name is None or param.name in keep or not _from_command_line(ctx, param.name):
            continue
        given.append(param.opts[0] if param.opts[0].startswith("-") else param.name.upper())
    return given


_EXECUTOR_FLAGS = {"executor", "ray_address", "ray_retries", "ray_cpus_per_trial", "submit"}
# what a session may do unattended: not part of the plan, so each may change on --resume
_CAMPAIGN_FLAGS = {"retry_errors", "max_consecutive_errors", "max_cost", "max_tokens", "cache"}

RetryErrors = Annotated[
    str | None,
    typer.Option(
        "--retry-errors",
        metavar="all|CATEGORY,...",
        help="with --resume: run errored trials again (all, or only these error categories); "
        "the earlier attempt is kept as trials/<id>__a<n>",
    ),
]
MaxConsecutiveErrors = Annotated[
    int,
    typer.Option(min=0, help="circuit breaker: stop after this many consecutive errors of one category (0: off)"),
]
MaxCost = Annotated[
    float | None, typer.Option(min=0, help="stop starting new task pairs once the run could spend more USD")
]
MaxTokens = Annotated[
    int | None, typer.Option(min=0, help="stop starting new task pairs once the run could use more tokens")
]
ResponseCacheDir = Annotated[
    Path | None,
    typer.Option("--cache", help="serve identical model calls from DIR across runs (and store new answers there)"),
]
Replay = Annotated[
    Path | None,
    typer.Option(
        "--replay",
        metavar="RUN_DIR",
        help="run a recorded run's trials again with every model call answered from its recording "
        "(no provider, no cost); writes a new run dir with replay.json",
    ),
]
RecordBodies = Annotated[
    bool,
    typer.Option(
        "--record-bodies/--no-record-bodies",
        help="keep every model answer in the trials' gateway.jsonl (what --replay serves); off for privacy",
    ),
]
MaxTrialTokens = Annotated[
    int | None,
    typer.Option(min=1, help="a trial using more tokens (in + out) fails with failure mode token_budget"),
]
MaxOutputTokens = Annotated[
    int | None,
    typer.Option(min=1, help="the most output tokens one model call may ask for: the gateway lowers (or sets) it"),
]
MaxReasoningEffort = Annotated[
    str | None,
    typer.Option(
        metavar="none|minimal|low|medium|high|xhigh|max",
        help="the most reasoning effort one model call may ask for: the gateway lowers a higher one",
    ),
]


def _call_limits(max_output_tokens: int | None, max_reasoning_effort: str | None) -> dict[str, Any] | None:
    """The per-call limits for the plan (None when neither is given); a bad effort name is a one-line error."""
    from skillworks.gateway.limits import CallLimits

    if max_output_tokens is None and max_reasoning_effort is None:
        return None
    try:
        return CallLimits(max_output_tokens, max_reasoning_effort).to_plan()
    except ValueError as exc:
        raise UserError(f"--max-reasoning-effort: {exc}") from None


def _campaign_limits(
    retry_errors: str | None, max_consecutive_errors: int, max_cost: float | None, max_tokens: int | None
) -> CampaignLimits:
    from skillworks.experiment.campaign import CampaignLimits

    categories: frozenset[str] | None = None
    if retry_errors is not None:
        names = _split([retry_errors])
        categories = frozenset() if names in ([], ["all"]) else frozenset(names)
    return CampaignLimits(
        retry_errors=categories,
        max_consecutive_errors=max_consecutive_errors,
        max_cost_usd=max_cost,
        max_tokens=max_tokens,
    )


def _report_stop(console: Any, outcome: RunOutcome, run_dir: Path) -> None:
    """A session stopped early (circuit breaker, spend cap): one line, then exit 3 (resumable)."""
    if outcome.not_run:
        console.print(
            f"{len(outcome.not_run)} trial(s) not run (whole pairs; left out of the frame)",
            markup=False,
            highlight=False,
        )
    if outcome.stopped is not None:
        console.print(
            f"stopped: {outcome.stopped}; continue with --resume {run_dir}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(3)


def _register_regrade(app: typer.Typer) -> None:
    @app.command("regrade")
    def regrade(run_dir: Annotated[Path, typer.Argument(help="a run directory made with --keep-workspace")]) -> None:
        """Run only the verifiers again on the saved workspaces of a run (no agent, no model call)."""
        from rich.console import Console

        from skillworks.experiment.regrade import regrade_run
        from skillworks.report import write_reports

        console = Console(stderr=True)
        results, skipped = run_async(regrade_run(run_dir))
        if not results:
            raise UserError("no trial to regrade: none saved its workspace (run with --keep-workspace)", run_dir)
        write_reports(run_dir)
        solved = sum(1 for r in results if r.outcome == "solved")
        console.print(
            f"regraded {len(results)} trial(s) ({solved} solved; {skipped} without a saved workspace or verifier)",
            markup=False,
            highlight=False,
        )


def _exit_on_results(run_dir: Path, fail_on: float | None, console: Any) -> None:
    """Exit 1 (with the reason) when the run's recorded results fail it; see ``run_checks``."""
    from skillworks.experiment import RunStore
    from skillworks.stats import latest_attempts

    results = latest_attempts(RunStore(run_dir).read_results())
    reason = results_exit_reason(results, fail_on)
    if reason is not None:
        console.print(f"failed: {reason}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(results_exit_code(results, fail_on))


def _print_plan(spec: Any, console: Any, pilot: Path | None) -> None:
    from skillworks.experiment.cost_estimate import estimate_lines

    estimate = estimate_lines(
        len(spec.tasks),
        spec.conditions,
        [(a.label, a.model) for a in spec.agents],
        spec.trials,
        pilot=pilot,
        trial_token_budget=spec.extra.get("trial_token_budget"),
    )
    for line in plan_lines(len(spec.tasks), spec.conditions, [a.label for a in spec.agents], spec.trials, estimate):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    _register_regrade(app)

    @app.command("run")
    def run(
        ctx: typer.Context,
        tasks: Annotated[list[Path] | None, typer.Argument(help="task dirs or trees of task dirs")] = None,
        agent: Annotated[
            list[str] | None, typer.Option("--agent", "-a", help="agent(s), e.g. oracle, nop, builtin")
        ] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="provider/name, or scripted/<script>")] = None,
        api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server, e.g. Ollama or vLLM")] = None,
        agent_option: Annotated[
            list[str] | None, typer.Option(help="KEY=VALUE passed to the agent(s), e.g. max_turns=20 (repeat)")
        ] = None,
        conditions: Annotated[str, typer.Option(help="comma-separated conditions")] = "none,curated",
        trials: Annotated[int, typer.Option(min=1, help="trials per task × condition × agent")] = 1,
        concurrency: Annotated[int, typer.Option(min=1, help="trials running at once")] = 2,
        out: Annotated[Path, typer.Option(help="directory for run directories")] = Path("runs"),
        run_id: Annotated[str | None, typer.Option(help="name of the run directory")] = None,
        resume: Annotated[Path | None, typer.Option(help="continue an interrupted run directory")] = None,
        env: Annotated[str, typer.Option(help="sandbox backend: local (bubblewrap) or container")] = "local",
        seed: Annotated[int, typer.Option(help="base seed; per-trial seeds derive from it")] = 0,
        container_cli: ContainerCli = None,
        container_global_flag: ContainerGlobalFlags = None,
        container_run_flag: ContainerRunFlags = None,
        container_build_flag: ContainerBuildFlags = None,
        image_map: ImageMap = None,
        ca_bundle: CaBundle = None,
        force_build: ForceBuild = False,
        image_registry: ImageRegistry = None,
        image_registry_tls_verify: ImageRegistryTlsVerify = None,
        prebuild: Prebuild = True,
        creator_skill: Annotated[
            str,
            typer.Option(
                help="self-generated: the authoring skill the creator sees: 'default' (skillworks' own), "
                "'bundled' (the harness's own skill creator) or a skill DIR"
            ),
        ] = "default",
        skills_from: Annotated[
            Path | None,
            typer.Option(
                help="condition 'evolved': the skill library to stage, e.g. runs/<id>/families/<f>/library/v<k>"
            ),
        ] = None,
        selfgen_reuse: Annotated[
            bool, typer.Option(help="self-generated: generate once per (task, agent) and reuse across trials")
        ] = False,
        executor: Annotated[
            str, typer.Option(help="where trials run: local (this process) or ray (a Ray cluster)")
        ] = "local",
        ray_address: Annotated[
            str | None,
            typer.Option(help="Ray cluster: auto (this machine's) or ray://host:10001; default: start one here"),
        ] = None,
        ray_retries: Annotated[
            int, typer.Option(min=0, help="retries of a trial whose Ray worker or node died (on another node)")
        ] = 1,
        ray_cpus_per_trial: Annotated[
            float | None, typer.Option(min=0, help="CPUs a trial reserves on Ray (default: the task's, else 1)")
        ] = None,
        submit: Annotated[
            bool,
            typer.Option(
                help="with --executor ray: run the driver as a Ray Job on the cluster (--ray-address: its job "
                "server, http://HEAD:8265); prints the job id; --out is a path on the cluster"
            ),
        ] = False,
        retry_errors: RetryErrors = None,
        max_consecutive_errors: MaxConsecutiveErrors = 10,
        max_cost: MaxCost = None,
        max_tokens: MaxTokens = None,
        max_trial_tokens: MaxTrialTokens = None,
        max_output_tokens: MaxOutputTokens = None,
        max_reasoning_effort: MaxReasoningEffort = None,
        cache: ResponseCacheDir = None,
        replay: Replay = None,
        record_bodies: RecordBodies = True,
        keep_workspace: Annotated[
            bool, typer.Option(help="save each trial's final workspace (trials/<id>/workspace): what regrade grades")
        ] = False,
        dry_run: Annotated[
            bool,
            typer.Option(help="print the plan, its estimated calls, tokens and cost, and its minimum detectable Δ"),
        ] = False,
        pilot: Annotated[
            Path | None,
            typer.Option(help="with --dry-run: a finished run whose per-trial tokens and calls the estimate uses"),
        ] = None,
        fail_on: Annotated[
            float | None,
            typer.Option(help="exit 1 when the share of errored trials is above SHARE (e.g. 0.1), for CI"),
        ] = None,
    ) -> None:
        """Run tasks × conditions × agents × trials and write results.jsonl and the reports."""
        from rich.console import Console

        from skillworks import __version__
        from skillworks.experiment import AgentConfig, ExperimentSpec, RunStore, run_experiment
        from skillworks.experiment.spec import task_ref
        from skillworks.experiment.store import check_run_id
        from skillworks.report import read_summary, write_reports
        from skillworks.report.headline import headline_lines
        from skillworks.tasks import discover_tasks, load_task
        from skillworks.tasks.layout import dataset_root, dataset_root_of

        console = Console(stderr=True)
        limits = _campaign_limits(retry_errors, max_consecutive_errors, max_cost, max_tokens)
        call_limits = _call_limits(max_output_tokens, max_reasoning_effort)
        if retry_errors is not None and resume is None:
            raise UserError("--retry-errors needs --resume RUN_DIR (it runs a recorded run's errored trials again)")
        refused: list[str] = []
        check_fail_on(fail_on)
        if submit:
            from skillworks.cli.run_submit import submit_command

            submit_command(ctx, console)
            return
        if replay is not None:
            spec, loaded, run_dir = _replay_spec(ctx, replay, out, run_id, executor, concurrency)
        elif resume is not None:
            given = _given_on_command_line(ctx, keep={"resume", "concurrency", *_EXECUTOR_FLAGS, *_CAMPAIGN_FLAGS})
            if given:
                raise UserError(f"--resume continues the run as it was planned; drop {', '.join(given)}")
            spec = RunStore(resume).read_spec()
            run_dir = resume
            loaded = []
            for t in spec.tasks:  # links to sibling tasks: within the dir that holds the task (as planned)
                with dataset_root(Path(t.path).parent):
                    loaded.append(load_task(Path(t.path)))
            update: dict[str, Any] = {"tasks": [task_ref(t) for t in loaded]}
            if _from_command_line(ctx, "concurrency"):  # how many trials run at once may change on resume
                update["concurrency"] = concurrency
            spec = spec.model_copy(update=update)
        else:
            if not tasks:
                raise UserError("give at least one task directory (or --resume RUN_DIR)")
            agents = _split(agent) or ["oracle"]
            paths = discover_tasks(tasks)
            loaded = []
            for p in paths:  # a refused task is a task error of this run, not the end of the others
                try:
                    with dataset_root(dataset_root_of(p, tasks)):  # links to sibling tasks inside it allowed
                        loaded.append(load_task(p))
                except TaskError as exc:
                    if len(paths) == 1:
                        raise
                    refused.append(printable(str(exc), newlines=False))
            if not loaded:
                raise UserError(f"no task could be loaded ({len(refused)} refused): {refused[0]}")
            for line in refused:
                console.print(f"[red]task error[/]: {escape(line)}", soft_wrap=True)
            ids = [t.id for t in loaded]
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise UserError(f"two tasks share the id {dupes[0]!r}")
            stamp = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            rid = stamp if run_id is None else check_run_id(run_id)
            run_dir = out / rid
            options = container_env_options(
                env,
                container_cli,
                container_global_flag,
                container_run_flag,
                container_build_flag,
                image_map,
                ca_bundle,
                force_build,
                image_registry,
                image_registry_tls_verify,
            )
            spec = ExperimentSpec(
                run_id=rid,
                created_at=datetime.now(UTC),
                skillworks_version=__version__,
                tasks=[task_ref(t) for t in loaded],
                conditions=_split([conditions]),
                agents=[
                    AgentConfig(name=a, model=model, api_base=api_base, options=parse_agent_options(agent_option))
                    for a in agents
                ],
                trials=trials,
                seed=seed,
                concurrency=concurrency,
                env=env,
                env_options=options,
            )
            if "evolved" in spec.conditions and skills_from is None:
                raise UserError("condition 'evolved' needs a library: pass --skills-from DIR (a saved library version)")
            if skills_from is not None:
                if not skills_from.is_dir():
                    raise UserError("--skills-from: not a directory", skills_from)
                if (skills_from / "SKILL.md").exists():
                    raise UserError(
                        "--skills-from: this is one skill; give a library (the directory that holds skill "
                        "directories, e.g. runs/<id>/families/<family>/library/v<k>)",
                        skills_from,
                    )
                from skillworks.evolve.apply import library_skills

                if not library_skills(skills_from):
                    raise UserError("--skills-from: no skill directory (<name>/SKILL.md) in it", skills_from)
                spec.extra["skills_from"] = str(skills_from.resolve())
            if "self-generated" in spec.conditions:
                spec.extra["self_generated"] = _self_generated_options(creator_skill, selfgen_reuse, agents)
            if keep_workspace:
                spec.extra["keep_workspace"] = True
            if max_trial_tokens is not None:  # part of the plan: it decides outcomes
                spec.extra["trial_token_budget"] = max_trial_tokens
            if call_limits is not None:  # part of the plan too: what each model call may ask for
                from skillworks.gateway.limits import PLAN_KEY

                spec.extra[PLAN_KEY] = call_limits
            if not record_bodies:
                spec.extra["record_bodies"] = False
        if dry_run:
            _print_plan(spec, console, pilot)
            return
        if pilot is not None:
            raise UserError("--pilot is for --dry-run (the estimate of a planned run)")
        if replay is None:  # a replay asks no provider: it needs no key
            check_models_configured((a.model, a.api_base) for a in spec.agents)  # before any run dir exists
        # where trials run is not part of the plan: it may change on --resume
        run_executor = _executor(executor, ray_address, ray_retries, ray_cpus_per_trial)
        spec.extra["executor"] = {"name": executor}
        if executor == "ray":
            spec.extra["executor"].update(address=ray_address, retries=ray_retries, cpus_per_trial=ray_cpus_per_trial)
        try:
            outcome = run_async(
                run_experiment(
                    spec,
                    loaded,
                    run_dir,
                    resume=resume is not None,
                    console=console,
                    executor=run_executor,
                    limits=limits,
                    response_cache=cache,
                    keep_workspace=bool(spec.extra.get("keep_workspace")),
                    prebuild=prebuild,
                )
            )
        except (KeyboardInterrupt, asyncio.CancelledError):
            console.print(f"[yellow]interrupted[/]: recorded results are kept; continue with --resume {run_dir}")
            raise typer.Exit(130) from None
        except OSError as exc:  # a full disk: named by the run dir when the write did not name its file
            raise _named(exc, run_dir) from None
        try:
            files = write_reports(run_dir)
        except OSError as exc:
            raise _named(exc, run_dir) from None
        errors = sum(1 for r in outcome.results if r.outcome == "error")
        retried = f", {outcome.retried} retried" if outcome.retried else ""
        console.print(
            f"ran {len(outcome.results)} trial(s) ({outcome.skipped} already recorded{retried}, {errors} error(s)); "
            f"run directory: {run_dir}",
            soft_wrap=True,  # a path is never broken across lines
        )
        if "json" in files:
            for line in headline_lines(read_summary(files["json"])):
                console.print(line, markup=False, highlight=False, soft_wrap=True)
        for name, path in sorted(files.items()):
            console.print(f"  {name}: {path}", markup=False, highlight=False, soft_wrap=True)
        _report_stop(console, outcome, run_dir)
        if replay is not None:
            _report_replay(console, replay, run_dir, outcome)
        if refused:
            console.print(f"{len(refused)} task(s) refused (task errors above); the others ran", soft_wrap=True)
            raise typer.Exit(1)
        _exit_on_results(run_dir, fail_on, console)


def _replay_spec(
    ctx: typer.Context, source: Path, out: Path, run_id: str | None, executor: str, concurrency: int
) -> tuple[Any, list[Any], Path]:
    """The replay run's spec, tasks and run dir (`--replay RUN_DIR`): the recorded plan, a new run id."""
    from skillworks.experiment.replay import replay_plan
    from skillworks.experiment.store import check_run_id

    given = _given_on_command_line(ctx, keep={"replay", "out", "run_id", "concurrency", "fail_on", *_CAMPAIGN_FLAGS})
    given = [g for g in given if g not in ("--executor",)]
    if given:
        raise UserError(f"--replay runs the recorded run's plan; drop {', '.join(given)}")
    if executor != "local":
        raise UserError("--replay runs on this machine (its gateway reads the recording): drop --executor")
    rid = check_run_id(run_id) if run_id is not None else f"{source.resolve().name}-replay-{secrets.token_hex(3)}"
    spec, loaded = replay_plan(source, rid)
    if _from_command_line(ctx, "concurrency"):
        spec = spec.model_copy(update={"concurrency": concurrency})
    return spec, loaded, out / rid


def _report_replay(console: Any, source: Path, run_dir: Path, outcome: RunOutcome) -> None:
    """How many trials the replay reproduced; exit 1 when the recording could not answer a trial."""
    from skillworks.experiment.replay import REPLAY_ERRORS, compare_replay

    report = compare_replay(source, run_dir, outcome.results)
    console.print(
        f"replay: {report.reproduced} of {len(report.trials)} trial(s) reproduced their recorded trajectory "
        f"(session id and timestamps masked) and reward; see {run_dir / 'replay.json'}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for t in report.trials:
        if not t.reproduced:
            console.print(
                f"  {t.trial_id}: trajectory {t.trajectory}, reward {t.reward_recorded} -> {t.reward_replayed}"
                + (f" ({t.error})" if t.error else ""),
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    diverged = [r for r in outcome.results if r.error is not None and r.error.category in REPLAY_ERRORS]
    if diverged:
        assert diverged[0].error is not None
        console.print(f"failed: {diverged[0].error.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _named(exc: OSError, run_dir: Path) -> OSError:
    """`exc` naming a file: its own, else the run dir (a failed write() names none)."""
    if exc.filename is None:
        return OSError(exc.errno, exc.strerror, str(run_dir))
    return exc
