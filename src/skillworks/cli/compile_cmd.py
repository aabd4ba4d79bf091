"""`skillworks compile` (skills → boundary contracts) and `skillworks serve-skills` (the MCP runtime)."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def compile_command(
    skill_dirs: list[Path] = typer.Argument(..., help="Skill directories, or folders holding skill directories."),
    out: Path = typer.Option(..., "-o", "--out", help="Where compiled skills go: OUT/<skill>/contract.json."),
    recompile: bool = typer.Option(
        False, "--recompile", help="Replace an artifact compiled from an earlier version of the package."
    ),
    explain: bool = typer.Option(False, "--explain", help="Print shape, evidence, operators and risks."),
    as_json: bool = typer.Option(False, "--json", help="Print the explanation as JSON instead of tables."),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Also judge each shape with this model through the gateway (provider/model or scripted/...).",
    ),
    api_base: str | None = typer.Option(None, "--api-base", help="OpenAI-compatible server for --model."),
) -> None:
    """Compile skills into boundary contracts (shape, operators, step graph, risks, lossless capsule)."""
    from skillworks.compile import compile_to, contract_json_schema, explain_record, print_explain
    from skillworks.compile.tree import output_names
    from skillworks.errors import UserError
    from skillworks.skills import discover_skills

    roots: list[Path] = []
    for d in skill_dirs:
        found = discover_skills(d) if d.is_dir() else []
        if not found:
            raise UserError("no SKILL.md here or below", d)
        roots.extend(found)
    names = output_names(roots)
    outcomes = []
    failed: list[str] = []
    for root in roots:  # one skill that cannot be compiled is reported and the rest go on
        try:
            outcomes.append(
                compile_to(root, out, recompile=recompile, model=model, api_base=api_base, dest=names[root])
            )
        except UserError as exc:
            failed.append(str(exc))
            typer.echo(f"error: {exc}", err=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "contract.schema.json").write_text(json.dumps(contract_json_schema(), indent=2))
    invalid = [o for o in outcomes if any(d.startswith("invalid skill") for d in o.contract.diagnostics)]
    if as_json:
        typer.echo(json.dumps([explain_record(o.contract, str(o.path)) for o in outcomes], indent=2))
    else:
        if explain:
            print_explain([o.contract for o in outcomes])
        for o in outcomes:
            c = o.contract
            state = "up to date" if o.reused else "compiled"
            judged = (
                f"; judged {c.compile.judge_shape or 'unusable'} by {c.compile.judge_model} "
                f"({c.compile.input_tokens}+{c.compile.output_tokens} tokens)"
                if c.compile.judge_model
                else ""
            )
            typer.echo(
                f"{c.skill}: {c.shape} ({c.type}, {c.validation_level}, {len(c.operators)} operator(s){judged}) "
                f"{state} -> {o.path}"
            )
        for o in invalid:
            typer.echo(f"warning: {o.path.name}: {next(d for d in o.contract.diagnostics if d.startswith('invalid'))}")
    if not as_json:
        typer.echo(
            f"{len(outcomes)} of {len(roots)} skill(s) compiled ({len(invalid)} invalid, compiled as insufficient); "
            f"{len(failed)} failed",
            err=True,
        )
    if failed:  # the exit status is the number of skills that failed (at most 100)
        raise typer.Exit(min(len(failed), 100))


def serve_skills_command(
    compiled_dir: Path = typer.Argument(..., help="A directory written by `skillworks compile`."),
    transport: str = typer.Option("stdio", "--transport", help="stdio or http (streamable HTTP at /mcp)."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP: address to listen on."),
    port: int = typer.Option(8765, "--port", help="HTTP: port to listen on."),
    workdir: Path = typer.Option(Path("."), "--workdir", help="Where operators run."),
    calls_log: Path | None = typer.Option(
        None, "--calls-log", help="Append every tool call (tool, arguments, answer) to this file as JSON lines."
    ),
) -> None:
    """Serve compiled skills over MCP. Operators run as subprocesses of this server in --workdir: start it
    inside the sandbox the agent works in (as `compiled` trials do), not on a host you care about."""
    from skillworks.compile import load_compiled_dir
    from skillworks.compile.mcp_server import serve
    from skillworks.errors import UserError

    if transport not in ("stdio", "http"):
        raise UserError(f"unknown transport {transport!r}; use stdio or http")
    if not workdir.is_dir():
        raise UserError("--workdir is not a directory", workdir)
    if calls_log is not None and not calls_log.parent.is_dir():
        raise UserError("--calls-log: its directory does not exist", calls_log)
    serve(
        load_compiled_dir(compiled_dir), transport=transport, host=host, port=port, workdir=workdir, calls_log=calls_log
    )


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_command)
    app.command("serve-skills")(serve_skills_command)
