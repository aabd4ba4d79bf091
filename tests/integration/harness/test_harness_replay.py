"""Replay with a real agent CLI: Claude Code's recorded run (the `scripted` provider is the one test double,
its script deleted before the replay) runs again from the recording alone and reproduces the trajectory
(session id and step timestamps masked) and the reward."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from skillworks.experiment import RunStore

from .conftest import SCRIPTS, TASK, skillworks

pytestmark = [pytest.mark.node, pytest.mark.bwrap, pytest.mark.slow]
_VOLATILE = re.compile(rb'"(session_id|timestamp)": "[^"]*"')


def test_claude_code_trial_replays_from_its_recording(tmp_path: Path) -> None:
    script = tmp_path / "claude-code.yaml"
    shutil.copy(SCRIPTS / "claude-code.yaml", script)
    args = ["--agent", "claude-code", "--model", f"scripted/{script}", "--conditions", "curated"]
    rec = skillworks("run", str(TASK), *args, "--out", str(tmp_path), "--run-id", "rec")
    assert rec.returncode == 0, rec.stderr
    script.unlink()  # no provider from here on
    rep = skillworks("run", "--replay", str(tmp_path / "rec"), "--out", str(tmp_path), "--run-id", "rep")
    assert rep.returncode == 0, rep.stderr
    assert "replay: 1 of 1 trial(s) reproduced" in rep.stderr
    [old], [new] = RunStore(tmp_path / "rec").read_results(), RunStore(tmp_path / "rep").read_results()
    assert (new.reward, new.error) == (old.reward, None) == (1.0, None)
    assert new.usage.calls == old.usage.calls >= 3
    a = (tmp_path / "rec" / old.paths["trajectory"]).read_bytes()
    b = (tmp_path / "rep" / new.paths["trajectory"]).read_bytes()
    assert _VOLATILE.sub(b"-", a) == _VOLATILE.sub(b"-", b)
    assert json.loads((tmp_path / "rep" / "replay.json").read_text())["trials"][0]["trajectory"] == "identical_masked"
