"""The container backend's command-line flags, shared by `run`, `tasks check` and `eval`: one definition
of each flag and one place that turns them into the backend's options (recorded in experiment.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from skillworks.errors import UserError
from skillworks.sandbox.container.registry import parse_registry

_PANEL = "Container backend"

ContainerCli = Annotated[str | None, typer.Option(help="docker or podman", rich_help_panel=_PANEL)]
ContainerGlobalFlags = Annotated[
    list[str] | None,
    typer.Option(help="extra global flag of the runtime, e.g. --runtime runc (repeat)", rich_help_panel=_PANEL),
]
ContainerRunFlags = Annotated[
    list[str] | None, typer.Option(help="extra flag for `run` (repeat)", rich_help_panel=_PANEL)
]
ContainerBuildFlags = Annotated[
    list[str] | None, typer.Option(help="extra flag for `build` (repeat)", rich_help_panel=_PANEL)
]
ImageMap = Annotated[
    list[str] | None,
    typer.Option(help="rewrite FROM images, e.g. ubuntu:24.04=localhost/base (repeat)", rich_help_panel=_PANEL),
]
CaBundle = Annotated[
    Path | None,
    typer.Option(help="CA bundle mounted into builds and containers (corporate proxies)", rich_help_panel=_PANEL),
]
ForceBuild = Annotated[bool, typer.Option(help="rebuild task images", rich_help_panel=_PANEL)]
ImageRegistry = Annotated[
    str | None,
    typer.Option(
        help="share task images through a registry, HOST[:PORT], optionally /NAMESPACE after it: pull before "
        "building, push after (log in with podman/docker login)",
        rich_help_panel=_PANEL,
    ),
]
ImageRegistryTlsVerify = Annotated[
    bool | None,
    typer.Option(
        "--image-registry-tls-verify/--no-image-registry-tls-verify",
        help="verify the registry's TLS certificate (podman); default: registries.conf / the daemon's settings",
        rich_help_panel=_PANEL,
        show_default=False,
    ),
]

Prebuild = Annotated[
    bool,
    typer.Option(
        "--prebuild/--no-prebuild",
        help="with --image-registry: build each distinct task image once and push it before any trial "
        "(a build or push failure stops the run first); --no-prebuild: each node pulls or builds it on its "
        "first trial",
        rich_help_panel=_PANEL,
    ),
]


def container_env_options(
    env: str,
    container_cli: str | None,
    global_flags: list[str] | None,
    run_flags: list[str] | None,
    build_flags: list[str] | None,
    image_map: list[str] | None,
    ca_bundle: Path | None,
    force_build: bool,
    image_registry: str | None = None,
    image_registry_tls_verify: bool | None = None,
) -> dict[str, Any]:
    """Flags of the container backend as plain data (they are recorded in experiment.json); they only
    make sense with `--env container`."""
    options: dict[str, Any] = {}
    if container_cli:
        options["container_cli"] = container_cli
    if global_flags:
        options["global_flags"] = list(global_flags)
    if run_flags:
        options["run_flags"] = list(run_flags)
    if build_flags:
        options["build_flags"] = list(build_flags)
    if image_map:
        mapping: dict[str, str] = {}
        for item in image_map:
            if "=" not in item:
                raise UserError(f"--image-map expects FROM=TO, got {item!r}")
            src, dst = item.split("=", 1)
            mapping[src.strip()] = dst.strip()
        options["image_map"] = mapping
    if ca_bundle is not None:
        if not ca_bundle.is_file():
            raise UserError("CA bundle not found", ca_bundle)
        options["ca_bundle"] = str(ca_bundle.resolve())
    if force_build:
        options["force_build"] = True
    if image_registry is not None:
        options["image_registry"] = parse_registry(image_registry)
    if image_registry_tls_verify is not None:
        if image_registry is None:
            raise UserError("--image-registry-tls-verify / --no-image-registry-tls-verify need --image-registry")
        options["registry_tls_verify"] = image_registry_tls_verify
    if options and env != "container":
        raise UserError(f"container options ({', '.join(sorted(options))}) need --env container")
    return options
