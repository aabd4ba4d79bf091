"""`skillworks run ... --submit`: the command line, as typed, becomes a Ray Job's (see `experiment.ray_submit`).

Local inputs (task dirs or trees, `--skills-from`, a `--creator-skill` dir, `--ca-bundle`) are uploaded with the
job; every other path is the cluster's and must be absolute; the job joins the cluster it runs on
(`--ray-address auto`)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from skillworks.errors import UserError
from skillworks.experiment.ray_submit import JobArg, follow_lines, submit_run

_DROPPED = {"submit", "ray_address", "run_id"}  # the job sets these itself
_UPLOADED = {"tasks", "skills_from", "creator_skill", "ca_bundle"}  # local paths, uploaded with the job
_CLUSTER_PATHS = {"out", "resume", "cache"}  # paths on the cluster: absolute


def _given(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _upload(name: str, value: Any, index: int, inputs: dict[str, Path]) -> JobArg:
    if name == "creator_skill" and value in ("default", "bundled"):
        return str(value)
    path = Path(value)
    if not path.exists():
        raise UserError(f"--submit: {'task' if name == 'tasks' else '--' + name.replace('_', '-')}: no such path", path)
    rel = f"{name.replace('_', '-')}/{index}/{path.resolve().name}"
    inputs[rel] = path
    return {"input": rel}


def job_command(ctx: typer.Context, run_id: str) -> tuple[list[JobArg], dict[str, Path]]:
    """The job's command line (`run ...` with --ray-address auto and --run-id) and the inputs to upload."""
    argv: list[JobArg] = ["run"]
    inputs: dict[str, Path] = {}
    positional: list[JobArg] = []
    for param in ctx.command.params:
        name = param.name
        if name is None or name in _DROPPED or not _given(ctx, name):
            continue
        value = ctx.params[name]
        values = list(value) if isinstance(value, list | tuple) else [value]
        if name in _CLUSTER_PATHS and not Path(value).is_absolute():
            raise UserError(
                f"--submit: --{name} {value} must be an absolute path on the cluster's shared storage "
                "(the job runs there, in a temporary working dir)"
            )
        args: list[JobArg] = [
            _upload(name, v, i, inputs) if name in _UPLOADED else str(v) for i, v in enumerate(values)
        ]
        if param.param_type_name == "argument":  # typer's own click copy: no isinstance
            positional.extend(args)
        elif getattr(param, "is_flag", False):
            secondary = getattr(param, "secondary_opts", [])
            flag = param.opts[0] if value or not secondary else secondary[0]
            argv.append(flag)
        else:
            for arg in args:
                argv.extend([param.opts[0], arg])
    argv.extend(["--ray-address", "auto"])
    if not _given(ctx, "resume"):
        argv.extend(["--run-id", run_id])
    return [*argv, *positional], inputs


def submit_command(ctx: typer.Context, console: Any) -> None:
    """Submit this `run` command line as a Ray Job; print the job id and how to follow it."""
    params = ctx.params
    if params["executor"] != "ray" or not params["ray_address"]:
        raise UserError(
            "--submit runs the driver as a Ray Job: give --executor ray --ray-address http://HEAD:8265 (the job server)"
        )
    if params["dry_run"]:
        raise UserError("--submit with --dry-run: the plan is printed here; drop --submit")
    if params["replay"] is not None:
        raise UserError("--replay runs on this machine: drop --submit")
    if not _given(ctx, "out") and params["resume"] is None:
        raise UserError("--submit: give --out, an absolute path on the cluster's shared storage, for the results")
    resume: Path | None = params["resume"]
    if resume is not None:
        run_id, out = resume.name, resume.parent
    else:
        run_id = params["run_id"] or f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        out = params["out"]
    from skillworks.experiment.store import check_run_id

    check_run_id(run_id)
    argv, inputs = job_command(ctx, run_id)
    if resume is None and not params["tasks"]:
        raise UserError("give at least one task directory (or --resume RUN_DIR)")
    submission_id = f"skillworks-{run_id}-{secrets.token_hex(3)}"
    sub = submit_run(params["ray_address"], argv, inputs, out=out, run_id=run_id, submission_id=submission_id)
    for line in follow_lines(sub):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    typer.echo(sub.job_id)  # stdout: the job id alone, for scripts
