"""The agent phase of one trial in its sandbox (from its start mark to the end of every process the agent
started), and the sandbox's teardown. The trial (`skillworks.experiment.trial`) and a skill source's own
agent step (the self-generated creator session) both run their agent through here, so a source never
imports the trial."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillworks.agents.base import Agent, AgentContext, AgentOutcome
from skillworks.errors import UserError
from skillworks.grading.verifier import verifier_dirs, verifier_exec
from skillworks.sandbox.base import AGENT_LOG_DIR, AgentPhaseEnd, ModelChannel, Sandbox
from skillworks.skills.package import SkillPackage

if TYPE_CHECKING:
    from skillworks.experiment.plan import TrialSpec
    from skillworks.experiment.trial import TrialEnvironment

log = logging.getLogger(__name__)

AGENT_GRACE_SEC = 60.0


async def run_agent_phase(
    spec: TrialSpec,
    tenv: TrialEnvironment,
    agent: Agent,
    sandbox: Sandbox,
    trial_dir: Path,
    skills: list[SkillPackage],
    skills_dir: str | None,
    tools: list[dict[str, Any]],
    *,
    verify_next: bool = True,
    verifier_source: Path | None = None,
) -> tuple[AgentOutcome, AgentPhaseEnd]:
    """The agent phase, from its start mark to the end of every process it started. With `verify_next`
    (and a task with a verifier), its end also prepares the verifier's dirs, and puts the verifier's
    files (`verifier_source`) at its mount point when the backend can do that in the same round trip."""
    await sandbox.begin_agent_phase()
    timeout = spec.task.agent_timeout_sec
    gateway_url: str | None = None
    gateway_socket: Path | None = None
    gateway = tenv.gateways.get(spec.agent.label)
    if agent.needs_model:
        if gateway is None:
            raise UserError(f"agent {spec.agent.name} needs a model: pass --model")
        channel = await gateway.open_trial(
            spec.trial_id, trial_dir / "gateway.jsonl", task_id=f"{spec.task.id}@{spec.condition}"
        )
        model_channel = ModelChannel(channel.socket_path, tenv.channel_port)
        await sandbox.open_model_channel(model_channel)
        # a backend may serve the channel elsewhere than asked (local + public network: a free port)
        gateway_url = getattr(sandbox, "model_channel_url", None) or model_channel.base_url
        gateway_socket = channel.socket_path
    ctx = AgentContext(
        task=spec.task,
        sandbox=sandbox,
        trial_dir=trial_dir,
        agent_log_dir=trial_dir / "agent",
        condition=spec.condition,
        skills=list(skills),
        skills_dir=skills_dir,
        timeout_sec=timeout,
        seed=spec.seed,
        model=spec.agent.model,
        gateway_url=gateway_url,
        gateway_socket=gateway_socket,
        tools=tools,
    )
    try:
        outcome = await asyncio.wait_for(agent.run(ctx), timeout + AGENT_GRACE_SEC)
    except TimeoutError:
        outcome = AgentOutcome(timed_out=True)
    finally:
        if gateway is not None and agent.needs_model:
            await sandbox.close_model_channel()
            await gateway.close_trial(spec.trial_id)
    if outcome.error is None and gateway is not None and agent.needs_model:
        # a model failure the agent may have swallowed (e.g. retried out, auth) still makes the trial an error
        outcome.error = gateway.trial_error(spec.trial_id)
    # nothing the agent started may run on into grading (SandboxBroken when that cannot be ensured);
    # the same step says whether the agent changed any workspace file (the `no_output` failure mode)
    # and empties the verifier's dirs when the verifier comes next
    graded = verify_next and outcome.error is None and spec.task.verifier is not None
    if graded and verifier_source is not None:
        assert spec.task.verifier is not None
        upload = (verifier_source, spec.task.verifier.mount)
        then = verifier_exec(spec.task, trial_dir / "verifier")  # run next in the same round trip where possible
        ended = await sandbox.end_agent_phase(reset=verifier_dirs(spec.task), upload=upload, then=then)
    else:
        ended = await sandbox.end_agent_phase(reset=verifier_dirs(spec.task) if graded else ())
    if ended.agent_logs:
        try:  # one round trip: a missing dir is FileNotFoundError, no existence check first
            await sandbox.download(AGENT_LOG_DIR, trial_dir / "agent" / "sandbox-logs")
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("could not download agent logs of %s: %s", spec.trial_id, exc)
    return outcome, ended


async def teardown_sandbox(
    sandbox: Sandbox | list[Sandbox | None] | None,
    scratch: Path,
    trial_id: str,
    *,
    pending: asyncio.Future[None] | None = None,
) -> None:
    """Stop the sandbox (or sandboxes: a trial's verifier sandbox, whose start may still be `pending` — it
    is let finish first — and the agent's) and remove the scratch dir. Runs to the end even when the trial
    is cancelled meanwhile (Ctrl-C during a normal teardown), then lets the cancellation through: no orphans."""
    sandboxes = sandbox if isinstance(sandbox, list) else [sandbox]

    async def teardown() -> None:
        try:
            if pending is not None:
                with contextlib.suppress(BaseException):  # its failure was reported where it mattered
                    await pending
            stopped = await asyncio.gather(*(sb.stop() for sb in sandboxes if sb is not None), return_exceptions=True)
            for failure in stopped:  # teardown must never mask the trial's own result
                if isinstance(failure, BaseException):
                    log.error("stopping a sandbox of %s failed: %r", trial_id, failure)
        finally:
            await asyncio.to_thread(shutil.rmtree, scratch, ignore_errors=True)

    task = asyncio.ensure_future(teardown())
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise
