"""`skillworks clean`: remove containers left behind by runs whose driver died (and, on request,
the images skillworks built)."""

from __future__ import annotations

import typer


def clean_command(
    all_runs: bool = typer.Option(
        False, "--all", help="Remove every skillworks container, even of runs still in progress."
    ),
    run_id: str | None = typer.Option(None, "--run", help="Remove the containers of this run id only."),
    images: bool = typer.Option(False, "--images", help="Also remove the task images skillworks built."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be removed, remove nothing."),
    container_cli: str | None = typer.Option(
        None, "--container-cli", help="docker or podman (default: auto-detect; env SKILLWORKS_CONTAINER_CLI)."
    ),
    global_flags: list[str] = typer.Option(
        [],
        "--container-global-flag",
        help="Extra flag before every runtime sub-command, repeatable (env SKILLWORKS_CONTAINER_GLOBAL_FLAGS).",
    ),
) -> None:
    """Remove what dead runs left (driver process gone, e.g. after a crash or kill -9): their containers,
    the working containers of interrupted image builds, their temp dirs (scratch, gateway, channel) and
    the cgroups of their local-sandbox trials. Without podman or docker, only the local leftovers."""
    from skillworks.errors import SandboxUnavailable
    from skillworks.sandbox.container import ContainerRuntime, clean, detect_runtime

    runtime: ContainerRuntime | None
    try:
        runtime = detect_runtime(container_cli, global_flags=global_flags or None)
    except SandboxUnavailable as exc:
        if container_cli is not None or images or all_runs or run_id is not None:
            raise  # the user asked about containers
        typer.echo(f"no container runtime ({exc}): local leftovers only")
        runtime = None
    report = clean(runtime, all_runs=all_runs, run_id=run_id, images=images, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for name in report.removed_containers:
        typer.echo(f"{verb} container {name}")
    for image in report.removed_images:
        typer.echo(f"{verb} image {image}")
    for name in report.removed_builds:
        typer.echo(f"{verb} build container {name} (an interrupted image build)")
    for path in report.removed_dirs:
        typer.echo(f"{verb} temp dir {path}")
    for path in report.removed_cgroups:
        typer.echo(f"{verb} cgroup {path} (a killed run's local-sandbox trial)")
    for image in report.kept_images:
        typer.echo(f"kept image {image} (in use)")
    if report.kept_containers:
        typer.echo(
            f"kept {len(report.kept_containers)} container(s) of runs still in progress (use --all to remove them)"
        )
    removed = (
        report.removed_containers
        or report.removed_images
        or report.removed_dirs
        or report.removed_builds
        or report.removed_cgroups
    )
    if not (removed or report.kept_containers):
        typer.echo("nothing to clean")
    for error in report.errors:
        typer.echo(f"error: {error}", err=True)
    if report.errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("clean")(clean_command)
