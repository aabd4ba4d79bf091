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
