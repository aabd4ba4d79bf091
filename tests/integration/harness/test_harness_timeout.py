"""A harness that runs past the task's agent timeout is stopped (its whole process tree) and the trial is a
`timeout` failure scored by the verifier, not a hang and not an infrastructure error. The model is the
scripted provider, told to answer slower than the timeout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillworks.experiment import RunStore

from .conftest import TASK, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]

SLOW_SCRIPT = """\
by_task:
  greeting-card:
    - text: "thinking..."
      delay_sec: 60
"""


def test_claude_code_past_the_agent_timeout_is_a_timeout_failure(tmp_path: Path) -> None:
    task = tmp_path / "greeting-card"
    shutil.copytree(TASK, task)
    manifest = task / "task.md"
    manifest.write_text(manifest.read_text().replace("timeout_sec: 300", "timeout_sec: 8"))
    script = tmp_path / "slow.yaml"
    script.write_text(SLOW_SCRIPT)
    out = tmp_path / "runs"
    proc = skillworks(
        "run", str(task), "--agent", "claude-code", "--model", f"scripted/{script}", "--conditions", "curated",
        "--out", str(out), "--run-id", "slow",
    )  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    [result] = RunStore(out / "slow").read_results()
    assert result.error is None, result.error
    assert (result.outcome, result.failure_mode, result.reward) == ("failed", "timeout", 0.0)
    assert 8 <= result.timings.agent_sec < 40
