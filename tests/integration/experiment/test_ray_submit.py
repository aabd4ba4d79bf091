"""`skillworks run --executor ray --submit` against a real Ray job server: a head node started here with its
dashboard (`ray start --head --include-dashboard=true`), the driver run by the cluster as a Ray Job, trials in
real bubblewrap sandboxes on the node. The builtin agent's model is the scripted provider (no model API is
reachable here). What is checked: the submitting command prints the job id and returns at once, the job
succeeds, and results.jsonl and the reports are written where --out points on the cluster, from the uploaded
copy of the tasks; a resubmitted `--resume` finds every trial recorded."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
RAY = Path(sys.executable).with_name("ray")
SKILLWORKS = [sys.executable, "-m", "skillworks.cli.main"]
SCRIPT = REPO / "examples" / "scripted" / "quickstart-builtin.yaml"
AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def job_server() -> Iterator[str]:
    """A one-node cluster with its dashboard and job server, with token authentication (as a real cluster
    should have; the submitter gets the token through Ray's environment variables); its `python` is this venv's
    (what the job runs)."""
    pytest.importorskip("ray.dashboard.modules.job.sdk", reason="ray[default] (the job server) is not installed")
    temp = Path("/tmp") / f"swsub-{os.getpid()}"  # short: Ray's unix socket paths must stay < 108 bytes
    dashboard = _free_port()
    env = {
        **os.environ,
        "PATH": f"{RAY.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "RAY_USAGE_STATS_ENABLED": "0",
        **AUTH,
        "RAY_agent_register_timeout_ms": "180000",
        "RAY_raylet_start_wait_time_s": "180",
    }
    cmd = [
        str(RAY),
        "start",
        "--head",
        "--port",
        str(_free_port()),
        "--num-cpus",
        "2",
        "--resources",
        json.dumps({"skillworks_local": 1000}),
        "--include-dashboard=true",
        "--dashboard-host",
        "127.0.0.1",
        "--dashboard-port",
        str(dashboard),
        "--temp-dir",
        str(temp),
        "--node-ip-address",
        "127.0.0.1",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    try:
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        yield f"http://127.0.0.1:{dashboard}"
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def _submit(args: list[str], address: str) -> subprocess.CompletedProcess[str]:
    cmd = [*SKILLWORKS, "run", *args, "--executor", "ray", "--ray-address", address, "--submit"]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, **AUTH})


def _wait(address: str, job_id: str, timeout: float = 900) -> tuple[str, str]:
    from ray.job_submission import JobStatus, JobSubmissionClient

    client = JobSubmissionClient(address, headers={"Authorization": f"Bearer {AUTH['RAY_AUTH_TOKEN']}"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get_job_status(job_id)
        if status in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED):
            return str(status.value), client.get_job_logs(job_id)
        time.sleep(2)
    client.stop_job(job_id)
    raise AssertionError(f"job {job_id} did not end in {timeout} s: {client.get_job_logs(job_id)[-3000:]}")


def _results(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


def test_a_submitted_run_is_driven_by_the_cluster_and_writes_where_out_points(job_server: str, tmp_path: Path) -> None:
    out = tmp_path / "cluster-runs"
    tasks = tmp_path / "laptop" / "quickstart"  # the tasks exist only here until uploaded with the job
    shutil.copytree(REPO / "examples" / "quickstart", tasks, symlinks=True)
    args = [str(tasks), "--agent", "builtin", "--model", f"scripted/{SCRIPT}", "--out", str(out), "--run-id", "sub"]
    started = time.monotonic()
    submitted = _submit(args, job_server)
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    assert time.monotonic() - started < 120  # the submitter does not drive the run
    job_id = submitted.stdout.strip()
    assert job_id.startswith("skillworks-sub-") and f"submitted Ray job {job_id}" in submitted.stderr
    assert f"ray job logs -f --address {job_server} {job_id}" in submitted.stderr
    assert f"skillworks run --resume {out / 'sub'}" in submitted.stderr
    shutil.rmtree(tasks.parent)  # the laptop's copy goes away: the job ran from its upload

    status, logs = _wait(job_server, job_id)
    assert status == "SUCCEEDED", logs[-4000:]
    run_dir = out / "sub"
    results = _results(run_dir)
    assert len(results) == 8 and {r["outcome"] for r in results} == {"solved", "failed"}  # scripted none/curated
    assert (run_dir / "report.md").is_file() and (run_dir / "summary.json").is_file()
    spec = json.loads((run_dir / "experiment.json").read_text())
    kept = out / ".submitted" / "sub"
    assert all(Path(t["path"]).is_relative_to(kept) and Path(t["path"]).is_dir() for t in spec["tasks"])
    assert spec["extra"]["executor"] == {"name": "ray", "address": "auto", "retries": 1, "cpus_per_trial": None}
    assert "ran 8 trial(s)" in logs

    resumed = _submit(["--resume", str(run_dir)], job_server)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    status, logs = _wait(job_server, resumed.stdout.strip())
    assert status == "SUCCEEDED", logs[-4000:]
    assert "ran 0 trial(s) (8 already recorded" in logs and len(_results(run_dir)) == 8
