"""`skillworks import harbor JOB_DIR... --out RUN_DIR` (Harbor job directories as a run directory) and
`skillworks import results FILE` (a per-task results table, e.g. a leaderboard registry, and its statistics)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from skillworks.importers.results_table import TableSummary


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Import results that skillworks did not run.", no_args_is_help=True)
    app.add_typer(group, name="import")

    @group.command("harbor")
    def harbor(
        jobs: Annotated[
            list[str],
            typer.Argument(help="Harbor job directories, each as CONDITION=DIR (e.g. none=jobs/a) or DIR"),
        ],
        out: Annotated[
            Path, typer.Option("--out", "-o", help="where run directories go (as for run, eval, evolve)")
        ] = Path("runs"),
        run_id: Annotated[
            str | None,
            typer.Option(help="run id: the run directory is OUT/RUN_ID, new or empty (default: the first job's name)"),
        ] = None,
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
        from skillworks.experiment.store import check_run_id

        parsed = [parse_job_arg(j) for j in jobs]
        if run_id is None and parsed:
            run_id = parsed[0].path.resolve().name
        run_id = check_run_id(run_id or "harbor-import")
        summary = import_harbor_jobs(parsed, out / run_id, run_id=run_id, skills=given)
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
        fmt: Annotated[
            str,
            typer.Option(
                "--format", "-f", help="table (fits the terminal) | md (Markdown) | json (the statistics, alone)"
            ),
        ] = "table",
    ) -> None:
        """Per-configuration pass rates, Δ and g of a results table, and their mean over configurations."""
        from skillworks.errors import UserError
        from skillworks.importers.results_table import read_results_table, render_table_summary, table_statistics

        if fmt not in _RESULTS_FORMATS:
            raise UserError(f"unknown --format '{fmt}' (allowed: {', '.join(_RESULTS_FORMATS)})")
        rows = read_results_table(file)
        summary = table_statistics(
            rows, source=str(file), baseline=baseline, treatment=treatment, resamples=resamples, seed=seed
        )
        info = fmt == "json"  # stdout carries the JSON document alone; the rest goes to stderr
        head = (
            f"{summary.rows} rows: {summary.tasks} tasks x {len(summary.configurations)} configurations; "
            f"{summary.missing_cells} missing and {summary.unpaired_cells} unpaired cells (never imputed)"
        )
        if fmt == "table":
            _print_table(head, summary)
        else:
            typer.echo(head, err=info)
            typer.echo(summary.model_dump_json(indent=2) if fmt == "json" else render_table_summary(summary))
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(summary.model_dump_json(indent=2) + "\n")
            typer.echo(f"wrote {out}", err=info)


_RESULTS_FORMATS = ("table", "md", "json")


def _print_table(head: str, summary: TableSummary) -> None:
    """The statistics as a terminal table: configuration names wrap, numbers never do (80 columns hold it)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    def pct(v: float | None, digits: int = 1) -> str:
        return "—" if v is None else f"{v * 100:.{digits}f}%"

    def signed(v: float | None, digits: int = 1) -> str:
        return "—" if v is None else f"{v:+.{digits}f}"

    console = Console(highlight=False)
    console.print(head, markup=False)  # wrapped at words to the terminal's width
    b, t = summary.baseline, summary.treatment
    show_missing = summary.missing_cells > 0
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0, 0, 1))
    table.add_column("configuration", overflow="fold", min_width=13)
    for name in (b, t, "Δ pp [95% CI]", "g", "paired", *(["missing"] if show_missing else [])):
        table.add_column(name, justify="right", no_wrap=True)
    for c in summary.configurations:
        delta = signed(c.delta_pp)
        if c.ci_low_pp is not None and c.ci_high_pp is not None:
            delta += f" [{c.ci_low_pp:+.1f}, {c.ci_high_pp:+.1f}]"
        paired = f"{c.n_paired}" + (f" (+{len(c.unpaired_tasks)})" if c.unpaired_tasks else "")
        missing = [str(sum(len(v) for v in c.missing.values()))] if show_missing else []
        table.add_row(c.configuration, pct(c.rates.get(b)), pct(c.rates.get(t)), delta, pct(c.g), paired, *missing)
    table.add_section()
    g = pct(summary.mean_g, 2) + (f" ({summary.n_g_undefined} undef.)" if summary.n_g_undefined else "")
    table.add_row(
        f"mean of {len(summary.configurations)}", pct(summary.mean_rates.get(b), 2), pct(summary.mean_rates.get(t), 2),
        signed(summary.mean_delta_pp, 2), g, "", *([str(summary.missing_cells)] if show_missing else []), style="bold",
    )  # fmt: skip
    console.print(table)
    if summary.unpaired_cells:
        typer.echo("paired: tasks with both conditions (+ tasks with only one, left out of Δ and g)")
