"""Issue 17: an errored trial keeps the skill use its trajectory shows.

The builtin agent loads the curated skill, then the model provider fails the next call (auth): the trial
is an error, and its skill use is still read from what the agent left. The model provider is the one
test double (the `scripted` provider); the sandbox, gateway and agent are real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from skillworks.experiment import RunStore

pytestmark = [pytest.mark.bwrap]

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "harness_tasks" / "greeting-card"


def test_errored_trial_keeps_its_skill_use(tmp_path: Path, cli: Any) -> None:
    script = tmp_path / "script.yaml"
    turns = [
        {"text": "Loading the skill.", "tool_calls": [{"name": "skill", "arguments": {"name": "house-greeting"}}]},
        {"text": "never sent", "fail": {"status": 401, "times": 9, "message": "invalid api key"}},
    ]
    script.write_text(yaml.safe_dump({"default": turns}))
    proc = cli(
        "run", str(TASK), "--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "curated",
        "--out", str(tmp_path / "runs"), "--run-id", "errored",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # every trial errored: exit 1
    [result] = RunStore(tmp_path / "runs" / "errored").read_results()
    assert result.outcome == "error" and result.error is not None and result.error.category == "auth"
    assert result.skill_use.listed == ["house-greeting"]
    assert result.skill_use.invoked == ["house-greeting"] and result.skill_use.failed == []
