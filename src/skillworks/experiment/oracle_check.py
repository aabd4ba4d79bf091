"""`tasks check --oracle`: run each task's oracle in the sandbox and require reward 1."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillworks import __version__
from skillworks.experiment.runner import run_experiment
from skillworks.experiment.spec import AgentConfig, ExperimentSpec, task_ref
from skillworks.tasks.model import Task


@dataclass(frozen=True)
class OracleCheck:
    task_id: str
    reward: float | None
    ok: bool
    message: str
    trial_dir: Path | None = None  # kept when any oracle check fails (its logs explain why)


async def check_oracles(
    tasks: list[Task], env: str, out_dir: Path | None = None, env_options: dict[str, Any] | None = None
) -> list[OracleCheck]:
    """Run the oracle once per task (condition `curated`); ok only when the verifier says 1.0. The run
    dir (under `out_dir`, else a temp dir) is removed when every check passes and kept otherwise, so a
    failing oracle's logs stay readable (each failed check names its trial dir)."""
    parent = out_dir or Path(tempfile.mkdtemp(prefix="skillworks-oracle-"))
    run_dir = parent / f"oracle-{uuid.uuid4().hex[:8]}"
    spec = ExperimentSpec(
        run_id=run_dir.name,
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(t) for t in tasks],
        conditions=["curated"],
        agents=[AgentConfig(name="oracle")],
        trials=1,
        seed=0,
        concurrency=2,
        env=env,
        env_options=env_options or {},
    )
    try:
        outcome = await run_experiment(spec, tasks, run_dir)
    except BaseException:
        _remove(run_dir, parent, out_dir)
        raise
    by_task = {r.task_id: r for r in outcome.results}
    checks: list[OracleCheck] = []
    for task in tasks:
        result = by_task.get(task.id)
        trial_dir = run_dir / result.paths["trial_dir"] if result is not None and "trial_dir" in result.paths else None
        if result is None:
            checks.append(OracleCheck(task.id, None, False, "oracle trial did not run"))
        elif result.error is not None:
            message = f"{result.error.category}: {result.error.message}"
            checks.append(OracleCheck(task.id, None, False, message, trial_dir))
        elif result.reward is not None and result.reward >= 1.0:
            checks.append(OracleCheck(task.id, result.reward, True, "oracle scores 1"))
        else:
            message = f"oracle scored {result.reward} (must be 1)"
            checks.append(OracleCheck(task.id, result.reward, False, message, trial_dir))
    if all(c.ok for c in checks):
        _remove(run_dir, parent, out_dir)
    return checks


def _remove(run_dir: Path, parent: Path, out_dir: Path | None) -> None:
    shutil.rmtree(run_dir, ignore_errors=True)
    if out_dir is None:
        shutil.rmtree(parent, ignore_errors=True)
