"""`skillworks import harbor JOB_DIR... --out RUN_DIR` (Harbor job directories as a run directory) and
`skillworks import results FILE` (a per-task results table, e.g. a leaderboard registry, and its statistics)."""

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
        skills: Annotated[
            list[str] | None,
            typer.Option(
                "--skills",
                help="CONDITION=DIR: the skills that condition's trials could see, for skill-use detection "
                "(default: the task's environment/skills when the task directory is here)",
            ),
        ] = None,
    ) -> None:
        """Read Harbor job directories into a run directory that `skillworks report` can read."""
        from skillworks.errors import UserError
        from skillworks.importers import import_harbor_jobs, parse_job_arg

        given: dict[str, Path] = {}
        for item in skills or []:
            condition, sep, path = item.partition("=")
            if not sep or not condition or not path:
                raise UserError(f"--skills expects CONDITION=DIR, got {item!r}")
            given[condition] = Path(path)
        summary = import_harbor_jobs([parse_job_arg(j) for j in jobs], out, run_id=run_id, skills=given)
        per = ", ".join(f"{c}: {n}" for c, n in summary.by_condition.items())
        typer.echo(f"imported {summary.trials} trials ({per}; {summary.errors} errors) into {summary.run_dir}")
        for origin, n in summary.usage_origins.items():
            typer.echo(f"usage of {n} trial{'s' if n > 1 else ''}: {origin}")
        if summary.without_skill_info:
            typer.echo(
                f"skill use not recorded for {summary.without_skill_info} trials: their skills are unknown "
                "(give --skills CONDITION=DIR)"
            )
        for path in summary.skipped:
            typer.echo(f"skipped (no result.json, unfinished): {path}", err=True)
        for warning in summary.warnings:
            typer.echo(f"warning: {warning}", err=True)

    @group.command("results")
    def results(
        file: Annotated[Path, typer.Argument(help="JSON array or CSV: task, configuration, condition, reward|score")],
        baseline: Annotated[str, typer.Option(help="the condition without skills")] = "none",
        treatment: Annotated[
            str | None, typer.Option(help="the condition with skills (default: curated, else the other one)")
        ] = None,
        out: Annotated[Path | None, typer.Option("--out", "-o", help="also write the statistics as JSON")] = None,
        resamples: Annotated[int, typer.Option(min=1, help="bootstrap resamples for the Δ intervals")] = 10_000,
        seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    ) -> None:
        """Per-configuration pass rates, Δ and g of a results table, and their mean over configurations."""
        from skillworks.importers.results_table import read_results_table, render_table_summary, table_statistics

        rows = read_results_table(file)
        summary = table_statistics(
            rows, source=str(file), baseline=baseline, treatment=treatment, resamples=resamples, seed=seed
        )
        typer.echo(
            f"{summary.rows} rows: {summary.tasks} tasks x {len(summary.configurations)} configurations; "
            f"{summary.missing_cells} missing and {summary.unpaired_cells} unpaired cells (never imputed)"
        )
        typer.echo(render_table_summary(summary))
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(summary.model_dump_json(indent=2) + "\n")
            typer.echo(f"wrote {out}")
