"""`skillworks check`: static scans of skills (structure score, security, script lint, opt-in LLM judge)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from skillworks.check import CheckReport

_FORMATS = ("table", "json", "sarif")


def _print_table(report: CheckReport, verbose: bool) -> None:
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from skillworks.check.model import SCORED_DIMENSIONS, Severity

    console = Console()
    failed = {id(s) for s in report.failed()}
    summary = Table(
        title="skillworks check", show_lines=False, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    summary.add_column("skill", overflow="fold", ratio=1)
    for col in ("score", "grade", *(d.value[:4] for d in SCORED_DIMENSIONS)):
        summary.add_column(col, no_wrap=True, justify="right")
    summary.add_column("security\nfindings", no_wrap=True, justify="right")  # a count, not a score
    summary.add_column("gate", no_wrap=True)
    names = [s.name or s.root.name for s in report.skills]
    for s in report.skills:
        colour = "green" if id(s) not in failed else "red"
        label = s.name or s.root.name
        if names.count(label) > 1:  # same name in several places: show where
            label = str(s.root)
        summary.add_row(
            escape(label),
            str(s.overall),
            s.grade,
            *(str(s.scores.get(d, 0)) for d in SCORED_DIMENSIONS),
            str(len(s.security_findings)),
            f"[{colour}]{'pass' if id(s) not in failed else 'FAIL'}[/]",
        )
    console.print(summary)
    colours = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
    for s in report.skills:
        shown = [f for f in s.findings if verbose or f.severity is not Severity.INFO]
        if not shown and s.judge is None:
            continue
        table = Table(title=escape(str(s.root)), show_lines=False, title_justify="left")
        table.add_column("severity")
        table.add_column("rule")
        table.add_column("where", overflow="fold")
        table.add_column("message", overflow="fold")
        for f in shown:
            where = f"{f.file or ''}{':' + str(f.line) if f.line else ''}"
            msg = escape(f.message + (f"\n  {f.evidence}" if f.evidence else ""))
            table.add_row(f"[{colours[f.severity]}]{f.severity.value}[/]", f.rule_id, escape(where), msg)
        if shown:
            console.print(table)
        if s.judge is not None:
            jt = Table(title=f"LLM judge ({', '.join(s.judge.models)})", title_justify="left")
            jt.add_column("criterion")
            jt.add_column("mean")
            jt.add_column("spread")
            for c in s.judge.criteria:
                jt.add_row(c.criterion, f"{c.mean:.1f}", f"{c.spread:.1f}")
            console.print(jt)
            for model, why in s.judge.errors.items():
                console.print(f"[yellow]judge {escape(model)}: {escape(why)}[/]")
    missing = [tool for tool, ok in report.lint_tools.items() if not ok]
    if missing:
        console.print(f"[yellow]not installed, lint skipped: {', '.join(missing)}[/]")
    hidden = sum(1 for s in report.skills for f in s.findings if f.severity is Severity.INFO) if not verbose else 0
    tail = f" ({hidden} info finding(s) hidden; --verbose shows them)" if hidden else ""
    console.print(
        f"{len(report.skills)} skill(s), {len(failed)} failing the gate (score < {report.fail_under} "
        f"or a blocking error: spec violation or security){tail}"
    )


def check(
    paths: list[Path] = typer.Argument(..., help="skill directories, SKILL.md files, or trees holding skills"),
    fmt: str = typer.Option("table", "--format", "-f", help="table | json | sarif"),
    output: Path | None = typer.Option(None, "--output", "-o", help="write the json/sarif report to this file"),
    fail_under: int = typer.Option(70, "--fail-under", help="exit 1 if a skill's overall score is below this (0-100)"),
    lint: bool = typer.Option(True, "--lint/--no-lint", help="run ruff, bash -n and shellcheck over scripts"),
    judge: str | None = typer.Option(None, "--judge", help="LLM judge model(s), comma-separated (opt-in)"),
    api_base: str | None = typer.Option(None, "--api-base", help="OpenAI-compatible base URL for the judge"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="also show info findings in the table"),
) -> None:
    """Score skills over four dimensions, scan them for security problems and lint their scripts.

    Exit 0 when every skill passes the gate; 1 when one scores under --fail-under or has a blocking
    finding (an error-severity spec violation, which makes harnesses refuse the skill, or an
    error-severity security finding); 2 on bad input."""
    import asyncio

    from skillworks.check import check_skills_async, to_json, to_sarif
    from skillworks.errors import UserError

    if fmt not in _FORMATS:
        raise UserError(f"--format must be one of {', '.join(_FORMATS)}, not {fmt!r}")
    if not 0 <= fail_under <= 100:
        raise UserError(f"--fail-under must be between 0 and 100, not {fail_under}")
    models = [m.strip() for m in (judge or "").split(",") if m.strip()]
    if judge is not None and not models:
        raise UserError("--judge needs at least one model name")
    report = asyncio.run(
        check_skills_async(paths, fail_under=fail_under, lint=lint, judge_models=models, api_base=api_base)
    )
    if fmt == "table":
        _print_table(report, verbose)
    else:
        text = to_json(report) if fmt == "json" else json.dumps(to_sarif(report), indent=2)
        if output is not None:
            try:
                output.write_text(text + "\n", encoding="utf-8")
            except OSError as exc:
                raise UserError(f"cannot write the report: {exc.strerror or exc}", output) from None
        else:
            typer.echo(text)
    if not report.passed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
