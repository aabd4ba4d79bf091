"""Flags this host needs for podman, found by probing it once per process (no Makefile needed).

podman asks the OCI runtime for a container open-files limit of 1048576 by default; on a host whose
caller's hard limit is lower (and without CAP_SYS_RESOURCE in its user namespace) runc then fails
every start with ``error setting rlimit type 7: operation not permitted``. The probe reads the
caller's RLIMIT_NOFILE / RLIMIT_NPROC hard limits (nproc at most kernel.pid_max: runc refused a
higher one here) and podman's cgroup manager and OCI runtime
(``podman info``), and chooses: ``--ulimit nofile=H:H`` / ``--ulimit nproc=H:H`` at those limits,
``--cgroup-manager=cgroupfs`` when podman would use systemd where no systemd runs, ``--runtime runc``
when podman's runtime is not installed but runc is. Flags the user gave (options or the
SKILLWORKS_CONTAINER_*_FLAGS environment) win: a probed flag is added only when its kind is absent.
``explain_oci_error`` turns an OCI start error into one line naming the cause and the flag."""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PODMAN_DEFAULT_NOFILE = 1048576
_RLIMIT_NAMES = {6: ("nproc", resource.RLIMIT_NPROC), 7: ("nofile", resource.RLIMIT_NOFILE)}
_RLIMIT_ERROR = re.compile(r"error setting rlimit type (\d+): (operation not permitted|invalid argument)")
_CGROUP_ERROR = re.compile(r"(systemd|dbus|sd-bus).*(not|no such|failed|refused)", re.IGNORECASE)


@dataclass(frozen=True)
class HostFlags:
    """What the probe chose: global flags (before every sub-command) and flags for run and build."""

    global_flags: tuple[str, ...] = ()
    run_flags: tuple[str, ...] = ()
    build_flags: tuple[str, ...] = ()


def _hard(limit: int) -> int | None:
    hard = resource.getrlimit(limit)[1]
    return None if hard == resource.RLIM_INFINITY else int(hard)


def _pid_max() -> int | None:
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text().strip())
    except (OSError, ValueError):
        return None


def ulimit_flags() -> tuple[str, ...]:
    """`--ulimit` flags at the caller's hard limits, for the limits podman's default would exceed."""
    flags: list[str] = []
    nofile = _hard(resource.RLIMIT_NOFILE)
    if nofile is not None and nofile < PODMAN_DEFAULT_NOFILE:
        flags += ["--ulimit", f"nofile={nofile}:{nofile}"]
    nproc = _hard(resource.RLIMIT_NPROC)
    pid_max = _pid_max()
    if pid_max is not None:  # measured here: runc refuses an nproc limit above kernel.pid_max (EPERM)
        nproc = pid_max if nproc is None else min(nproc, pid_max)
    if nproc is not None:
        flags += ["--ulimit", f"nproc={nproc}:{nproc}"]
    return tuple(flags)


def _podman_info(cli: str) -> tuple[str, str]:
    """podman's cgroup manager and OCI runtime name ("" when it cannot tell)."""
    try:
        proc = subprocess.run(
            [cli, "info", "--format", "{{.Host.CgroupManager}} {{.Host.OCIRuntime.Name}}"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "", ""
    parts = proc.stdout.split() if proc.returncode == 0 else []
    return (parts[0], parts[1]) if len(parts) >= 2 else ("", "")


def global_flags_for(cli: str) -> tuple[str, ...]:
    manager, runtime = _podman_info(cli)
    flags: list[str] = []
    if manager == "systemd" and not Path("/run/systemd/system").is_dir():
        flags.append("--cgroup-manager=cgroupfs")
    if runtime and shutil.which(runtime) is None and shutil.which("runc") is not None:
        flags += ["--runtime", "runc"]
    return tuple(flags)


def _has(flags: tuple[str, ...], name: str) -> bool:
    return any(f == name or f.startswith(name + "=") for f in flags)


def _has_ulimit(flags: tuple[str, ...], kind: str) -> bool:
    joined = " ".join(flags)
    return re.search(rf"--ulimit[= ]{kind}=", joined) is not None


@cache
def _probed(cli: str) -> HostFlags:
    return HostFlags(global_flags=global_flags_for(cli), run_flags=ulimit_flags(), build_flags=ulimit_flags())


def merge_host_flags(
    cli: str, global_flags: tuple[str, ...], run_flags: tuple[str, ...], build_flags: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The user's flags plus the probed ones whose kind the user did not give (podman only)."""
    probed = _probed(cli)
    g = list(global_flags)
    pairs = list(zip(probed.global_flags, probed.global_flags[1:], strict=False))
    if "--cgroup-manager=cgroupfs" in probed.global_flags and not _has(global_flags, "--cgroup-manager"):
        g.append("--cgroup-manager=cgroupfs")
    if ("--runtime", "runc") in pairs and not _has(global_flags, "--runtime"):
        g += ["--runtime", "runc"]

    def add_ulimits(given: tuple[str, ...], chosen: tuple[str, ...]) -> tuple[str, ...]:
        out = list(given)
        for i in range(0, len(chosen), 2):
            kind = chosen[i + 1].split("=", 1)[0]
            if not _has_ulimit(given, kind):
                out += chosen[i : i + 2]
        return tuple(out)

    return tuple(g), add_ulimits(run_flags, probed.run_flags), add_ulimits(build_flags, probed.build_flags)


def explain_oci_error(stderr: str) -> str | None:
    """One line naming the cause and the flag for an OCI start error this module knows, else None."""
    match = _RLIMIT_ERROR.search(stderr)
    if match is not None:
        number = int(match.group(1))
        name, limit = _RLIMIT_NAMES.get(number, (f"type {number}", None))
        hard = _hard(limit) if limit is not None else None
        if name == "nproc" and (pid_max := _pid_max()) is not None:
            hard = pid_max if hard is None else min(hard, pid_max)
        value = f"{hard}:{hard}" if hard is not None else "N:N"
        return (
            f"the OCI runtime may not set the container's {name} limit above this process's hard limit "
            f"({hard if hard is not None else 'unknown'}): pass --container-run-flag '--ulimit {name}={value}' "
            "(or set SKILLWORKS_CONTAINER_RUN_FLAGS)"
        )
    if "cgroup" in stderr and _CGROUP_ERROR.search(stderr):
        return (
            "podman's systemd cgroup manager is unavailable here: pass --container-global-flag "
            "--cgroup-manager=cgroupfs (or set SKILLWORKS_CONTAINER_GLOBAL_FLAGS)"
        )
    return None
