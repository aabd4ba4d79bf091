"""Issue 30 on real SkillsBench tasks (../shared/real-tasks): under the new default (the verifier in a fresh
container with the agent's outputs copied in) the deterministic task keeps its oracle score 1.0, and
the oracle changes nothing outside the copied outputs (`outputs_not_copied` empty). The oracle agent runs
the task's own solve.sh; nothing is a double. Skips when podman or the shared tasks are absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.podman, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
REAL = next((p / "shared" / "real-tasks" for p in REPO.parents if (p / "shared" / "real-tasks").is_dir()), None)
TASKS = ["lake-warming-attribution"]  # deterministic here (r2r-mpc-control is flaky by its own noise)


@pytest.mark.skipif(shutil.which("podman") is None or REAL is None, reason="needs podman and ../shared/real-tasks")
def test_real_task_oracle_keeps_reward_1_with_nothing_left_uncopied(tmp_path: Path) -> None:
    assert REAL is not None
    argv = [sys.executable, "-m", "skillworks.cli.main", "run", *(str(REAL / t) for t in TASKS)]
    argv += ["--agent", "oracle", "--conditions", "none", "--env", "container", "--out", str(tmp_path)]
    argv += ["--run-id", "real", "--image-map", "ubuntu:24.04=localhost/skillworks-base"]
    ca = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    if Path(ca).is_file():
        argv += ["--ca-bundle", ca]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(line) for line in (tmp_path / "real" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in results) == sorted(TASKS)
    for result in results:
        assert result["reward"] == 1.0, (result["task_id"], result["error"])
        assert result["verifier_isolation"] == "fresh"
        assert result["outputs_not_copied"] == [], result["outputs_not_copied"]
