"""`skillworks import harbor JOB_DIR... --out RUN_DIR`: results skillworks did not run, as a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Import results that skillworks did not run.", no_args_is_help=True)
    app.add_typer(group, name="import")

    @group.command("harbor")
    def harbor(
        jobs: Annotated[
            list[str],
            typer.Argument(help="Harbor job directories, each as CONDITION=DIR (e.g. none=jobs/a) or DIR"),
        ],
        out: Annotated[Path, typer.Option("--out", "-o", help="the run directory to write (new or empty)")],
        run_id: Annotated[str | None, typer.Option(help="run id (default: the --out directory's name)")] = None,
    ) -> None:
        """Read Harbor job directories into a run directory that `skillworks report` can read."""
        from skillworks.importers import import_harbor_jobs, parse_job_arg

        summary = import_harbor_jobs([parse_job_arg(j) for j in jobs], out, run_id=run_id)
        per = ", ".join(f"{c}: {n}" for c, n in summary.by_condition.items())
        typer.echo(f"imported {summary.trials} trials ({per}; {summary.errors} errors) into {summary.run_dir}")
        for origin, n in summary.usage_origins.items():
            typer.echo(f"usage of {n} trial{'s' if n > 1 else ''}: {origin}")
        for path in summary.skipped:
            typer.echo(f"skipped (no result.json, unfinished): {path}", err=True)
        for warning in summary.warnings:
            typer.echo(f"warning: {warning}", err=True)
