"""A run killed with SIGKILL cannot remove its local-sandbox trial cgroups (nor kill what runs in them);
`skillworks clean` finds those whose skillworks process is gone and removes them, and leaves those of a
live process alone. Real cgroups, a real SIGKILL, the real CLI."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from skillworks.sandbox._limits import LimitRequest, TrialLimits, leftover_cgroups

SKILLWORKS = Path(sys.executable).with_name("skillworks")

_HOLDER = textwrap.dedent(
    """
    import subprocess, sys, time
    from skillworks.sandbox._limits import LimitRequest, TrialLimits
    limits = TrialLimits.create(LimitRequest(pids=64))
    child = subprocess.Popen(["sleep", "1000"], preexec_fn=limits.preexec)
    print(" ".join(str(d) for d in limits._dirs), child.pid, flush=True)
    time.sleep(1000)
    """
)


def _cgroups_writable() -> bool:
    limits = TrialLimits.create(LimitRequest(pids=64))
    try:
        return limits.mechanism.startswith("cgroup")
    finally:
        limits.close()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def test_clean_removes_the_cgroups_of_a_killed_run() -> None:
    if not _cgroups_writable():
        pytest.skip("no writable cgroup file system here: trial cgroups are not used")
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    *dirs, sleeper = holder.stdout.readline().split()
    cgroups = [Path(d) for d in dirs]
    assert cgroups and all(d.is_dir() for d in cgroups)
    # while its process lives, the cgroup is not a leftover
    assert not set(cgroups) & set(leftover_cgroups())

    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert _alive(int(sleeper)), "the trial's process outlives a killed run"
    assert set(cgroups) <= set(leftover_cgroups())

    dry = subprocess.run([str(SKILLWORKS), "clean", "--dry-run"], capture_output=True, text=True, timeout=180)
    assert dry.returncode == 0, dry.stderr
    assert f"would remove cgroup {cgroups[0]}" in dry.stdout and all(d.is_dir() for d in cgroups)

    done = subprocess.run([str(SKILLWORKS), "clean"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert f"removed cgroup {cgroups[0]}" in done.stdout, done.stdout
    assert not any(d.exists() for d in cgroups)
    deadline = time.monotonic() + 10
    while _alive(int(sleeper)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(int(sleeper)), "what ran in the cgroup was killed"
    with contextlib.suppress(OSError):
        os.kill(int(sleeper), signal.SIGKILL)
