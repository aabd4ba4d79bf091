"""Issue 30: task ids and file names with ANSI escapes or RTL overrides are printed escaped, in the
progress lines of `skillworks run` and in its report and trial pages. The scripted builtin agent
(`scripted` provider: the one test double) lists a file whose name holds both; the sandbox is real."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

ESC, RLO = "\x1b", "\u202e"
TASK_ID = f"evil{ESC}[31mred{RLO}txt"


def test_control_characters_are_printed_escaped(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / TASK_ID
    (task / "verifier").mkdir(parents=True)
    (task / "environment").mkdir()
    (task / "environment" / "README.md").write_text("empty\n")
    (task / "task.md").write_text(
        '---\nschema_version: "1.3"\ntask:\n  name: t/evil\n  description: control characters.\n'
        "  authors:\n    - name: skillworks\nagent:\n  timeout_sec: 60\nverifier:\n  timeout_sec: 30\n"
        "environment:\n  network_mode: no-network\n---\n\nList the workspace.\n"
    )
    (task / "verifier" / "test.sh").write_text(
        "#!/usr/bin/env bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    )
    command = "touch \"$(printf 'f\\033[2J\\342\\200\\256name')\" && ls"
    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "done"}]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"by_task": {TASK_ID: turns}}, allow_unicode=False))
    argv = [sys.executable, "-m", "skillworks.cli.main", "run", str(tmp_path / "tasks"), "--agent", "builtin"]
    argv += ["--model", f"scripted/{script}", "--conditions", "none", "--out", str(tmp_path / "runs"), "--run-id", "c"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = proc.stdout + proc.stderr
    # the id is there, escaped (its progress line shortens it with … to stay within 80 columns)
    assert re.search(r"^\[1/1\] evil\\x1b\[3\S*__none__builtin-script__t0  failed", printed, re.M), printed
    assert ESC not in printed and RLO not in printed
    pages = [p for p in (tmp_path / "runs" / "c").rglob("*.html")]
    assert pages
    seen = "".join(p.read_text() for p in pages)
    assert "f\\x1b[2J\\u202ename" in seen  # the agent's file name, from its tool output, escaped
    assert ESC not in seen and RLO not in seen
