"""Issue 10: a reward is a finite number in [0, 1]. Anything else the verifier writes is a verifier
error naming the value (the run-level attack is in test_local_integrity), and a recorded result with
such a reward (an older run, a hand edit) never crashes or inflates a report: it counts as an error
and the report says so."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillworks.errors import VerifierError
from skillworks.grading import read_reward
from skillworks.results import TrialResult, outcome_for


@pytest.mark.parametrize(
    ("name", "content", "shown"),
    [
        ("reward.txt", "1.5", "1.5"),
        ("reward.txt", "7", "7.0"),
        ("reward.txt", "-2.5", "-2.5"),
        ("reward.txt", "nan", "nan"),
        ("reward.txt", "inf", "inf"),
        ("reward.txt", "passed", "does not hold one number"),
        ("reward.json", '{"reward": 1.5}', "1.5"),
        ("reward.json", '{"a": 0.5, "b": NaN}', "nan"),
        ("reward.json", '{"reward": "1"}', "'1'"),
    ],
)
def test_a_reward_outside_0_1_is_a_verifier_error_naming_the_value(
    tmp_path: Path, name: str, content: str, shown: str
) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(VerifierError, match="reward") as exc:
        read_reward(tmp_path)
    assert shown in str(exc.value)


def _result(k: int, reward: float) -> dict[str, object]:
    now = datetime.now(UTC)
    result = TrialResult(
        trial_id=f"t1__none__a__t{k}",
        run_id="bad-rewards",
        task_id="t1",
        condition="none",
        agent="a",
        provider="scripted",
        trial_index=k,
        seed=k,
        reward=0.0,
        outcome=outcome_for(0.0, None),
        started_at=now,
        finished_at=now,
    )
    data = json.loads(result.model_dump_json())
    data["reward"], data["rewards"] = reward, {"reward": reward}
    data["outcome"] = "solved" if reward >= 1 else "failed"
    return data


def test_report_tolerates_and_flags_recorded_rewards_out_of_range(tmp_path: Path) -> None:
    run_dir = tmp_path / "bad-rewards"
    run_dir.mkdir()
    exp = {
        "run_id": "bad-rewards",
        "tasks": [{"id": "t1", "path": "tasks/t1"}],
        "conditions": ["none"],
        "agents": [{"name": "builtin", "model": "scripted/x", "options": {"label": "a"}}],
        "trials": 4,
        "seed": 0,
    }
    (run_dir / "experiment.json").write_text(json.dumps(exp))
    rows = [_result(0, 7.0), _result(1, math.nan), _result(2, -2.5), _result(3, 1.0)]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", "report", str(run_dir), "--resamples", "100"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    text = json.dumps(summary)
    assert "reward 7.0 is outside [0, 1]" in text and "reward -2.5 is outside [0, 1]" in text
    assert "reward nan is not finite" in text
    report = (run_dir / "report.md").read_text()
    assert "outside [0, 1]" in report
    # only the one valid 1.0 counts: 1 of 4 planned trials, the three bad ones are errors
    assert "25.0%" in report
