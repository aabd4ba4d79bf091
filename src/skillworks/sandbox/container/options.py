"""Options of the container backend, from CLI flags, keyword arguments or the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillworks.errors import UserError
from skillworks.sandbox.container.dockerfile import parse_image_map
from skillworks.sandbox.container.image import BuildOptions
from skillworks.sandbox.container.registry import parse_registry
from skillworks.sandbox.container.runtime import (
    ENV_BUILD_FLAGS,
    ENV_CLI,
    ENV_GLOBAL_FLAGS,
    ENV_RUN_FLAGS,
    split_flags,
)

ENV_IMAGE_MAP = "SKILLWORKS_IMAGE_MAP"  # space/comma separated SOURCE=TARGET items
ENV_CA_BUNDLE = "SKILLWORKS_CA_BUNDLE"


@dataclass(frozen=True)
class ContainerOptions:
    """How to build and run a task's container.

    cli / *_flags: the runtime and its extra flags (None: from the environment, see runtime.py).
    image_map: FROM rewrites (`{"ubuntu:24.04": "localhost/base"}`, `"*"` maps every base image).
    ca_bundle: a host CA bundle mounted read-only at build and run, with SSL_CERT_FILE,
        REQUESTS_CA_BUNDLE, PIP_CERT, CURL_CA_BUNDLE and NODE_EXTRA_CA_CERTS pointing at it.
    strip_skills: build the variant without the task's baked-in skills (COPY skills ... removed,
        skills/ left out of the context); the runner sets it when the condition must not see them.
    model_channel: mount the forwarder (one small read-only mount) so `open_model_channel` works;
        False for trials that never call a model (oracle, nop), which saves the mount.
    model_socket_dir: host directory holding the gateway's unix socket, mounted at start; without
        it the channel relays through a socket in the forwarder's mount (works the same).
    run_id: the run label; default: the enclosing `container_session`, else one id per process.
    image_registry: `host[:port][/namespace]`: pull task images from there before building, push them
        after building (see registry.py); registry_tls_verify False: plain HTTP / self-signed (podman
        `--tls-verify=false`), None: the runtime's configuration (registries.conf, daemon.json).
    """

    cli: str | None = None
    global_flags: tuple[str, ...] | None = None
    run_flags: tuple[str, ...] | None = None
    build_flags: tuple[str, ...] | None = None
    image_map: Mapping[str, str] = field(default_factory=dict)
    ca_bundle: Path | None = None
    force_build: bool = False
    strip_skills: bool = False
    model_channel: bool = True
    model_socket_dir: Path | None = None
    run_id: str | None = None
    image_registry: str | None = None
    registry_tls_verify: bool | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ContainerOptions:
        """Options from SKILLWORKS_CONTAINER_* / SKILLWORKS_IMAGE_MAP / SKILLWORKS_CA_BUNDLE, then
        `overrides` (keyword arguments named like the fields; None values are ignored)."""
        env = os.environ if environ is None else environ
        base = cls(
            cli=env.get(ENV_CLI) or None,
            global_flags=split_flags(env.get(ENV_GLOBAL_FLAGS)),
            run_flags=split_flags(env.get(ENV_RUN_FLAGS)),
            build_flags=split_flags(env.get(ENV_BUILD_FLAGS)),
            image_map=parse_image_map(env.get(ENV_IMAGE_MAP, "").replace(",", " ").split()),
            ca_bundle=Path(env[ENV_CA_BUNDLE]) if env.get(ENV_CA_BUNDLE) else None,
        )
        return base.merged(**overrides)

    def build_options(self) -> BuildOptions:
        """How to build (or pull) the task image these options select."""
        return BuildOptions(
            self.image_map,
            self.strip_skills,
            self.force_build,
            self.ca_bundle,
            registry=self.image_registry,
            registry_tls_verify=self.registry_tls_verify,
        )

    def merged(self, **overrides: Any) -> ContainerOptions:
        known = set(self.__dataclass_fields__)
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise UserError(f"unknown container option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
        values = {k: v for k, v in overrides.items() if v is not None}
        for key in ("global_flags", "run_flags", "build_flags"):
            if key in values:
                values[key] = _flag_tuple(values[key])
        if "image_map" in values and not isinstance(values["image_map"], Mapping):
            values["image_map"] = parse_image_map(list(values["image_map"]))
        if "image_registry" in values:
            values["image_registry"] = parse_registry(str(values["image_registry"]))
        for key in ("ca_bundle", "model_socket_dir"):
            if key in values:
                values[key] = Path(values[key])
        return replace(self, **values)


def _flag_tuple(value: str | Sequence[str]) -> tuple[str, ...]:
    return split_flags(value) if isinstance(value, str) else tuple(value)
