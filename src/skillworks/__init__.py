"""skillworks: does this skill make an agent better, where does it fail, how do I make it better?

The public API (imported lazily, so `import skillworks` stays cheap):

    from skillworks import load_skill, load_task, discover_tasks          # skills and tasks
    from skillworks import ExperimentSpec, AgentConfig, run_experiment     # paired runs
    from skillworks import write_reports, build_summary                   # reports from a run dir
    from skillworks import check_skills, audit_task_leakage               # static checks
    from skillworks import run_eval, EvalOptions                           # ACES live evaluation
    from skillworks import validate_trajectory                             # ATIF
    from skillworks import compile_skill, load_compiled_dir               # compiled skills (SkillSmith)
    from skillworks import import_harbor_jobs                              # Harbor job dirs -> run dir
    from skillworks import load_family, run_evolve, EvolveOptions          # lifelong skill evolution
"""

from __future__ import annotations

from skillworks._lazy import lazy_exports
from skillworks.errors import (
    SandboxUnavailable,
    SkillError,
    SkillworksError,
    StagingError,
    TaskError,
    UserError,
    VerifierError,
)

__version__ = "0.1.0"

_LAZY = {
    "SkillPackage": "skillworks.skills",
    "load_skill": "skillworks.skills",
    "discover_skills": "skillworks.skills",
    "Task": "skillworks.tasks",
    "load_task": "skillworks.tasks",
    "discover_tasks": "skillworks.tasks",
    "TrialResult": "skillworks.results",
    "AgentConfig": "skillworks.experiment",
    "ExperimentSpec": "skillworks.experiment",
    "RunStore": "skillworks.experiment",
    "SkillSet": "skillworks.experiment",
    "register_condition": "skillworks.experiment",
    "run_experiment": "skillworks.experiment",
    "register_agent": "skillworks.agents",
    "create_sandbox": "skillworks.sandbox",
    "register_backend": "skillworks.sandbox",
    "Gateway": "skillworks.gateway",
    "build_summary": "skillworks.report",
    "write_reports": "skillworks.report",
    "check_skills": "skillworks.check",
    "audit_task_leakage": "skillworks.check",
    "validate_trajectory": "skillworks.trajectory",
    "run_eval": "skillworks.evaluate",
    "EvalOptions": "skillworks.evaluate",
    "compile_skill": "skillworks.compile",
    "load_compiled_dir": "skillworks.compile",
    "BoundaryContract": "skillworks.compile",
    "import_harbor_jobs": "skillworks.importers",
    "run_evolve": "skillworks.evolve",
    "EvolveOptions": "skillworks.evolve",
    "load_family": "skillworks.evolve",
    "write_evolve_report": "skillworks.evolve",
}

__all__ = [
    "SandboxUnavailable",
    "SkillError",
    "SkillworksError",
    "StagingError",
    "TaskError",
    "UserError",
    "VerifierError",
    "__version__",
    *sorted(_LAZY),
]


__getattr__ = lazy_exports(__name__, _LAZY, globals())
