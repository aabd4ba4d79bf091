"""`skillworks regrade RUN`: run only the verifiers again (after a verifier fix), on the outputs a trial saved
(its `workspace/` dir: runs made with `--keep-workspace`), through the ordinary verifier entry point in a
fresh sandbox of the task. No agent runs and no model is called. Each regraded trial is appended to
results.jsonl as a new attempt (the earlier one's trial dir keeps its verifier logs as `verifier.a<n>/`)."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from skillworks._tempdirs import temp_prefix
from skillworks.errors import UserError, VerifierError
from skillworks.experiment.store import RunStore
from skillworks.results import TrialError, TrialResult, outcome_for
from skillworks.tasks import load_task
from skillworks.tasks.model import Task


async def regrade_run(run_dir: Path) -> tuple[list[TrialResult], int]:
    """Regrade every latest attempt that saved its workspace; returns the new results and how many
    trials were skipped (no saved workspace, or no verifier)."""
    from skillworks.sandbox import create_sandbox
    from skillworks.stats.rates import latest_attempts

    store = RunStore(run_dir)
    spec = store.read_spec()
    tasks: dict[str, Task] = {}
    for ref in spec.tasks:
        loaded = load_task(Path(ref.path))
        tasks[loaded.id] = loaded
    out: list[TrialResult] = []
    skipped = 0
    with store.exclusive():
        for old in latest_attempts(store.read_results()):
            task = tasks.get(old.task_id)
            trial_dir = store.trial_dir(old.trial_id)
            workspace = trial_dir / "workspace"
            if task is None or task.verifier is None or not workspace.is_dir() or old.outcome == "error":
                skipped += 1
                continue
            verifier_dir = trial_dir / "verifier"
            if verifier_dir.exists():
                verifier_dir.rename(trial_dir / f"verifier.a{old.attempt}")
            verifier_dir.mkdir()
            scratch = Path(tempfile.mkdtemp(prefix=f"{temp_prefix('scratch')}regrade-"))
            sandbox = create_sandbox(spec.env, task, scratch, run_id=spec.run_id, **spec.env_options)
            error: TrialError | None = None
            reward: float | None = None
            rewards: dict[str, float] = {}
            try:
                from skillworks.grading.verifier import run_verifier

                await sandbox.start()
                await sandbox.upload(workspace, sandbox.workdir)
                verdict = await run_verifier(task, sandbox, verifier_dir)
                reward, rewards = verdict.reward, verdict.rewards
            except (VerifierError, OSError, UserError) as exc:
                error = TrialError(category="verifier_error", message=str(exc), phase="verify")
            finally:
                await sandbox.stop()
                shutil.rmtree(scratch, ignore_errors=True)
            now = datetime.now(UTC)
            new = old.model_copy(
                update={
                    "attempt": old.attempt + 1,
                    "reward": reward,
                    "rewards": rewards,
                    "error": error,
                    "outcome": outcome_for(reward, error),
                    "failure_mode": None if reward == 1.0 else old.failure_mode or "verification_failed",
                    # the usage is the graded attempt's (no model was called): counted once in the spend
                    "paths": {**old.paths, "regraded_from_attempt": str(old.attempt)},
                    "started_at": now,
                    "finished_at": now,
                }
            )
            store.append(new)
            out.append(new)
    return out, skipped
