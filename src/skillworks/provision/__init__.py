"""Skill provision: which skills a trial gets and where they come from (conditions, skill sources, the
self-generated creator), and the one gate every produced skill passes before it is staged.

The direction is one-way: `skillworks.experiment.trial` imports this package; nothing here imports the
trial (a source's own agent step runs through `skillworks.agents.phase`)."""

from skillworks.provision.conditions import (
    Condition,
    SkillSet,
    condition_names,
    get_condition,
    register_condition,
)
from skillworks.provision.gate import (
    BLOCKING_SECURITY_PREFIXES,
    GateOutcome,
    GateVerdict,
    gate_library,
    gate_skill,
    gate_skills,
)
from skillworks.provision.sources import SkillProvision, SkillSource, SourceRequest, provide_skills

__all__ = [
    "BLOCKING_SECURITY_PREFIXES",
    "Condition",
    "GateOutcome",
    "GateVerdict",
    "SkillProvision",
    "SkillSet",
    "SkillSource",
    "SourceRequest",
    "condition_names",
    "gate_library",
    "gate_skill",
    "gate_skills",
    "get_condition",
    "provide_skills",
    "register_condition",
]
