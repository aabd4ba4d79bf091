"""Conditions: named rules for which skills an agent sees in a trial. Conditions are data; users can
register their own with `register_condition`.

Where a condition's skills come from is its *skill source* (`skillworks.provision.sources`): the
built-in conditions select packages the experiment already has (`select`); conditions that produce
skills (self-generated, compiled, evolved) give a `source` whose `provide()` may run its own step first.
Staging, the audit, the agent run and the verifier are the same for every source."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillworks.errors import UserError
from skillworks.skills.package import SkillPackage
from skillworks.tasks.model import Task

if TYPE_CHECKING:
    from skillworks.provision.sources import SkillSource


@dataclass(frozen=True)
class SkillSet:
    """Skills given to an experiment beside the tasks' own: the ACES target, support and decoy skills, and
    the target's sibling skills (an ACES group workspace: visible wherever support skills are)."""

    target: SkillPackage | None = None
    support: tuple[SkillPackage, ...] = ()
    decoys: tuple[SkillPackage, ...] = ()
    siblings: tuple[SkillPackage, ...] = ()

    @property
    def fixed(self) -> list[SkillPackage]:
        """The skills every ACES condition shows: support, siblings and decoys."""
        return [*self.support, *self.siblings, *self.decoys]


@dataclass(frozen=True)
class Condition:
    """`select` picks packages the experiment already has; a `source` (when given) provides them per
    trial instead and `select` then only validates, before the run, that the source can work for a task."""

    name: str
    description: str
    select: Callable[[Task, SkillSet], list[SkillPackage]]
    # Whether skills baked into a task image must be stripped (no task skill may be visible).
    strips_task_skills: bool = False
    tags: frozenset[str] = field(default_factory=frozenset)
    source: SkillSource | None = None
    # kinds of the tools its source gives the agent (SkillProvision.tools), checked against each agent before
    # the run: an agent that cannot take one refuses the run instead of running the condition without it
    tools: frozenset[str] = field(default_factory=frozenset)


def _none(task: Task, skills: SkillSet) -> list[SkillPackage]:
    return []


def _curated(task: Task, skills: SkillSet) -> list[SkillPackage]:
    return [*task.skills, *skills.fixed] + ([skills.target] if skills.target else [])


def _with_skill(task: Task, skills: SkillSet) -> list[SkillPackage]:
    if skills.target is None:
        raise UserError("condition 'with-skill' needs a target skill")
    return [*skills.fixed, skills.target]


def _target_withheld(task: Task, skills: SkillSet) -> list[SkillPackage]:
    return skills.fixed


_REGISTRY: dict[str, Condition] = {}


def register_condition(condition: Condition) -> None:
    _REGISTRY[condition.name] = condition


def get_condition(name: str) -> Condition:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UserError(f"unknown condition {name!r}; available: {', '.join(sorted(_REGISTRY))}") from None


def condition_names() -> list[str]:
    return sorted(_REGISTRY)


for _c in (
    Condition("none", "no skills at all (skills baked into the image are stripped)", _none, strips_task_skills=True),
    # curated skills are staged where the agent's harness looks; a copy baked into the image elsewhere
    # would be a second, unaudited source, so it is stripped here too
    Condition(
        "curated",
        "the task's own skills (plus any target, support and decoy skills given)",
        _curated,
        strips_task_skills=True,
    ),
    Condition(
        "with-skill",
        "ACES: support, sibling and decoy skills plus the target skill",
        _with_skill,
        strips_task_skills=True,
    ),
    Condition(
        "target-withheld",
        "ACES baseline: support, sibling and decoy skills stay, the target skill goes",
        _target_withheld,
        strips_task_skills=True,
    ),
):
    register_condition(_c)


class _LazySource:
    """A condition's source imported on first use: the sources pull in heavy modules (the skill
    checks, the compiler, MCP) that a run without their condition never needs."""

    def __init__(self, module: str, attr: str, instantiate: bool) -> None:
        self._where = (module, attr, instantiate)
        self._source: Any = None

    def resolve(self) -> Any:
        if self._source is None:
            import importlib

            module, attr, instantiate = self._where
            found = getattr(importlib.import_module(module), attr)
            self._source = found() if instantiate else found
        return self._source

    async def provide(self, request: Any) -> Any:
        return await self.resolve().provide(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.resolve(), name)


def _register_self_generated() -> None:
    register_condition(
        Condition(
            "self-generated",
            "SkillsBench: skills the agent itself wrote for the task type in a separate creator session",
            _none,  # the packs come from the source; nothing the experiment holds is selected
            strips_task_skills=True,
            source=_LazySource("skillworks.provision.selfgen.source", "SelfGeneratedSource", True),
        )
    )


_register_self_generated()


def _register_compiled() -> None:
    register_condition(
        Condition(
            "compiled",
            "SkillSmith: the task's skills compiled into boundary contracts and served over MCP (no raw SKILL.md)",
            _curated,  # which packages get compiled; the agent is given the runtime's handles instead
            strips_task_skills=True,
            source=_LazySource("skillworks.compile.source", "CompiledSource", True),
            tools=frozenset({"compiled-skills"}),  # skillworks.compile.source.TOOL_KIND
        )
    )


_register_compiled()


def _register_evolve_conditions() -> None:
    register_condition(
        Condition(
            "evolved",
            "SkillFlow: the skills of an evolved library version (skillworks evolve, or run --skills-from DIR)",
            _none,
            strips_task_skills=True,
            source=_LazySource("skillworks.evolve.source", "LIBRARY_SOURCE", False),
        )
    )
    register_condition(
        Condition("vanilla", "SkillFlow control: same task order, no library", _none, strips_task_skills=True)
    )
    register_condition(
        Condition(
            "history",
            "SkillFlow control: no library; the prior tasks' compacted trajectories precede the instruction",
            _none,
            strips_task_skills=True,
        )
    )


_register_evolve_conditions()
