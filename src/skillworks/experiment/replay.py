"""`skillworks run --replay RUN`: run a recorded run's trials again, every model call answered from the
recording (gateway/replay.py), so no provider is asked and nothing is paid. The replay is a new run
directory with the recorded run's plan (tasks, conditions, agents, trials, seed, sandbox); its
`replay.json` says, per trial, whether the replay reproduced the recorded trajectory and reward.

Trajectories are compared byte for byte after one explicit normalisation: the ATIF `session_id` and the
steps' `timestamp`s are wall-clock facts of the run, not of the model or the agent, so they are masked.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks.errors import UserError
from skillworks.experiment.spec import ExperimentSpec, task_ref
from skillworks.experiment.store import RunStore
from skillworks.results import TrialResult
from skillworks.tasks.model import Task

REPLAY_FILE = "replay.json"
# what the masked trajectory fields become (the same in both files being compared)
_MASK = "<masked>"
TrajectoryMatch = Literal["identical", "identical_masked", "differs", "absent"]
REPLAY_ERRORS = frozenset({"replay_mismatch", "replay_exhausted"})


class ReplayedTrial(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trial_id: str
    reward_recorded: float | None
    reward_replayed: float | None
    trajectory: TrajectoryMatch = Field(
        description="identical: byte for byte; identical_masked: after masking session_id and step timestamps"
    )
    error: str | None = Field(default=None, description="the replayed trial's error category, if it errored")

    @property
    def reproduced(self) -> bool:
        return self.trajectory in ("identical", "identical_masked") and self.reward_recorded == self.reward_replayed


class ReplayReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    replay_of: str
    masked: list[str] = Field(default_factory=lambda: ["session_id", "steps[].timestamp"])
    trials: list[ReplayedTrial] = Field(default_factory=list)

    @property
    def reproduced(self) -> int:
        return sum(1 for t in self.trials if t.reproduced)


def replay_plan(source: Path, run_id: str) -> tuple[ExperimentSpec, list[Task]]:
    """The replay run's spec (the recorded plan under a new run id) and its tasks, after checking that the
    recorded run can be replayed: it has results, and its model calls were recorded with their bodies."""
    from skillworks.gateway.replay import check_recorded_bodies
    from skillworks.stats.rates import latest_attempts
    from skillworks.tasks import load_task
    from skillworks.tasks.layout import dataset_root

    store = RunStore(source)
    if not store.experiment_path.is_file():
        raise UserError("--replay: not a run directory (no experiment.json)", source)
    old = store.read_spec()
    recorded = latest_attempts(store.read_results())
    if not recorded:
        raise UserError("--replay: the run has no recorded trial", store.results_path)
    check_recorded_bodies(store.trials_dir, [r.trial_id for r in recorded])
    tasks: list[Task] = []
    for ref in old.tasks:
        with dataset_root(Path(ref.path).parent):
            tasks.append(load_task(Path(ref.path)))
    extra: dict[str, Any] = {k: v for k, v in old.extra.items() if k != "executor"}
    extra["replay_of"] = str(source.resolve())
    spec = old.model_copy(
        update={
            "run_id": run_id,
            "created_at": datetime.now(UTC),
            "tasks": [task_ref(t) for t in tasks],
            "warnings": [],
            "extra": extra,
        }
    )
    return spec, tasks


def _masked(data: Any) -> Any:
    if isinstance(data, dict):
        if "session_id" in data:
            data["session_id"] = _MASK
        for step in data.get("steps") or []:
            if isinstance(step, dict) and "timestamp" in step:
                step["timestamp"] = _MASK
    return data


def compare_trajectories(recorded: Path, replayed: Path) -> TrajectoryMatch:
    if not recorded.is_file() or not replayed.is_file():
        return "absent"
    a, b = recorded.read_bytes(), replayed.read_bytes()
    if a == b:
        return "identical"
    try:
        same = _masked(json.loads(a)) == _masked(json.loads(b))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "differs"
    return "identical_masked" if same else "differs"


def compare_replay(source: Path, replay_dir: Path, results: list[TrialResult]) -> ReplayReport:
    """Compare each replayed trial with its recording; written to the replay run's replay.json."""
    from skillworks.stats.rates import latest_attempts

    old = {r.trial_id: r for r in latest_attempts(RunStore(source).read_results())}
    report = ReplayReport(replay_of=str(source.resolve()))
    for new in sorted(latest_attempts(results), key=lambda r: r.trial_id):
        before = old.get(new.trial_id)
        report.trials.append(
            ReplayedTrial(
                trial_id=new.trial_id,
                reward_recorded=before.reward if before is not None else None,
                reward_replayed=new.reward,
                trajectory=compare_trajectories(
                    source / "trials" / new.trial_id / "trajectory.json",
                    replay_dir / "trials" / new.trial_id / "trajectory.json",
                ),
                error=new.error.category if new.error is not None else None,
            )
        )
    tmp = replay_dir / f"{REPLAY_FILE}.tmp"
    tmp.write_text(report.model_dump_json(indent=2) + "\n")
    os.replace(tmp, replay_dir / REPLAY_FILE)
    return report
