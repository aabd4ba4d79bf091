"""`skillworks trigger SKILL --queries FILE`: does the agent load the skill when it should, and leave it
alone when it should not? Each query is a trial of a real harness (or the builtin agent) with only the skill
under test (plus --sibling / --decoy skills) visible."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from skillworks._aio import run_async
from skillworks.errors import UserError

_FORMATS = ("text", "json")


def register(app: typer.Typer) -> None:
    @app.command("trigger")
    def trigger(
        skill: Annotated[Path, typer.Argument(help="the skill directory under test")],
        queries: Annotated[
            Path, typer.Option("--queries", help="query file: skill-creator eval-set JSON or skillworks YAML/JSON")
        ],
        agent: Annotated[str, typer.Option(help="builtin | claude-code | codex | gemini-cli | opencode | …")] = (
            "builtin"
        ),
        model: Annotated[str | None, typer.Option(help="provider/model, or scripted/<script> for tests")] = None,
        api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server for the model")] = None,
        trials: Annotated[int, typer.Option(min=1, help="trials per query")] = 3,
        sibling: Annotated[
            list[Path] | None, typer.Option("--sibling", help="a competing skill dir visible in every trial")
        ] = None,
        decoy: Annotated[
            list[Path] | None, typer.Option("--decoy", help="a decoy skill dir visible in every trial")
        ] = None,
        decoys: Annotated[
            int | None, typer.Option("--decoys", min=0, help="decoys visible (given --decoy dirs, then synthetic)")
        ] = None,
        threshold: Annotated[float, typer.Option(help="a query triggers when its trigger rate is at least this")] = 0.5,
        max_cost: Annotated[
            float | None, typer.Option("--max-cost", help="stop once the recorded trials cost this many USD")
        ] = None,
        timeout: Annotated[float, typer.Option(min=1, help="agent time limit per trial, seconds")] = 300.0,
        out: Annotated[Path, typer.Option(help="directory for run directories")] = Path("runs"),
        run_id: Annotated[str | None, typer.Option(help="name of the run directory")] = None,
        concurrency: Annotated[int, typer.Option(min=1, help="trials running at once")] = 2,
        seed: Annotated[int, typer.Option(help="base seed")] = 0,
        env: Annotated[str, typer.Option(help="sandbox backend: local (bubblewrap) or container")] = "local",
        format: Annotated[str, typer.Option("--format", help="text | json (the trigger.json report)")] = "text",
        generate_negatives: Annotated[
            int | None,
            typer.Option("--generate-negatives", min=1, help="write N near-miss queries for review; run nothing"),
        ] = None,
        negatives_out: Annotated[
            Path | None, typer.Option(help="file for --generate-negatives (default: <out>/<skill>.negatives.json)")
        ] = None,
        optimize_description: Annotated[
            bool, typer.Option("--optimize-description", help="propose and test description variants (via --model)")
        ] = False,
        proposer_model: Annotated[
            str | None, typer.Option(help="model proposing variants / negatives (default: --model)")
        ] = None,
        rounds: Annotated[int, typer.Option(min=1, help="--optimize-description: proposal rounds")] = 3,
        variants: Annotated[int, typer.Option(min=1, help="--optimize-description: variants per round")] = 3,
        holdout: Annotated[float, typer.Option(help="--optimize-description: held-out share of the queries")] = 0.5,
        write: Annotated[
            bool, typer.Option("--write", help="--optimize-description: rewrite SKILL.md with an accepted variant")
        ] = False,
    ) -> None:
        """Trigger evaluation: per-query trigger rates, precision / recall / F1 / accuracy, routing."""
        from rich.console import Console

        from skillworks.trigger import TriggerOptions, run_trigger

        if format not in _FORMATS:
            raise UserError(f"unknown --format {format!r} (allowed: {', '.join(_FORMATS)})")
        if not queries.is_file():
            raise UserError("query file not found", queries)
        options = TriggerOptions(
            skill=skill,
            queries=queries,
            agent=agent,
            model=model,
            api_base=api_base,
            trials=trials,
            siblings=list(sibling or []),
            decoys=list(decoy or []),
            decoy_count=decoys,
            threshold=threshold,
            max_cost_usd=max_cost,
            timeout_sec=timeout,
            out=out,
            run_id=run_id,
            concurrency=concurrency,
            seed=seed,
            env=env,
        )
        console = Console(stderr=True)
        if generate_negatives is not None:
            _negatives(options, proposer_model or model, generate_negatives, negatives_out)
            return
        if optimize_description:
            _optimize(options, proposer_model, rounds, variants, holdout, write)
            return
        try:
            outcome = run_async(run_trigger(options, console=console))
        except (KeyboardInterrupt, asyncio.CancelledError):
            console.print("[yellow]interrupted[/]: recorded results are kept in the run directory")
            raise typer.Exit(130) from None
        if format == "json":
            typer.echo(outcome.reports["json"].read_text(), nl=False)
            return
        from skillworks.trigger.report import rate_label

        s = outcome.scores
        data = json.loads(outcome.reports["json"].read_text())
        typer.echo(
            f"{data['skill']}: {len(outcome.results)}/{outcome.planned} trial(s), cost ${outcome.cost_usd:.4f}"
            + (" (stopped at --max-cost)" if outcome.stopped_by_cost else "")
        )
        for name, r in (("precision", s.precision), ("recall", s.recall), ("F1", s.f1), ("accuracy", s.accuracy)):
            typer.echo(f"  {name}: {rate_label(r)}")
        for q in s.queries:
            mark = "–" if q.correct is None else ("ok" if q.correct else "WRONG")
            routed = f" -> {', '.join(q.routed_to)}" if q.routed_to else ""
            typer.echo(f"  [{mark}] {q.id} should={'yes' if q.should_trigger else 'no'} "
                       f"{q.triggered}/{q.scored}{routed}: {q.query[:70]}")  # fmt: skip
        for name in ("html", "md", "json"):
            typer.echo(f"  {name}: {outcome.reports[name]}")


def _negatives(options: object, model: str | None, n: int, dest: Path | None) -> None:
    from skillworks.skills.package import load_skill
    from skillworks.trigger import TriggerOptions, write_queries
    from skillworks.trigger.propose import generate_negatives

    assert isinstance(options, TriggerOptions)
    if model is None:
        raise UserError("--generate-negatives needs --model (or --proposer-model)")
    skill = load_skill(options.skill)
    path = dest or options.out / f"{skill.name}.negatives.json"
    if path.exists():
        raise UserError("refusing to overwrite an existing file; pass another --negatives-out", path)
    found = run_async(generate_negatives(model, options.api_base, skill.name, skill.description, n, path.parent))
    write_queries(found, path, skill.name)
    typer.echo(f"wrote {len(found)} near-miss negative(s) for review (not added to {options.queries}): {path}")


def _optimize(options: object, model: str | None, rounds: int, variants: int, holdout: float, write: bool) -> None:
    from skillworks.trigger import TriggerOptions, load_queries
    from skillworks.trigger.optimize import OptimizeOptions, optimize_description

    assert isinstance(options, TriggerOptions)
    opt = OptimizeOptions(options, rounds=rounds, variants=variants, holdout=holdout, write=write,
                          proposer_model=model)  # fmt: skip
    outcome = run_async(optimize_description(opt, load_queries(options.queries)))
    for c in outcome.candidates:
        mark = "ACCEPTED" if c.accepted else "kept out"
        typer.echo(f"  {c.label}: train F1 {c.train_f1}, held-out F1 {c.heldout_f1}: {mark} — {c.reason}")
    if outcome.accepted:
        where = "SKILL.md rewritten" if outcome.written else "SKILL.md unchanged (pass --write to apply)"
        typer.echo(f"accepted description ({where}):\n  {outcome.final}")
    else:
        typer.echo("no variant improved held-out F1 beyond its interval; the description stays")
    typer.echo(f"history: {outcome.history}")
