"""`skillworks trajectory validate FILE...` and `skillworks trajectory convert --from HARNESS LOG`: the ATIF
validator and the native-log converters on the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from skillworks.errors import UserError


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Validate ATIF trajectories and convert harness logs to ATIF.", no_args_is_help=True)
    app.add_typer(group, name="trajectory")

    @group.command("validate")
    def validate(
        files: Annotated[list[Path], typer.Argument(help="ATIF trajectory.json files")],
    ) -> None:
        """Check each file against ATIF (v1.0 to v1.8); one line per file, exit 1 if any is invalid."""
        from skillworks.trajectory import TrajectoryError, validate_trajectory

        bad = 0
        for path in files:
            try:
                traj = validate_trajectory(path)
            except TrajectoryError as exc:
                bad += 1
                typer.echo(f"invalid: {exc}", err=True)
                continue
            typer.echo(f"ok: {path}: {traj.schema_version}, {len(traj.steps)} steps")
        if bad:
            typer.echo(f"{bad} of {len(files)} file{'s' if len(files) > 1 else ''} invalid", err=True)
            raise typer.Exit(1)

    @group.command("convert")
    def convert(
        log: Annotated[Path, typer.Argument(help="the harness's native log (gemini-cli: also a saved session file)")],
        source: Annotated[str, typer.Option("--from", help="claude-code | codex | gemini-cli | opencode")],
        out: Annotated[
            Path | None, typer.Option("--out", "-o", help="write the trajectory here (default: stdout)")
        ] = None,
        instruction: Annotated[
            str | None, typer.Option(help="the task instruction, when the log does not hold it as a first message")
        ] = None,
    ) -> None:
        """Convert a native harness log to an ATIF trajectory (validated before it is written)."""
        from skillworks.trajectory import CONVERTERS, convert_log, write_trajectory

        if source not in CONVERTERS:
            raise UserError(f"unknown --from '{source}' (allowed: {', '.join(CONVERTERS)})")
        converted = convert_log(source, log, instruction=instruction)
        traj = converted.trajectory
        if out is None:
            json.dump(traj.to_json_dict(), sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
        else:
            write_trajectory(traj, out)
        usage = converted.usage
        summary = f"converted {log} ({source}): {len(traj.steps)} steps"
        if usage is not None:
            summary += f", {usage.input_tokens} in / {usage.output_tokens} out tokens ({usage.cached_tokens} cached)"
        if converted.skipped_lines:
            summary += f", {converted.skipped_lines} non-JSON lines skipped"
        typer.echo(summary + (f" -> {out}" if out else ""), err=True)
        for error in converted.errors:
            typer.echo(f"log error: {error}", err=True)
