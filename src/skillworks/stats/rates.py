"""Task-macro pass rate over a fixed trial frame.

Per task: mean reward over the *planned* trials, where a missing or errored trial counts 0. Then the
mean over tasks. Beside it, the rate "excluding errored trials": per task, the mean reward over the
trials that were scored (a reward and no error); tasks with no scored trial drop out and are named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from skillworks.results import TrialResult


def is_scored(result: TrialResult) -> bool:
    """A trial is scored when the verifier gave a reward and nothing broke."""
    return result.reward is not None and result.outcome != "error" and result.error is None


def latest_attempts(results: Iterable[TrialResult]) -> list[TrialResult]:
    """One result per trial slot ``(run, task, condition, agent, trial index)``: the highest attempt,
    and of equal attempts the one recorded last. Order of first appearance is kept."""
    chosen: dict[tuple[str, str, str, str, int], TrialResult] = {}
    for result in results:
        key = (result.run_id, result.task_id, result.condition, result.agent, result.trial_index)
        previous = chosen.get(key)
        if previous is None or result.attempt >= previous.attempt:
            chosen[key] = result
    return list(chosen.values())


@dataclass(frozen=True)
class TaskRate:
    """One task's share of a task-macro rate."""

    task_id: str
    planned: int
    recorded: int
    scored: int
    errored: int
    missing: int
    reward_sum: float
    rate: float
    """mean reward over the frame: reward_sum / max(planned, recorded)"""
    rate_excluding_errors: float | None
    """mean reward over scored trials; None when none was scored"""
    reward_square_sum: float = 0.0
    """sum of the squared rewards of the scored trials (the spread of graded rewards)"""

    def side(self, *, excluding_errors: bool = False) -> tuple[float | None, int, float]:
        """This task as one side of :func:`skillworks.stats.paired_delta`: rate, trials behind it, mean
        square reward (over the frame, or over the scored trials)."""
        if excluding_errors:
            if not self.scored:
                return (None, 0, 0.0)
            return (self.rate_excluding_errors, self.scored, self.reward_square_sum / self.scored)
        frame = max(self.planned, self.recorded)
        return (self.rate, frame, self.reward_square_sum / frame if frame else 0.0)


@dataclass(frozen=True)
class MacroRate:
    """Task-macro pass rate of one (condition, agent) cell."""

    rate: float
    """fixed frame: missing and errored trials count 0"""
    rate_excluding_errors: float | None
    """mean over tasks with >= 1 scored trial of the per-task mean over scored trials"""
    n_tasks: int
    planned: int
    recorded: int
    scored: int
    errored: int
    missing: int
    out_of_frame: int
    """results for a task outside the frame (ignored)"""
    tasks_without_scored: list[str] = field(default_factory=list)
    per_task: dict[str, TaskRate] = field(default_factory=dict)

    @property
    def n_scored_tasks(self) -> int:
        return self.n_tasks - len(self.tasks_without_scored)


def task_macro_rate(
    results: Iterable[TrialResult],
    tasks: Sequence[str],
    trials_per_task: int | Mapping[str, int],
) -> MacroRate:
    """Task-macro pass rate of one cell over the frame ``tasks x trials_per_task``.

    ``results`` should hold one result per trial slot (see `latest_attempts`). When a task has more
    recorded trials than planned, its denominator is the recorded count (the frame never shrinks a
    trial away). With no tasks the rate is 0.0 and ``n_tasks`` is 0.
    """
    by_task: dict[str, list[TrialResult]] = {task: [] for task in tasks}
    out_of_frame = 0
    for result in results:
        if result.task_id in by_task:
            by_task[result.task_id].append(result)
        else:
            out_of_frame += 1

    per_task: dict[str, TaskRate] = {}
    for task in tasks:
        planned = trials_per_task if isinstance(trials_per_task, int) else int(trials_per_task.get(task, 0))
        rows = by_task[task]
        scored_rewards = [float(r.reward) for r in rows if is_scored(r) and r.reward is not None]
        recorded = len(rows)
        frame = max(planned, recorded)
        reward_sum = float(sum(scored_rewards))
        per_task[task] = TaskRate(
            task_id=task,
            planned=planned,
            recorded=recorded,
            scored=len(scored_rewards),
            errored=recorded - len(scored_rewards),
            missing=max(0, planned - recorded),
            reward_sum=reward_sum,
            rate=reward_sum / frame if frame else 0.0,
            rate_excluding_errors=reward_sum / len(scored_rewards) if scored_rewards else None,
            reward_square_sum=float(sum(r * r for r in scored_rewards)),
        )

    rates = [t.rate for t in per_task.values()]
    excl = [t.rate_excluding_errors for t in per_task.values() if t.rate_excluding_errors is not None]
    return MacroRate(
        rate=sum(rates) / len(rates) if rates else 0.0,
        rate_excluding_errors=sum(excl) / len(excl) if excl else None,
        n_tasks=len(per_task),
        planned=sum(t.planned for t in per_task.values()),
        recorded=sum(t.recorded for t in per_task.values()),
        scored=sum(t.scored for t in per_task.values()),
        errored=sum(t.errored for t in per_task.values()),
        missing=sum(t.missing for t in per_task.values()),
        out_of_frame=out_of_frame,
        tasks_without_scored=[t.task_id for t in per_task.values() if t.rate_excluding_errors is None],
        per_task=per_task,
    )
