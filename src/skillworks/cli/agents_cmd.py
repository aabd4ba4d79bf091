"""`skillworks agents`: the agents skillworks can run, and installing the agent CLIs (harnesses)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from skillworks.errors import UserError

agents_app = typer.Typer(help="Agents: built-in ones and installed agent CLIs (harnesses).", no_args_is_help=True)


def _rows() -> list[dict[str, Any]]:
    import os

    from skillworks.agents.harness import HARNESS_SPECS, find_installation
    from skillworks.agents.harness.install import install_dir
    from skillworks.agents.harness.runner import _env_key
    from skillworks.agents.registry import agent_names, create_agent

    rows: list[dict[str, Any]] = []
    for name in agent_names():
        spec = HARNESS_SPECS.get(name)
        if spec is None:
            agent = create_agent(name)
            rows.append(
                {
                    "agent": name,
                    "kind": "builtin",
                    "package": None,
                    "version": agent.version,
                    "installed": True,
                    "path": None,
                    "skills_dir": agent.skills_dir("~", "<workdir>"),
                }
            )
            continue
        found = find_installation(spec)
        binary = os.environ.get(_env_key(name, "BINARY"))
        rows.append(
            {
                "agent": name,
                "kind": "harness",
                "package": (
                    f"npm {spec.install.package}@{spec.install.version}"
                    if spec.install.kind == "npm"
                    else f"pip {spec.install.package}=={spec.install.version}"
                ),
                "version": spec.install.version,
                "installed": found is not None,
                "path": str(found.executable) if found else str(install_dir(spec)),
                "binary_override": binary,
                "skills_dir": f"~/{spec.skills_subdir}",
            }
        )
    return rows


@agents_app.command("list")
def list_agents(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table | json")] = "table",
    as_json: Annotated[bool, typer.Option("--json", help="same as --format json")] = False,
) -> None:
    """Each agent: kind, pinned version, whether it is installed, and where it reads skills."""
    from skillworks.errors import UserError

    if fmt not in ("table", "json"):
        raise UserError(f"--format must be table or json, not {fmt!r}")
    rows = _rows()
    if as_json or fmt == "json":
        typer.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    wide = console.width >= 120  # the install path column only where it fits; --format json has it
    table = Table("agent", "kind", "version", "installed", "skills dir", *(["install path / package"] if wide else []))
    for row in rows:
        if row["kind"] == "builtin":
            installed, where = "built in", ""
        else:
            installed = "yes" if row["installed"] else "no"
            if row.get("binary_override"):
                installed += f" (binary: {row['binary_override']})"
            where = row["path"] if row["installed"] else f"{row['package']} (skillworks agents install {row['agent']})"
        table.add_row(
            row["agent"], row["kind"], row["version"], installed, row["skills_dir"], *([where] if wide else [])
        )
    console.print(table)
    if not wide:
        console.print("install paths: --format json (or a terminal of 120 columns or more)")


@agents_app.command("install")
def install_agents(
    names: Annotated[list[str] | None, typer.Argument(help="harness names, e.g. claude-code codex")] = None,
    all_: Annotated[bool, typer.Option("--all", help="install every supported harness")] = False,
) -> None:
    """Install the pinned version of each agent CLI into the cache (npm; once per machine and version)."""
    from skillworks.agents.harness import HARNESS_SPECS, install

    chosen = list(HARNESS_SPECS) if all_ else list(names or [])
    if not chosen:
        raise UserError(f"name the harnesses to install ({', '.join(HARNESS_SPECS)}) or pass --all")
    unknown = [n for n in chosen if n not in HARNESS_SPECS]
    if unknown:
        raise UserError(f"unknown harness {unknown[0]!r}; supported: {', '.join(HARNESS_SPECS)}")
    for name in chosen:
        found = install(HARNESS_SPECS[name])
        typer.echo(f"{name} {found.version}: {found.executable}")


def register(app: typer.Typer) -> None:
    app.add_typer(agents_app, name="agents")
