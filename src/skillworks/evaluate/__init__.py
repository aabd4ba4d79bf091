"""ACES live evaluation of a skill (`skillworks eval`): evals.json cases run with the target skill and
with it withheld (support, sibling and decoy skills fixed; an isolation workspace shows the target alone,
a group workspace the target with its sibling skills), graded by the six metrics and bring-your-own
graders, summarised as Skill Lift. Product mode compares targets (skill, bundle, team skills, plugin) with a
baseline target; the visible-skill stress test repeats the run with more decoys."""

from skillworks.evaluate.decoys import DecoyChoice, choose_decoys, synthetic_decoy
from skillworks.evaluate.grading import EvalGrader
from skillworks.evaluate.judge import GatewayJudge, TrialJudge, judge_task_key
from skillworks.evaluate.product import Product, ProductTarget, load_product, register_product_conditions
from skillworks.evaluate.run import (
    EvalOptions,
    EvalOutcome,
    EvalRun,
    baseline_policy,
    read_plan,
    resume_eval,
    run_eval,
)
from skillworks.evaluate.siblings import WORKSPACE_MODES, WorkspaceMode, find_siblings
from skillworks.evaluate.workspace import CaseFiles, evaluation_copy, prepare_workspaces

__all__ = [
    "WORKSPACE_MODES",
    "CaseFiles",
    "DecoyChoice",
    "EvalGrader",
    "EvalOptions",
    "EvalOutcome",
    "EvalRun",
    "GatewayJudge",
    "Product",
    "ProductTarget",
    "TrialJudge",
    "WorkspaceMode",
    "baseline_policy",
    "choose_decoys",
    "evaluation_copy",
    "find_siblings",
    "judge_task_key",
    "load_product",
    "prepare_workspaces",
    "read_plan",
    "register_product_conditions",
    "resume_eval",
    "run_eval",
    "synthetic_decoy",
]
