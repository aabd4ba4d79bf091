"""Experiments: conditions, the plan, the run store, one trial, and the scheduler."""

from skillworks.experiment.executor import Executor, LocalExecutor, RunContext
from skillworks.experiment.plan import TrialSpec, plan_trials, trial_id
from skillworks.experiment.prebuild import ImageJob, PrebuildError, PrebuiltImage, image_jobs, read_prebuild
from skillworks.experiment.runner import RunOutcome, run_experiment
from skillworks.experiment.spec import AgentConfig, ExperimentSpec, SkillRef, TaskRef, task_ref
from skillworks.experiment.store import RunStore
from skillworks.experiment.trial import TrialEnvironment, TrialGateway, run_trial
from skillworks.provision.conditions import (
    Condition,
    SkillSet,
    condition_names,
    get_condition,
    register_condition,
)
from skillworks.provision.sources import SkillProvision, SkillSource, SourceRequest, provide_skills

__all__ = [
    "AgentConfig",
    "Condition",
    "Executor",
    "ExperimentSpec",
    "ImageJob",
    "LocalExecutor",
    "PrebuildError",
    "PrebuiltImage",
    "RunContext",
    "RunOutcome",
    "RunStore",
    "SkillProvision",
    "SkillRef",
    "SkillSet",
    "SkillSource",
    "SourceRequest",
    "TaskRef",
    "TrialEnvironment",
    "TrialGateway",
    "TrialSpec",
    "condition_names",
    "get_condition",
    "image_jobs",
    "plan_trials",
    "provide_skills",
    "read_prebuild",
    "register_condition",
    "run_experiment",
    "run_trial",
    "task_ref",
    "trial_id",
]
