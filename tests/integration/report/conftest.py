"""The report tests' real run (the browser fixture `chromium` is in tests/conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def skillworks(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real paired run (builtin agent, local sandbox, gateway) of one quickstart task, none vs curated,
    two trials each. The model is the scripted provider, the one test double."""
    out = tmp_path_factory.mktemp("runs")
    script = REPO / "examples" / "scripted" / "quickstart-builtin.yaml"
    proc = skillworks(
        "run", str(REPO / "examples" / "quickstart" / "invoice-from-template"), "--agent", "builtin",
        "--model", f"scripted/{script}", "--conditions", "none,curated", "--trials", "2", "--concurrency", "4",
        "--out", str(out), "--run-id", "pages",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # not a terminal: one plain line per finished trial (id, outcome, reward, seconds) and a summary, each
    # within 80 columns (this 58-character id is shortened with …, its condition and trial index whole)
    assert max(len(line) for line in proc.stderr.splitlines()[:6]) <= 80, proc.stderr
    trial_lines = re.findall(
        r"^\[\d/4\] invoice-\S*__(?:none|curated)__\S+__t[01]  (?:solved|failed|partial)  reward \d\.\d\d  \d+\.\ds$",
        proc.stderr,
        re.M,
    )
    assert len(trial_lines) == 4, proc.stderr
    assert re.search(
        r"^-- 4/4 trials done, 0 running \| .* \| tokens in [\d,]+ out [\d,]+\n   cost \$", proc.stderr, re.M
    )
    return out / "pages"
