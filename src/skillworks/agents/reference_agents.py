"""Agents that need no model: `oracle` runs the task's reference solution, `nop` does nothing.

They anchor every benchmark: the oracle must score 1 and nop must score 0, otherwise the task's
verifier or environment is broken."""

from __future__ import annotations

from skillworks.agents.base import AgentContext, AgentOutcome
from skillworks.results import TrialError

GENERIC_SKILLS_SUBDIR = ".agents/skills"


class _ReferenceAgent:
    """What the reference agents share: no model, and skills staged at the generic harness path."""

    name = "reference"
    needs_model = False

    @property
    def version(self) -> str:
        return "1"

    def skills_dir(self, home: str, workdir: str) -> str | None:
        return f"{home}/{GENERIC_SKILLS_SUBDIR}"


class OracleAgent(_ReferenceAgent):
    """Uploads the oracle directory (only for this agent) and runs its entrypoint in the workspace."""

    name = "oracle"

    async def run(self, ctx: AgentContext) -> AgentOutcome:
        oracle = ctx.task.oracle
        if oracle is None:
            return AgentOutcome(
                error=TrialError(category="no_oracle", message=f"task {ctx.task.id} has no oracle", phase="agent")
            )
        with oracle.upload_source() as source:  # never merged into a directory the image may hold there
            await ctx.sandbox.upload(source, oracle.mount, replace=True)
        result = await ctx.sandbox.exec(
            f"bash {oracle.mount}/{oracle.entrypoint}",
            cwd=ctx.sandbox.workdir,
            env=dict(oracle.env),
            timeout=min(ctx.timeout_sec, oracle.timeout_sec),
            stdout_path=ctx.agent_log_dir / "oracle.stdout.txt",
        )
        (ctx.agent_log_dir / "oracle.stderr.txt").write_text(result.stderr)
        return AgentOutcome(exit_code=result.exit_code, timed_out=result.timed_out)


class NopAgent(_ReferenceAgent):
    """Does nothing. Every trial should be scored 0 by the verifier (not counted as an error)."""

    name = "nop"

    async def run(self, ctx: AgentContext) -> AgentOutcome:
        return AgentOutcome(exit_code=0)
