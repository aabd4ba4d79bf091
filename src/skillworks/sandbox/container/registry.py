"""Sharing task images through a container registry (`--image-registry`).

A task image is named by its content hash (``skillworks/env:<hash16>``), so the same name means the
same image on every machine: before building, a node tries to pull ``<registry>/skillworks/env:<hash16>``;
after building, it pushes the image there, and the next node pulls instead of building.

Everything goes through the runtime's own CLI (``podman pull/push``, ``docker pull/push``), so
authentication and TLS are the runtime's: ``podman login`` / ``docker login`` (or ``REGISTRY_AUTH_FILE``),
podman's ``registries.conf`` (``insecure = true``) or docker's ``insecure-registries``. ``tls_verify``
False adds podman's ``--tls-verify=false`` (a plain-HTTP or self-signed registry); docker has no such
per-command switch. A registry that cannot be reached is never fatal: a failed pull falls back to
building, a failed push leaves the trial on its local image; both are recorded and warned about, and a
registry found unreachable is not tried again by this process.
"""

from __future__ import annotations

import logging
import re

from skillworks.errors import UserError
from skillworks.sandbox.base import SandboxError
from skillworks.sandbox.container.runtime import CommandResult, ContainerRuntime, run_command

log = logging.getLogger(__name__)

PULL_TIMEOUT_SEC = 1800.0
PUSH_TIMEOUT_SEC = 1800.0

# the reference grammar of the distribution spec: a host (name or IPv4, optional port), then lowercase
# path components; the host must look like one (a dot, a port or `localhost`), as docker and podman read it
_HOST_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"{_HOST_PART}(?:\.{_HOST_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REGISTRY_RE = re.compile(rf"^(?P<host>{_HOST})(?P<path>(?:/{_PATH_PART})*)$")
# what the runtimes print when the registry answered but has no such image (a normal first pull)
_NOT_THERE = ("manifest unknown", "not found", "name unknown", "does not exist")
# what they print when the registry itself is the problem (connection, TLS, DNS)
_UNREACHABLE = (
    "connection refused",
    "no such host",
    "i/o timeout",
    "network is unreachable",
    "server gave http response",
    "x509",
    "tls",
    "certificate",
    "timeout",
    "did not finish",
)


def parse_registry(value: str) -> str:
    """`host[:port][/namespace...]` (e.g. `ghcr.io/acme`, `localhost:5000`) without scheme, tag or
    trailing slash; a UserError naming the problem otherwise."""
    text = value.strip()
    if not text:
        raise UserError("--image-registry: empty registry reference")
    if "://" in text:
        raise UserError(
            f"--image-registry {value!r}: give host[:port][/namespace] without a scheme "
            "(plain HTTP: --no-image-registry-tls-verify)"
        )
    text = text.rstrip("/")
    match = _REGISTRY_RE.match(text)
    if match is None or "@" in text:
        raise UserError(
            f"--image-registry {value!r} is not a registry reference: expected host[:port][/namespace] "
            "with a lowercase namespace, e.g. ghcr.io/acme or localhost:5000"
        )
    host = match["host"]
    if "." not in host and ":" not in host and host != "localhost":
        raise UserError(
            f"--image-registry {value!r}: the first part must be a registry host "
            f"(with a dot or a port, or localhost), e.g. docker.io/{text}"
        )
    return text


def registry_ref(registry: str, local_tag: str) -> str:
    """The image's name in the registry: `<registry>/skillworks/env:<hash16>`."""
    return f"{registry}/{local_tag}"


def _tls_args(runtime: ContainerRuntime, tls_verify: bool | None) -> list[str]:
    if tls_verify is None or runtime.kind != "podman":
        return []  # the runtime's configuration decides (registries.conf / daemon.json)
    return [f"--tls-verify={'true' if tls_verify else 'false'}"]


def _unreachable(result: CommandResult | str) -> bool:
    text = (result if isinstance(result, str) else result.stderr + result.stdout).lower()
    return any(marker in text for marker in _UNREACHABLE) and not any(m in text for m in _NOT_THERE)


_UNREACHABLE_REGISTRIES: dict[str, str] = {}  # registry -> why, for the rest of this process


def known_unreachable(registry: str) -> str | None:
    return _UNREACHABLE_REGISTRIES.get(registry)


async def _run(argv: list[str], timeout: float) -> CommandResult:
    try:
        return await run_command(argv, timeout=timeout)
    except SandboxError as exc:  # timed out
        return CommandResult(tuple(argv), 124, "", str(exc))


async def pull_image(
    runtime: ContainerRuntime, registry: str, local_tag: str, tls_verify: bool | None
) -> tuple[bool, str | None]:
    """Pull the image from the registry and give it its local tag. (pulled, why not): `why` is None when
    the registry simply does not hold it yet."""
    remote = registry_ref(registry, local_tag)
    earlier = known_unreachable(registry)
    if earlier is not None:
        return False, f"registry {registry} unreachable earlier in this run: {earlier}"
    result = await _run(runtime.argv("pull", "--quiet", *_tls_args(runtime, tls_verify), remote), PULL_TIMEOUT_SEC)
    if not result.ok:
        line = result.error_line()
        if _unreachable(result):
            _UNREACHABLE_REGISTRIES[registry] = line
            log.warning("cannot pull %s (building the image instead): %s", remote, line)
            return False, f"pull {remote} failed: {line}"
        return False, None if any(m in line.lower() for m in _NOT_THERE) else f"pull {remote} failed: {line}"
    tagged = await _run(runtime.argv("tag", remote, local_tag), 120)
    await _run(runtime.argv("rmi", remote), 120)  # only the registry's name; the image keeps local_tag
    if not tagged.ok:
        return False, f"pulled {remote} but cannot tag it {local_tag}: {tagged.error_line()}"
    return True, None


async def push_image(runtime: ContainerRuntime, registry: str, local_tag: str, tls_verify: bool | None) -> str | None:
    """Push the local image to the registry; None when it is there, else why not (also logged as a warning:
    the trial goes on with the local image)."""
    remote = registry_ref(registry, local_tag)
    earlier = known_unreachable(registry)
    if earlier is not None:
        return f"registry {registry} unreachable earlier in this run: {earlier}"
    tagged = await _run(runtime.argv("tag", local_tag, remote), 120)
    if not tagged.ok:
        why = f"cannot tag {local_tag} as {remote}: {tagged.error_line()}"
    else:
        result = await _run(runtime.argv("push", "--quiet", *_tls_args(runtime, tls_verify), remote), PUSH_TIMEOUT_SEC)
        await _run(runtime.argv("rmi", remote), 120)
        if result.ok:
            return None
        why = f"push {remote} failed: {result.error_line()}"
        if _unreachable(result):
            _UNREACHABLE_REGISTRIES[registry] = result.error_line()
    log.warning("%s (the trial uses the local image)", why)
    return why
