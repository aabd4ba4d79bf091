"""Issue 10: `skillworks tasks check` warns about a verifier that imports python from the agent's
workspace (``cd /app && python3 -m pytest``, PYTHONPATH=/app, sys.path.insert(0, "/app")): a module
the agent leaves there would shadow the verifier's own. A verifier that stays in /tests is not flagged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "tasks_sandbox" / "peek-at-answers"


def _check(task: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "tasks", "check", "--json", str(task)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300"},
    )


@pytest.mark.parametrize(
    ("script", "flagged"),
    [
        ("cd /app && python3 -m pytest /tests/test_outputs.py", True),
        ("cd /app\npython3 - <<'PY'\nimport csv\nPY", True),
        ("export PYTHONPATH=/app:$PYTHONPATH\npytest /tests/test_outputs.py", True),
        ("python3 -m pytest /tests/test_outputs.py", False),
        ("cd /app && pytest /tests/test_outputs.py", False),
    ],
)
def test_verifier_importing_from_the_workspace_is_flagged(tmp_path: Path, script: str, flagged: bool) -> None:
    task = tmp_path / "task"
    shutil.copytree(FIXTURE, task)
    (task / "verifier" / "test.sh").write_text(f"#!/usr/bin/env bash\n{script}\n")
    proc = _check(task)
    assert "Traceback" not in proc.stderr
    assert ("verifier-imports-workspace" in proc.stdout + proc.stderr) is flagged, proc.stdout + proc.stderr
