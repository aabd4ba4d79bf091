"""`skillworks check`: static scans of skills (structure score, security, script lint, opt-in LLM judge)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import typer

_FORMATS = ("table", "json", "sarif", "text")  # table and text: the same plain text

TEXT_CHUNK_LINES = 2000  # the text report is written in chunks of this many lines


def check(
    paths: list[Path] = typer.Argument(..., help="skill directories, SKILL.md files, or trees holding skills"),
    fmt: str = typer.Option("table", "--format", "-f", help="table (plain text, alias text) | json | sarif"),
    output: Path | None = typer.Option(None, "--output", "-o", help="write the json/sarif report to this file"),
    fail_under: int = typer.Option(70, "--fail-under", help="exit 1 if a skill's overall score is below this (0-100)"),
    lint: bool = typer.Option(True, "--lint/--no-lint", help="run ruff, bash -n and shellcheck over scripts"),
    judge: str | None = typer.Option(None, "--judge", help="LLM judge model(s), comma-separated (opt-in)"),
    api_base: str | None = typer.Option(None, "--api-base", help="OpenAI-compatible base URL for the judge"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="also show info findings in the table"),
    triage: str | None = typer.Option(
        None, "--triage", help="LLM model that reviews each security error/warning (opt-in; see --api-base)"
    ),
    strict: bool = typer.Option(
        False, "--strict", help="every specification finding is a blocking error, as in skills-ref validate"
    ),
    workers: int | None = typer.Option(
        None, "--workers", "-j", help="scan processes (default: one per core for 200 skills or more; same report)"
    ),
    ignore_file: bool = typer.Option(
        True, "--ignore-file/--no-ignore-file", help="honour .skillworks-ignore files (reviewed false alarms)"
    ),
    harness: str | None = typer.Option(
        None, "--harness", help="NAME[,NAME…]|all: start each installed harness CLI with the skill (real load check)"
    ),
) -> None:
    """Score skills over four dimensions, scan them for security problems and lint their scripts.

    Exit 0 when every skill passes the gate; 1 when one scores under --fail-under or has a blocking
    finding (an error-severity spec violation, which makes harnesses refuse the skill, or an
    error-severity security finding); 2 on bad input."""
    from skillworks._aio import run_async
    from skillworks.check import check_skills_async, iter_json, iter_sarif
    from skillworks.errors import UserError

    if fmt not in _FORMATS:
        raise UserError(f"--format must be one of {', '.join(_FORMATS)}, not {fmt!r}")
    if harness is not None:  # a separate path: real CLIs, not static rules (skillworks.harness_check)
        from skillworks.harness_check.cli import check_harness_command

        check_harness_command(paths, harness, fmt)
        return
    if not 0 <= fail_under <= 100:
        raise UserError(f"--fail-under must be between 0 and 100, not {fail_under}")
    models = [m.strip() for m in (judge or "").split(",") if m.strip()]
    if triage is not None and not triage.strip():
        raise UserError("--triage needs a model name")
    if judge is not None and not models:
        raise UserError("--judge needs at least one model name")
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1, not {workers}")
    report = run_async(
        check_skills_async(
            paths,
            fail_under=fail_under,
            lint=lint,
            judge_models=models,
            api_base=api_base,
            strict=strict,
            triage_model=(triage or "").strip() or None,
            workers=workers,
            ignore_files=ignore_file,
        )
    )
    if fmt in ("table", "text"):
        import shutil

        from skillworks.check.text_output import text_lines

        width = max(60, min(shutil.get_terminal_size((80, 24)).columns, 120))
        chunk: list[str] = []
        for line in text_lines(report, verbose=verbose, width=width):  # written as it comes: never all held
            chunk.append(line)
            if len(chunk) >= TEXT_CHUNK_LINES:
                typer.echo("\n".join(chunk))
                chunk = []
        if chunk:
            typer.echo("\n".join(chunk))
    else:
        # written as it is produced (a report of 16k skills is 55 MB of JSON): never held whole
        pieces = iter_json(report) if fmt == "json" else iter_sarif(report)
        if output is not None:
            _write_report(pieces, output)
        else:
            for piece in pieces:
                typer.echo(piece, nl=False)
            typer.echo("")
    if not report.passed:
        raise typer.Exit(1)


def _write_report(pieces: Iterable[str], output: Path) -> None:
    """Write the report's pieces to `output`; a regular file is replaced only once the whole report is
    written, so a failed write keeps the report that was there."""
    from skillworks.errors import UserError

    direct = output.exists() and not output.is_file()  # /dev/stdout, a pipe: written in place
    target = output if direct else output.with_name(f".{output.name}.partial")
    try:
        with target.open("w", encoding="utf-8") as fh:
            fh.writelines(pieces)
            fh.write("\n")
        if not direct:
            target.replace(output)
    except OSError as exc:
        if not direct:
            target.unlink(missing_ok=True)
        raise UserError(f"cannot write the report: {exc.strerror or exc}", output) from None


def register(app: typer.Typer) -> None:
    app.command("check")(check)
