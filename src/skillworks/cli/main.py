"""The `skillworks` command. Each sub-command lives in its own module under `skillworks.cli` and
exposes `register(app)`; commands only parse flags and call the library."""

from __future__ import annotations

import errno
import importlib
import logging
import os
import sys
from typing import Any

import typer
import typer.main

from skillworks.errors import UserError

app = typer.Typer(
    name="skillworks",
    help="Does this skill make an agent better, where does it fail, and how do I make it better?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# One module per command group; imported at start-up, heavy imports stay inside the commands.
_COMMAND_MODULES = (
    "tasks_cmd",
    "run_cmd",
    "evolve_cmd",
    "report_cmd",
    "check_cmd",
    "agents_cmd",
    "eval_cmd",
    "clean_cmd",
    "trajectory_cmd",
    "compile_cmd",
    "import_cmd",
    "view_cmd",
    "trigger_cmd",
    "power_cmd",
)


def _register_commands() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"skillworks.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"skillworks.cli.{name}":
                continue  # command group not part of this build
            raise
        module.register(app)


def _version(value: bool) -> None:
    if value:
        from skillworks import __version__

        typer.echo(f"skillworks {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """Does this skill make an agent better, where does it fail, and how do I make it better?"""


_register_commands()


def command() -> Any:
    """The Click command tree of `skillworks`, with the help conventions applied (see help_polish)."""
    from skillworks.cli.help_polish import polish

    cmd = typer.main.get_command(app)
    polish(cmd)
    return cmd


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        command()(prog_name="skillworks")
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # a full disk under --out: one line, not a traceback; what was recorded stays (results.jsonl
        # lines are whole) and `run --resume` continues once there is room
        code = errno.errorcode[exc.errno]
        where = exc.filename or "the output directory"
        typer.echo(
            f"error: {where}: {os.strerror(exc.errno)} ({code}); results recorded so far are kept: "
            "free space, then continue with `skillworks run --resume RUN_DIR`",
            err=True,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
