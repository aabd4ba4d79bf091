"""The post-trial hook of an eval run: the six ACES metrics, bring-your-own graders and skill-use
detection for one finished trial, written into the trial dir and into `TrialResult.metrics`.

Files written per graded trial:
  metrics.json   every metric's score (null = not scored) and details, the weights, custom grader scores
                 and errors, and the overall score
  behavior.json  the behaviour check's per-assertion verdicts with the judge's evidence
  judge.jsonl    the gateway's record of every judge call

An errored trial is not graded (an infrastructure error is never a 0); its metrics stay empty.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillworks.evaluate.judge import GatewayJudge, judge_task_key
from skillworks.experiment.plan import TrialSpec
from skillworks.grading.graders import Grader, run_grader
from skillworks.grading.metrics import MetricContext, grade_trial
from skillworks.provision.conditions import SkillSet, get_condition
from skillworks.results import TrialResult
from skillworks.skills.staging import StagingRecord
from skillworks.trajectory.models import Trajectory
from skillworks.trajectory.skill_use import StagedSkillRef, detect_skill_use
from skillworks.trajectory.validate import TrajectoryError, validate_trajectory

log = logging.getLogger(__name__)

METRICS_FILE = "metrics.json"
BEHAVIOR_FILE = "behavior.json"
DEFAULT_WORKDIR = "/app"
DEFAULT_HOME = "/home/agent"


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


class EvalGrader:
    """Callable as `run_experiment(post_trial=...)`."""

    def __init__(
        self,
        run_dir: Path,
        skill_set: SkillSet,
        *,
        judge: GatewayJudge | None = None,
        graders: Sequence[Grader] = (),
        weights: dict[str, float] | None = None,
        judge_sees_trajectory: bool = True,
        goal_mode: str = "match",
    ) -> None:
        self.run_dir = run_dir
        self.skill_set = skill_set
        self.judge = judge
        self.graders = list(graders)
        self.weights = dict(weights or {})
        self.judge_sees_trajectory = judge_sees_trajectory
        self.goal_mode = goal_mode

    async def __call__(self, spec: TrialSpec, result: TrialResult, trial_dir: Path) -> TrialResult:
        if result.outcome == "error" or result.error is not None:
            return result
        record = _staging_record(trial_dir)
        trajectory, problem = _trajectory(trial_dir)
        report: dict[str, Any] = {"trial_id": spec.trial_id, "condition": spec.condition}
        metrics: dict[str, float] = {}
        paths = dict(result.paths)
        skill_use = result.skill_use
        if trajectory is None:
            report["not_graded"] = problem
        else:
            staged = get_condition(spec.condition).select(spec.task, self.skill_set)
            skills_dir = record.skills_dir if record is not None else None
            target = self.skill_set.target.name if self.skill_set.target else None
            decoys = tuple(d.name for d in self.skill_set.decoys)
            siblings = {s.name for s in self.skill_set.siblings}  # competing skills: using one is a misroute
            ctx = MetricContext(
                task=spec.task,
                trajectory=trajectory,
                condition=spec.condition,
                staged=tuple(staged),
                skills_dir=skills_dir,
                workdir=spec.task.environment.workdir or DEFAULT_WORKDIR,
                home=_home_of(skills_dir),
                target=target,
                support=tuple(
                    s.name for s in staged if s.name not in decoys and s.name not in siblings and s.name != target
                ),
                decoys=decoys,
                trial_dir=trial_dir,
                judge_sees_trajectory=self.judge_sees_trajectory,
                goal_mode=self.goal_mode,
            )
            ev = spec.task.evaluation
            weights = {**(ev.weights if ev is not None else {}), **self.weights}
            if self.judge is not None:
                key = judge_task_key(spec.task.id, spec.condition)
                async with self.judge.trial(spec.trial_id, key, trial_dir) as judge:
                    graded = await grade_trial(ctx, judge, weights)
                paths["judge"] = _rel(trial_dir / "judge.jsonl", self.run_dir)
            else:
                graded = await grade_trial(ctx, None, weights)
            metrics.update(graded.metrics())
            report.update(graded.to_json())
            behavior = next((r for r in graded.results if r.name == "behavior_check"), None)
            if behavior is not None:
                (trial_dir / BEHAVIOR_FILE).write_text(
                    json.dumps({"score": behavior.score, **behavior.details}, indent=2, default=str)
                )
                paths["behavior"] = _rel(trial_dir / BEHAVIOR_FILE, self.run_dir)
            refs = [StagedSkillRef.from_package(s, f"{skills_dir}/{s.name}" if skills_dir else None) for s in staged]
            detected = detect_skill_use(trajectory, refs, skills_dir, None)
            if not (skill_use.read or skill_use.invoked or skill_use.scripts_run):
                skill_use = detected
        custom, errors = await self._custom(spec, trajectory, trial_dir)
        metrics.update(custom)
        report["graders"] = {"scores": custom, "errors": errors}
        (trial_dir / METRICS_FILE).write_text(json.dumps(report, indent=2, default=str))
        paths["metrics"] = _rel(trial_dir / METRICS_FILE, self.run_dir)
        return result.model_copy(update={"metrics": metrics, "paths": paths, "skill_use": skill_use})

    async def _custom(
        self, spec: TrialSpec, trajectory: Trajectory | None, trial_dir: Path
    ) -> tuple[dict[str, float], dict[str, str]]:
        scores: dict[str, float] = {}
        errors: dict[str, str] = {}
        workspace = trial_dir / "workspace"
        for grader in self.graders:
            try:
                scores.update(await run_grader(grader, spec.task, trajectory, workspace))
            except Exception as exc:  # a user's grader failing is reported, never a silent 0
                errors[grader.name] = f"{type(exc).__name__}: {exc}"
                log.warning("grader %s failed on %s: %s", grader.source, spec.trial_id, exc)
        return scores, errors


def _home_of(skills_dir: str | None) -> str:
    """The sandbox home from the staged skills dir (e.g. /root/.claude/skills -> /root)."""
    if skills_dir and "/." in skills_dir:
        return skills_dir.split("/.", 1)[0] or DEFAULT_HOME
    return DEFAULT_HOME


def _staging_record(trial_dir: Path) -> StagingRecord | None:
    path = trial_dir / "skills.json"
    if not path.is_file():
        return None
    try:
        return StagingRecord.model_validate_json(path.read_text())
    except ValueError:
        return None


def _trajectory(trial_dir: Path) -> tuple[Trajectory | None, str | None]:
    path = trial_dir / "trajectory.json"
    if not path.is_file():
        return None, "the agent wrote no trajectory.json"
    try:
        return validate_trajectory(path), None
    except TrajectoryError as exc:
        return None, f"invalid trajectory: {exc}"
