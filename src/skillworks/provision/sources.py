"""Skill sources: where the skills of a condition come from, for one trial.

One mechanism for every condition (DESIGN: "Conditions that produce skills"): `none` and `curated`
select packages the experiment already has; `self-generated`, `compiled` and `evolved` differ only in
where the packages come from — a creator session, the compiler, a library version kept by a family
driver. A source returns a `SkillProvision` for the trial, possibly after a step of its own (sandboxed
and gateway-recorded, its usage kept apart from the solver's). What follows is the same for every
source: the gate (`gate.py`: check errors, blocking security findings, the leakage audit against the
trial's task) for every skill a source produced, staging, the post-staging audit, the agent run, the verifier.

A new source (a registry, a retrieval step) is a new `SkillSource`, not a new path through the trial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skillworks.provision.gate import GateVerdict
from skillworks.results import Usage
from skillworks.skills.package import SkillPackage
from skillworks.trajectory.skill_use import SkillHandleRef

if TYPE_CHECKING:
    from skillworks.experiment.plan import TrialSpec
    from skillworks.experiment.trial import TrialEnvironment
    from skillworks.provision.conditions import Condition


@dataclass
class SkillProvision:
    """What a source gives one trial.

    - `skills`: packages staged into the agent's skill directory (and audited) exactly like curated ones;
    - `usage`: what producing them cost (creator session, compile step), never added to the solver's usage;
    - `tools`: runtimes the agent is connected to besides staged files (e.g. compiled skills served over
      MCP); each is a plain description the agent integration understands;
    - `record`: what the source did (ids, hashes, paths under the trial dir), kept in the trial's record;
    - `handles`: skills reached through a tool rather than as files (compiled skills' `run_<skill>`): skill
      use counts calls of them.
    """

    skills: list[SkillPackage] = field(default_factory=list)
    usage: Usage | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)
    handles: list[SkillHandleRef] = field(default_factory=list)
    # what the gate withheld from the trial, with reasons (also in record["gate"])
    rejected: list[GateVerdict] = field(default_factory=list)


@dataclass(frozen=True)
class SourceRequest:
    """Everything a source may use for one trial: the trial, the run's shared environment (sandbox
    backend and options, gateways, agents), and the trial's own directory to keep its artefacts in."""

    spec: TrialSpec
    tenv: TrialEnvironment
    trial_dir: Path


@runtime_checkable
class SkillSource(Protocol):
    async def provide(self, request: SourceRequest) -> SkillProvision: ...


async def provide_skills(condition: Condition, request: SourceRequest) -> SkillProvision:
    """The skills of `condition` for one trial: from its source when it has one (each produced skill through
    the gate, against this trial's task; what it rejected is withheld and recorded), else its selection."""
    if condition.source is None:
        return SkillProvision(skills=condition.select(request.spec.task, request.tenv.skill_set))
    provision = await condition.source.provide(request)
    if provision.skills:
        from skillworks.provision.gate import gate_skills

        outcome = await gate_skills(provision.skills, [request.spec.task])
        provision.skills = outcome.kept
        provision.rejected = [*provision.rejected, *outcome.rejected]
        gate = provision.record.setdefault("gate", {"passed": [], "rejected": []})
        gate["passed"] = [*gate.get("passed", []), *outcome.to_record()["passed"]]
        gate["rejected"] = [*gate.get("rejected", []), *outcome.to_record()["rejected"]]
    return provision
