"""Issue 30: `--out` on a full disk. A real tmpfs (mounted here as root; skipped where mounting is
not allowed) is filled before the run but for 40 KiB: `skillworks run` ends with one line naming the path and ENOSPC,
no traceback, results.jsonl holds only whole lines, and once there is room `--resume` finishes the
run. The scripted builtin agent (`scripted` provider: the one test double) does the work."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import Attack, run_suite, write_suite

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)]).returncode:
        pytest.skip("needs root to mount a small tmpfs")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_out_disk_is_one_line_and_resume_continues(tmp_path: Path, small_disk: Path) -> None:
    attacks = [Attack("first", ("echo 42 > /app/answer.txt",)), Attack("second", ("echo 42 > /app/answer.txt",))]
    tasks, script = write_suite(tmp_path, attacks, container=False)
    filler = small_disk / "filler"
    with filler.open("wb") as f:  # fill it
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    # room for experiment.json and a little more, not for the trials' files
    os.truncate(filler, filler.stat().st_size - 40 * 1024)
    out = small_disk / "runs"
    proc, _ = run_suite(tmp_path, tasks, script, "--concurrency", "1", env={})  # for its argv
    argv_out = proc.args
    assert str(tmp_path / "runs") in argv_out  # run_suite's own --out: replace it with the small disk
    full = subprocess.run(
        [*argv_out[: argv_out.index("--out")], "--out", str(out), *argv_out[argv_out.index("--out") + 2 :]],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert full.returncode == 1, full.stderr[-2000:]
    lines = [ln for ln in full.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in full.stderr, full.stderr[-2000:]
    [error] = [ln for ln in lines if ln.startswith("error:")]
    assert "ENOSPC" in error and str(out) in error
    results = out / "attack" / "results.jsonl"
    if results.exists():
        for line in results.read_text().splitlines():
            json.loads(line)  # whole lines only
    filler.unlink()
    resumed = subprocess.run(
        [*argv_out[:4], "--resume", str(out / "attack")], capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    recorded = [json.loads(line) for line in results.read_text().splitlines()]
    assert {r["task_id"] for r in recorded} == {"first", "second"}
