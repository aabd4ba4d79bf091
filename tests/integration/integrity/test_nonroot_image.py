"""Issue 30: a task image with a non-root `USER` runs oracle and builtin trials with reward 1 (before,
every trial errored: pid 1 ran as that user and could not make /logs, and died on the failed
redirection). Run through `skillworks run` on podman; the model provider (`scripted`) is the one
test double, everything else (image build, container, verifier) is real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from skillworks.results import TrialResult

from .conftest import PY_IMAGE

pytestmark = [pytest.mark.podman, pytest.mark.slow]


def test_a_non_root_image_user_runs_oracle_and_builtin_trials(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "nonroot"
    for sub in ("environment", "verifier", "oracle"):
        (task / sub).mkdir(parents=True)
    (task / "task.md").write_text(
        textwrap.dedent(
            """\
            ---
            schema_version: "1.3"
            task:
              name: skillworks-integrity/nonroot
              description: A task image whose USER is not root.
              authors:
                - name: skillworks
            agent:
              timeout_sec: 120
            verifier:
              timeout_sec: 60
            environment:
              network_mode: no-network
            ---

            Write the number 42 to `/app/answer.txt`.
            """
        )
    )
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {PY_IMAGE}\nRUN useradd -m -u 1234 worker && mkdir -p /app && chown worker /app\nUSER worker\nWORKDIR /app\n"
    )
    (task / "verifier" / "test.sh").write_text(
        "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
        'if grep -qx 42 /app/answer.txt && [ "$(stat -c %u /app/answer.txt)" = 1234 ]; then r=1; else r=0; fi\n'
        'echo "$r" > /logs/verifier/reward.txt\n'
    )
    (task / "oracle" / "solve.sh").write_text("#!/usr/bin/env bash\necho 42 > /app/answer.txt\n")
    script = tmp_path / "script.yaml"
    command = "echo 42 > /app/answer.txt; id -u > /logs/agent/uid.txt"
    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "done"}]
    script.write_text(yaml.safe_dump({"by_task": {"nonroot": turns}}))
    argv = [sys.executable, "-m", "skillworks.cli.main", "run", str(tmp_path / "tasks"), "--agent", "oracle"]
    argv += ["--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "none", "--env", "container"]
    argv += ["--out", str(tmp_path / "runs"), "--run-id", "nonroot"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = (tmp_path / "runs" / "nonroot" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2
    run_dir = tmp_path / "runs" / "nonroot"
    results = [TrialResult.model_validate(json.loads(line)) for line in lines]
    for result in results:
        assert result.error is None, (result.agent, result.error)
        assert result.reward == 1.0, result.agent
    builtin = next(r for r in results if r.agent.startswith("builtin"))
    uid = run_dir / "trials" / builtin.trial_id / "agent" / "sandbox-logs" / "uid.txt"
    assert uid.read_text().strip() == "1234"  # the agent ran as the image's user and wrote its logs
