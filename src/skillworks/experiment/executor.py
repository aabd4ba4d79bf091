"""Where trials run. One interface, two implementations: `LocalExecutor` (this process, asyncio; the
default) and `RayExecutor` (a Ray cluster; `skillworks.experiment.ray_executor`). Either way the trial
pipeline is `experiment/trial.py:run_trial`, and the driver — `runner._schedule` — is the only writer of
results.jsonl: an executor only turns a TrialSpec into a TrialResult whose files are in the run dir."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from skillworks.agents.base import Agent
from skillworks.experiment.plan import TrialSpec
from skillworks.experiment.prebuild import ImageJob, prebuild_here, run_image_phase
from skillworks.experiment.spec import ExperimentSpec
from skillworks.experiment.trial import TrialEnvironment, TrialGateway, run_trial
from skillworks.provision.conditions import SkillSet
from skillworks.results import TrialResult
from skillworks.skills.package import SkillPackage
from skillworks.tasks.model import Task

if TYPE_CHECKING:
    from skillworks.gateway import Gateway

PostTrial = Callable[[TrialSpec, TrialResult, Path], Awaitable[TrialResult]]
TrialRunner = Callable[[TrialSpec], Awaitable[TrialResult]]


@dataclass
class RunContext:
    """What every trial of a run shares, as the driver knows it."""

    spec: ExperimentSpec
    run_dir: Path
    tasks: list[Task]
    agents: dict[str, Agent]  # by AgentConfig.label, created (and preflighted) on the driver
    # the run's gateways by agent label, built (not started) on the driver: a bad model fails before the run
    gateways: dict[str, Gateway] = field(default_factory=dict)
    skill_set: SkillSet = field(default_factory=SkillSet)
    keep_workspace: bool = False
    post_trial: PostTrial | None = None
    # the distinct images to build and push before any trial (prebuild.py); none: no image phase
    images: list[ImageJob] = field(default_factory=list)
    say: Callable[[str], None] | None = None  # a line for the run's output (the image phase's summary)

    def experiment_skills(self) -> list[SkillPackage]:
        s = self.skill_set
        return [*s.fixed, *([s.target] if s.target else [])]

    def hide_paths(self) -> list[Path]:
        """No agent may read any task's tests or solution, nor a skill its condition withholds."""
        return sorted({t.root.resolve() for t in self.tasks} | {s.root.resolve() for s in self.experiment_skills()})


class Executor(Protocol):
    """Runs the trials of one run. `session` prepares what trials need (gateways, sandbox-backend state,
    a cluster connection), yields a function that runs one trial to its recorded-ready result, and tears
    everything down on exit — also when the run is cancelled (Ctrl-C, SIGTERM)."""

    name: str

    def session(self, run: RunContext) -> AbstractAsyncContextManager[TrialRunner]: ...


class LocalExecutor:
    """Trials run in this process, as asyncio tasks; model calls go through gateways started here."""

    name = "local"

    @asynccontextmanager
    async def session(self, run: RunContext) -> AsyncIterator[TrialRunner]:
        async with started_gateways(run.gateways) as gateways:
            tenv = TrialEnvironment(
                run_id=run.spec.run_id,
                run_dir=run.run_dir,
                env=run.spec.env,
                env_options=dict(run.spec.env_options),
                skill_set=run.skill_set,
                gateways=dict[str, TrialGateway](gateways),
                agents=run.agents,
                hide_paths=run.hide_paths(),
                keep_workspace=run.keep_workspace,
                post_trial=run.post_trial,
                experiment_extra=dict(run.spec.extra),
            )
            async with sandbox_session(run.spec):
                options = dict(run.spec.env_options)
                await run_image_phase(run.images, run.run_dir, options, lambda j: prebuild_here(j, options), run.say)

                async def one(spec: TrialSpec) -> TrialResult:
                    return await run_trial(spec, tenv)

                yield one


@asynccontextmanager
async def started_gateways(gateways: dict[str, Gateway]) -> AsyncIterator[dict[str, Gateway]]:
    """Start the run's gateways; stop them when the run ends."""
    started: list[Gateway] = []
    try:
        for gw in {id(g): g for g in gateways.values()}.values():
            await gw.start()
            started.append(gw)
        yield dict(gateways)
    finally:
        for gw in started:
            await gw.stop()


@asynccontextmanager
async def sandbox_session(spec: ExperimentSpec) -> AsyncIterator[None]:
    """Backends that leave host state per run (containers) remove all of it when the run ends, is
    interrupted or is terminated."""
    if spec.env != "container":
        yield
        return
    from skillworks.sandbox.container import container_session

    async with container_session(spec.run_id):
        yield
