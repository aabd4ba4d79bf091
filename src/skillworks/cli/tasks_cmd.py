"""`skillworks tasks ...`: check task directories (structure, and optionally that the oracle passes)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from skillworks.cli._container_flags import (
    CaBundle,
    ContainerBuildFlags,
    ContainerCli,
    ContainerGlobalFlags,
    ContainerRunFlags,
    ForceBuild,
    ImageMap,
    container_env_options,
)

if TYPE_CHECKING:
    from skillworks.tasks import Task, TaskIssue

tasks_app = typer.Typer(help="Load and check task directories (task.md standard, Harbor).", no_args_is_help=True)

_ENVS = ("local", "container")


@dataclass
class _Row:
    path: Path
    fmt: str
    issues: list[TaskIssue]
    task: Task | None = None
    oracle: Any = None
    oracle_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def has_error(self) -> bool:
        oracle_failed = self.oracle is not None and not self.oracle.ok
        return any(i.severity == "error" for i in self.issues) or oracle_failed or self.oracle_error is not None

    @property
    def status(self) -> str:
        if self.has_error:
            return "error"
        return "warning" if any(i.severity == "warning" for i in self.issues) else "ok"


def _run_oracles(rows: list[_Row], env: str, env_options: dict[str, Any]) -> None:
    from skillworks._aio import run_async
    from skillworks.experiment.oracle_check import check_oracles

    tasks = [row.task for row in rows if row.task is not None and row.task.oracle is not None]
    results = run_async(check_oracles(tasks, env=env, env_options=env_options)) if tasks else []
    by_id = {result.task_id: result for result in results}
    for row in rows:
        if row.task is None:
            continue
        if row.task.oracle is None:
            row.oracle_error = "no oracle to run"
        elif row.task.id in by_id:
            row.oracle = by_id[row.task.id]
        else:
            row.oracle_error = "oracle check returned no result"


def _oracle_cell(row: _Row) -> str:
    from rich.markup import escape

    if row.oracle_error:
        return f"[red]{escape(row.oracle_error)}[/]"
    if row.oracle is None:
        return "-"
    reward = "none" if row.oracle.reward is None else f"{row.oracle.reward:g}"
    colour = "green" if row.oracle.ok else "red"
    note = f" {escape(row.oracle.message)}" if row.oracle.message and not row.oracle.ok else ""
    return f"[{colour}]{reward}[/]{note}"


def _print_table(rows: list[_Row], show_oracle: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="tasks check", show_lines=True)
    # names and numbers are never broken across lines; the problems column takes the wrapping
    table.add_column("task", no_wrap=True, overflow="ellipsis", max_width=36)
    table.add_column("format", no_wrap=True)
    table.add_column("status", no_wrap=True)
    if show_oracle:
        table.add_column("oracle", no_wrap=True)
    table.add_column("problems", overflow="fold", ratio=1)
    colours = {"ok": "green", "warning": "yellow", "error": "red"}
    for row in rows:
        problems = "\n".join(escape(f"{i.severity}: {i.message}") for i in row.issues) or "-"
        cells = [escape(row.path.name), row.fmt, f"[{colours[row.status]}]{row.status}[/]"]
        if show_oracle:
            cells.append(_oracle_cell(row))
        cells.append(problems)
        table.add_row(*cells)
    console = Console()
    console.print(table)
    errors = sum(1 for r in rows if r.has_error)
    console.print(f"{len(rows)} task(s), {errors} with errors")
    for row in rows:
        if row.oracle is not None and row.oracle.trial_dir is not None:
            console.print(f"oracle logs of {row.path.name}: {row.oracle.trial_dir}", markup=False, soft_wrap=True)


@tasks_app.command("check")
def check(
    paths: list[Path] = typer.Argument(..., help="task directories, or trees that contain task directories"),
    oracle: bool = typer.Option(False, "--oracle", help="also run each task's oracle and require reward 1.0"),
    env: str = typer.Option("local", "--env", help="sandbox for --oracle: local | container"),
    fmt: str = typer.Option("table", "--format", "-f", help="table | json"),
    as_json: bool = typer.Option(False, "--json", help="same as --format json"),
    container_cli: ContainerCli = None,
    container_global_flag: ContainerGlobalFlags = None,
    container_run_flag: ContainerRunFlags = None,
    container_build_flag: ContainerBuildFlags = None,
    image_map: ImageMap = None,
    ca_bundle: CaBundle = None,
    force_build: ForceBuild = False,
) -> None:
    """Check task directories; exit 1 if any task has errors, 2 on a bad path."""
    from skillworks.check import leakage_task_issues
    from skillworks.errors import UserError
    from skillworks.tasks import detect_format, discover_tasks, load_task, validate_task
    from skillworks.tasks.layout import dataset_root, dataset_root_of

    if env not in _ENVS:
        raise UserError(f"--env must be one of {', '.join(_ENVS)}, not {env!r}")
    if fmt not in ("table", "json"):
        raise UserError(f"--format must be table or json, not {fmt!r}")
    as_json = as_json or fmt == "json"
    rows: list[_Row] = []
    for task_dir in discover_tasks(paths):
        # links to a sibling task inside the dataset dir given here are allowed, outside it refused
        with dataset_root(dataset_root_of(task_dir, paths)):
            issues = validate_task(task_dir)
            row = _Row(path=task_dir, fmt=detect_format(task_dir) or "?", issues=issues)
            if not any(i.severity == "error" for i in issues):
                row.task = load_task(task_dir)
                # leakage audit: does a skill give away the oracle's commands or the verifier's answers?
                row.issues = [*row.issues, *leakage_task_issues(row.task)]
        rows.append(row)
    if oracle:
        options = container_env_options(
            env,
            container_cli,
            container_global_flag,
            container_run_flag,
            container_build_flag,
            image_map,
            ca_bundle,
            force_build,
        )
        _run_oracles(rows, env, options)
    if as_json:
        payload = [
            {
                "task": str(row.path),
                "format": row.fmt,
                "status": row.status,
                "issues": [i.model_dump() for i in row.issues],
                **(
                    {
                        "oracle": None
                        if row.oracle is None
                        else {
                            "reward": row.oracle.reward,
                            "ok": row.oracle.ok,
                            "message": row.oracle.message,
                            "trial_dir": str(row.oracle.trial_dir) if row.oracle.trial_dir else None,
                        },
                        "oracle_error": row.oracle_error,
                    }
                    if oracle
                    else {}
                ),
            }
            for row in rows
        ]
        typer.echo(json.dumps(payload, indent=2))
    else:
        _print_table(rows, show_oracle=oracle)
    if any(row.has_error for row in rows):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
