"""`skillworks eval SKILL`: ACES live evaluation — the skill's evals.json cases run with the skill and with
it withheld (support and decoy skills fixed), six metrics per trial, Skill Lift in the eval report."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from skillworks._aio import run_async
from skillworks.errors import UserError

_CASE_FILES = ("own", "all")


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def parse_counts(text: str | None) -> list[int] | None:
    if text is None:
        return None
    counts: list[int] = []
    for part in _split([text]):
        if not part.isdigit():
            raise UserError(f"--decoys-count expects comma-separated non-negative integers, got {part!r}")
        counts.append(int(part))
    if not counts:
        raise UserError("--decoys-count needs at least one count, e.g. 1,5,10")
    return list(dict.fromkeys(counts))


def parse_weights(items: list[str] | None) -> dict[str, float]:
    weights: dict[str, float] = {}
    for item in _split(items):
        name, sep, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not sep or not name or weight < 0:
            raise UserError(f"--weight expects METRIC=NON-NEGATIVE-NUMBER, got {item!r}")
        weights[name.strip()] = weight
    from skillworks.grading.metrics.context import METRIC_NAMES

    unknown = [n for n in weights if n not in METRIC_NAMES]
    if unknown:
        raise UserError(f"--weight: unknown metric {unknown[0]!r} (metrics: {', '.join(METRIC_NAMES)})")
    return weights


def register(app: typer.Typer) -> None:
    _register_report(app)

    @app.command("eval")
    def eval_(
        skill: Annotated[Path | None, typer.Argument(help="skill directory (with evals/evals.json)")] = None,
        support: Annotated[
            list[Path] | None, typer.Option("--support", help="support skill dir, visible in both conditions")
        ] = None,
        decoys: Annotated[
            list[Path] | None, typer.Option("--decoys", help="decoy skill dir, visible in both conditions")
        ] = None,
        tasks: Annotated[
            list[Path] | None, typer.Option("--tasks", help="extra task dirs (task.md / Harbor) to run as cases")
        ] = None,
        workspace: Annotated[
            str,
            typer.Option(
                help="ACES workspace: which skills a trial sees: isolation (the target alone) | group (the target "
                "and its sibling skills, for routing). Case input files are --case-files (this option's old meaning)"
            ),
        ] = "isolation",
        sibling: Annotated[
            list[Path] | None,
            typer.Option("--sibling", help="group: a sibling skill dir (default: the other skills beside the target)"),
        ] = None,
        case_files: Annotated[
            str, typer.Option(help="input files of evals.json cases: own (each case its own) | all (every case's)")
        ] = "own",
        agent: Annotated[
            list[str] | None, typer.Option("--agent", "-a", help="agent(s), e.g. builtin (several: skill×agent cells)")
        ] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="provider/name, or scripted/<script>")] = None,
        api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server, e.g. Ollama or vLLM")] = None,
        judge_model: Annotated[
            str | None, typer.Option(help="LLM judge model (default: --model unless it is scripted)")
        ] = None,
        judge_api_base: Annotated[
            str | None, typer.Option(help="OpenAI-compatible server of --judge-model (default: none)")
        ] = None,
        trials: Annotated[int, typer.Option(min=1, help="attempts per case and condition (pass@k up to k)")] = 1,
        grader: Annotated[list[str] | None, typer.Option("--grader", help="custom grader module:function")] = None,
        entry_point_graders: Annotated[
            bool, typer.Option(help="also run graders registered under the skillworks.graders entry point")
        ] = True,
        decoys_count: Annotated[
            str | None, typer.Option("--decoys-count", help="stress test: decoys visible per run, e.g. 1,5,10")
        ] = None,
        targets: Annotated[Path | None, typer.Option(help="product mode: YAML file of targets")] = None,
        weight: Annotated[list[str] | None, typer.Option("--weight", help="metric weight, e.g. accuracy=2")] = None,
        judge_context: Annotated[
            str, typer.Option(help="what the accuracy judge sees: trajectory (as ACES) or answer")
        ] = "trajectory",
        goal_mode: Annotated[
            str, typer.Option(help="goal accuracy: match (deterministic) or llm (the judge compares)")
        ] = "match",
        pass_threshold: Annotated[
            float, typer.Option(min=0.0, max=1.0, help="overall score counted as a success for pass@k")
        ] = 1.0,
        out: Annotated[Path, typer.Option(help="directory for run directories")] = Path("runs"),
        run_id: Annotated[str | None, typer.Option(help="name of the run directory")] = None,
        concurrency: Annotated[int, typer.Option(min=1, help="trials running at once")] = 2,
        seed: Annotated[int, typer.Option(help="base seed")] = 0,
        env: Annotated[str, typer.Option(help="sandbox backend: local (bubblewrap) or container")] = "local",
        dry_run: Annotated[bool, typer.Option(help="load and check everything, list the cases, run nothing")] = False,
        resume: Annotated[
            Path | None, typer.Option(help="continue an interrupted eval run directory (its eval_plan.json)")
        ] = None,
    ) -> None:
        """Evaluate a skill on its evals.json cases: with-skill vs target-withheld, six metrics, Skill Lift."""
        from rich.console import Console

        from skillworks.evaluate import EvalOptions, resume_eval, run_eval
        from skillworks.evaluate.siblings import WORKSPACE_MODES
        from skillworks.tasks.evals_json import EvalsError

        console = Console(stderr=True)
        if resume is not None:
            if skill is not None:
                raise UserError("--resume takes its options from the run's eval_plan.json: give no SKILL")
            outcome = run_async(resume_eval(resume, console=console))
            _print_outcome(outcome)
            return
        if skill is None:
            raise UserError("give a SKILL directory (or --resume RUN_DIR)")
        if workspace not in WORKSPACE_MODES:
            raise UserError(f"unknown --workspace {workspace!r} (allowed: {', '.join(WORKSPACE_MODES)})")
        if case_files not in _CASE_FILES:
            raise UserError(f"unknown --case-files {case_files!r} (allowed: {', '.join(_CASE_FILES)})")
        if judge_context not in ("trajectory", "answer"):
            raise UserError(f"unknown --judge-context {judge_context!r} (allowed: trajectory, answer)")
        if goal_mode not in ("match", "llm"):
            raise UserError(f"unknown --goal-mode {goal_mode!r} (allowed: match, llm)")
        options = EvalOptions(
            skill=skill,
            support=list(support or []),
            decoys=list(decoys or []),
            tasks=list(tasks or []),
            workspace="group" if workspace == "group" else "isolation",
            siblings=list(sibling or []),
            case_files="all" if case_files == "all" else "own",
            agents=_split(agent) or ["builtin"],
            model=model,
            api_base=api_base,
            judge_model=judge_model,
            judge_api_base=judge_api_base,
            trials=trials,
            graders=_split(grader),
            entry_point_graders=entry_point_graders,
            decoy_counts=parse_counts(decoys_count),
            targets=targets,
            weights=parse_weights(weight),
            judge_context=judge_context,
            goal_mode=goal_mode,
            pass_threshold=pass_threshold,
            out=out,
            run_id=run_id,
            concurrency=concurrency,
            seed=seed,
            env=env,
        )
        try:
            if dry_run:
                _dry_run(options)
                return
            outcome = run_async(run_eval(options, console=console))
        except EvalsError as exc:
            for problem in exc.problems:
                typer.echo(f"error: {problem}", err=True)
            raise typer.Exit(2) from None
        except (KeyboardInterrupt, asyncio.CancelledError):
            console.print("[yellow]interrupted[/]: recorded results are kept in the run directory")
            raise typer.Exit(130) from None
        _print_outcome(outcome)


def _print_outcome(outcome: object) -> None:
    from skillworks.evaluate import EvalOutcome

    assert isinstance(outcome, EvalOutcome)
    trials_run = sum(len(r.outcome.results) for r in outcome.runs)
    skipped = sum(r.outcome.skipped for r in outcome.runs)
    errors = sum(1 for r in outcome.runs for t in r.outcome.results if t.outcome == "error")
    typer.echo(
        f"ran {trials_run} trial(s) ({skipped} already recorded), {errors} error(s); run directory: {outcome.run_dir}"
    )
    for name, path in sorted(outcome.reports.items()):
        typer.echo(f"  {name}: {path}")
    _print_headline(outcome.run_dir, [r.run_dir for r in outcome.runs])


def _register_report(app: typer.Typer) -> None:
    @app.command("eval-report")
    def eval_report(
        run_dirs: Annotated[list[Path], typer.Argument(help="eval run directory (several: combined)")],
        out: Annotated[Path | None, typer.Option(help="where to write (needed to combine several runs)")] = None,
    ) -> None:
        """Regenerate eval_summary.json, eval_report.md and eval_report.html; several runs (e.g. one per skill)
        are combined, so the cluster bootstrap over skills and skill×agent cells has clusters to resample."""
        from skillworks.report.eval_report import write_eval_report

        written = write_eval_report(run_dirs if len(run_dirs) > 1 else run_dirs[0], out)
        for path in written.values():
            typer.echo(f"wrote {path}")
        _print_headline(out or run_dirs[0], [out or run_dirs[0]])


def _dry_run(options: object) -> None:
    from skillworks.evaluate.run import EvalOptions, _load_tasks
    from skillworks.evaluate.siblings import find_siblings
    from skillworks.skills.package import load_skill

    assert isinstance(options, EvalOptions)
    target = load_skill(options.skill)
    tasks = _load_tasks(options, target)
    others = [load_skill(path) for path in [*options.support, *options.decoys]]
    siblings = find_siblings(target, options.workspace, options.siblings, {s.name for s in others})
    typer.echo(f"{target.name}: {len(tasks)} case(s)")
    typer.echo(
        f"workspace {options.workspace}: "
        + (f"target + siblings {', '.join(s.name for s in siblings)}" if siblings else "the target alone")
    )
    for task in tasks:
        ev = task.evaluation
        extra = f" [{ev.dialect}; {len(ev.expected_behavior)} assertion(s); {len(ev.files)} file(s)]" if ev else ""
        typer.echo(f"  {task.id}{extra}")


def _print_headline(root: Path, run_dirs: list[Path]) -> None:
    from skillworks.report.eval_html import lift_label
    from skillworks.report.eval_report import SUMMARY_FILE, read_eval_summary

    for run_dir in run_dirs:
        summary = read_eval_summary(run_dir / SUMMARY_FILE)
        for comparison in summary.comparisons:
            overall = next((m for m in comparison.metrics if m.metric == "overall"), None)
            if overall is None or overall.lift is None:
                continue
            label = f"{run_dir.name}: " if run_dir != root else ""
            typer.echo(
                f"{label}Skill Lift ({comparison.treatment} vs {comparison.baseline}): {lift_label(overall)}; "
                f"{len(comparison.negative_cases)} negative case(s)"
            )
