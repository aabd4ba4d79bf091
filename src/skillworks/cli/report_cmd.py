"""`skillworks report RUN_DIR...`: regenerate summary.json, report.md and report.html."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillworks.errors import UserError

_FORMAT_CHOICES = ("md", "html", "json", "all", "pr-comment")


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        run_dirs: Annotated[list[Path], typer.Argument(help="run directory (several: combined, same tasks)")],
        format: Annotated[
            str,
            typer.Option(
                "--format",
                "-f",
                help="all | md | html | json (also printed) | pr-comment (Markdown for a pull request, printed)",
            ),
        ] = "all",
        out: Annotated[
            Path | None, typer.Option(help="where to write (default: the run directory; needed for several)")
        ] = None,
        resamples: Annotated[int, typer.Option(min=1, help="bootstrap resamples for Δ intervals")] = 10_000,
        seed: Annotated[int | None, typer.Option(help="bootstrap seed (default: the experiment seed)")] = None,
    ) -> None:
        """Regenerate the reports of a run directory and print its headline (pass rates, errors, Δ with its
        CI). With --format json or pr-comment, stdout holds only that document; the rest goes to stderr."""
        from rich.console import Console

        from skillworks.report import FORMATS, build_summary, is_eval_run, write_summary_files
        from skillworks.report.headline import headline_lines

        if format not in _FORMAT_CHOICES:
            raise UserError(f"unknown --format '{format}' (allowed: {', '.join(_FORMAT_CHOICES)})")
        if out is None:
            if len(run_dirs) > 1:
                raise UserError("--out is required when several run directories are combined")
            out = run_dirs[0]
        summary = build_summary(run_dirs, resamples=resamples, seed=seed)
        out.mkdir(parents=True, exist_ok=True)
        evolve_files: dict[str, Path] = {}
        if len(run_dirs) == 1 and out == run_dirs[0] and (run_dirs[0] / "families").is_dir():
            from skillworks.evolve.report import write_evolve_report  # an evolve run: its report too, first

            evolve_files = write_evolve_report(run_dirs[0])
        document = format in ("json", "pr-comment")  # stdout carries the document alone
        formats = FORMATS if format == "all" else ("json",) if format == "pr-comment" else (format,)
        written = {**write_summary_files(summary, out, formats), **evolve_files}
        eval_lines: list[str] = []
        if len(run_dirs) == 1 and is_eval_run(run_dirs[0]):  # `skillworks eval` runs: their Skill Lift too
            from skillworks.report.eval_report import write_eval_report

            written.update(write_eval_report(run_dirs[0], out))
            eval_lines = _eval_lines(out)

        err = Console(stderr=True)
        info = err if document else Console()
        for warning in summary.warnings:
            err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
        if format == "json":
            typer.echo(written["json"].read_text(encoding="utf-8"), nl=False)
        elif format == "pr-comment":
            from skillworks.report.pr_comment import render_pr_comment

            text = render_pr_comment(summary, eval_lines)
            path = out / "pr_comment.md"
            path.write_text(text, encoding="utf-8")
            written["pr-comment"] = path
            typer.echo(text, nl=False)
        else:
            for line in headline_lines(summary) + eval_lines:
                info.print(line, markup=False, highlight=False, soft_wrap=True)
        for path in written.values():
            info.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)


def _eval_lines(out: Path) -> list[str]:
    from skillworks.report.eval_html import lift_label
    from skillworks.report.eval_report import SUMMARY_FILE, read_eval_summary

    lines = []
    for c in read_eval_summary(out / SUMMARY_FILE).comparisons:
        overall = next((m for m in c.metrics if m.metric == "overall"), None)
        if overall is not None:
            lines.append(f"Skill Lift ({c.treatment} vs {c.baseline}): {lift_label(overall)}")
    return lines
