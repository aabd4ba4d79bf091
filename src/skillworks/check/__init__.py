"""Static checks of skills: structural score over four dimensions, security scan, script lint,
opt-in LLM-judge rubric, and the task leakage audit."""

from skillworks.check.js_flow import JsHit, analyse_js
from skillworks.check.leakage import audit_task_leakage, leakage_task_issues
from skillworks.check.model import (
    CheckReport,
    Dimension,
    Finding,
    JudgeCriterion,
    JudgeReport,
    Rule,
    Severity,
    SkillReport,
)
from skillworks.check.output import CheckReportOut, iter_json, iter_sarif, to_json, to_json_model, to_sarif
from skillworks.check.python_flow import PyHit, analyse_python, analyse_python_files
from skillworks.check.reader import SkillSource, read_skill
from skillworks.check.rules import RULES, SPEC_RULE_IDS
from skillworks.check.scan import check_skills, check_skills_async, resolve_skill_dirs
from skillworks.check.security import scan_text
from skillworks.check.tokens import estimate_tokens

__all__ = [
    "RULES",
    "SPEC_RULE_IDS",
    "CheckReport",
    "CheckReportOut",
    "Dimension",
    "Finding",
    "JsHit",
    "JudgeCriterion",
    "JudgeReport",
    "PyHit",
    "Rule",
    "Severity",
    "SkillReport",
    "SkillSource",
    "analyse_js",
    "analyse_python",
    "analyse_python_files",
    "audit_task_leakage",
    "check_skills",
    "check_skills_async",
    "estimate_tokens",
    "iter_json",
    "iter_sarif",
    "leakage_task_issues",
    "read_skill",
    "resolve_skill_dirs",
    "scan_text",
    "to_json",
    "to_json_model",
    "to_sarif",
]
