"""The `check --harness` branch of `skillworks check` (kept apart from the static checks' code path)."""

from __future__ import annotations

from pathlib import Path

import typer

from skillworks._aio import run_async
from skillworks.errors import UserError
from skillworks.harness_check.probe import check_harnesses, harness_names, render_verdicts, verdicts_json


def check_harness_command(paths: list[Path], harness: str, fmt: str) -> None:
    """Exit 0 when every installed harness loaded every skill, 1 otherwise (2 on bad input)."""
    names = harness_names(harness)
    if fmt not in ("table", "text", "json"):
        raise UserError("--harness reports as table/text or json")
    failed = False
    for path in paths:
        skill = path.parent if path.name == "SKILL.md" else path
        if not (skill / "SKILL.md").is_file():
            raise UserError("--harness needs skill directories (a directory with SKILL.md)", path)
        verdicts = run_async(check_harnesses(skill, names))
        typer.echo(verdicts_json(skill.name, verdicts) if fmt == "json" else render_verdicts(skill.name, verdicts))
        failed |= any(v.status not in ("loaded", "not-installed") for v in verdicts)
    if failed:
        raise typer.Exit(1)
