"""`skillworks view [RUN_DIR...]`: a local web app over run directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillworks.errors import UserError


def _run_dirs(paths: list[Path]) -> list[Path]:
    """The run directories among ``paths``: a run directory itself, or a directory of them (e.g. runs/)."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise UserError("not a directory", path)
        if (path / "experiment.json").is_file():
            found.append(path)
            continue
        inner = sorted(p for p in path.iterdir() if p.is_dir() and (p / "experiment.json").is_file())
        if not inner:
            raise UserError("neither a run directory (no experiment.json) nor a directory of run directories", path)
        found.extend(inner)
    return found


def register(app: typer.Typer) -> None:
    @app.command("view")
    def view(
        run_dirs: Annotated[
            list[Path] | None,
            typer.Argument(help="run directories, or directories holding them (default: ./runs)", show_default=False),
        ] = None,
        port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: a free one)")] = 8765,
        host: Annotated[
            str, typer.Option(help="address to bind; anything but loopback exposes the trajectories")
        ] = "127.0.0.1",
    ) -> None:
        """Browse runs in a local web app: a trials table with filter, sort and full-text search over
        trajectories, each trial's page and its side-by-side pair, refreshed while a run writes results.
        Serves until Ctrl-C."""
        import asyncio

        from skillworks._aio import run_async
        from skillworks.view import start_view

        dirs = _run_dirs(run_dirs or [Path("runs")])
        if host not in ("127.0.0.1", "localhost", "::1"):
            typer.echo(f"warning: serving on {host}: anyone who can reach it can read these runs", err=True)

        async def serve() -> None:
            try:
                server = await start_view(dirs, host=host, port=port)
            except OSError as exc:
                raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
            typer.echo(f"skillworks view: {len(dirs)} run(s) at {server.url} (Ctrl-C to stop)")
            try:
                await asyncio.Event().wait()
            finally:
                await server.stop()

        try:
            run_async(serve())
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
