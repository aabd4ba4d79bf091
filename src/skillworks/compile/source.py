"""The `compiled` condition's skill source, and the bridge that serves compiled skills inside a trial.

Under `compiled` the task's skills (the ones `curated` would stage) are compiled — cached by package hash
under ``<run dir>/compiled/`` — and the agent gets **no raw package** in its skill directory: only the
runtime's tools (one compact `run_<skill>` handle per skill plus the fallback operators). The provision
carries a `compiled-skills` tool description; an agent integration calls `open_compiled_runtime` to stage
the capsules into the trial's sandbox and get a runtime whose operators execute there.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillworks.compile.compiler import CompiledSkill, compile_to, load_compiled
from skillworks.compile.contract import CAPSULE_DIR, CONTRACT_FILE
from skillworks.compile.runtime import ExecResult, SkillRuntime, handle_name
from skillworks.provision.sources import SkillProvision, SourceRequest
from skillworks.trajectory.skill_use import SkillHandleRef

if TYPE_CHECKING:
    from skillworks.sandbox.base import Sandbox

TOOL_KIND = "compiled-skills"
CACHE_DIR = "compiled"
SANDBOX_DIR = ".skillworks/compiled"  # under the sandbox home; not a harness skill directory


class CompiledSource:
    """Compiles the task's skills (deterministic, offline; compile time recorded apart from the solve)."""

    async def provide(self, request: SourceRequest) -> SkillProvision:
        from skillworks.provision.conditions import get_condition
        from skillworks.provision.gate import gate_skills

        selected = get_condition("curated").select(request.spec.task, request.tenv.skill_set)
        # the gate before the compiler: a package it rejects for this task is never compiled nor served
        gated = await gate_skills(selected, [request.spec.task], authored=True)  # the task's curated skills
        packages = gated.kept
        cache = request.tenv.run_dir / CACHE_DIR
        t0 = time.perf_counter()
        compiled: list[dict[str, Any]] = []
        for package in packages:
            # keyed by the package hash: an edited package gets a new artifact, never a stale one
            outcome = await asyncio.to_thread(compile_to, package.root, cache / package.package_hash[:16])
            c = outcome.contract
            compiled.append(
                {
                    "skill": c.skill,
                    "package_hash": c.package_hash,
                    "shape": c.shape,
                    "type": c.type,
                    "validation_level": c.validation_level,
                    "operators": [o.id for o in c.operators],
                    # what a call of each operator runs (skill use counts it as the script run)
                    "operator_scripts": {o.id: o.execution.script for o in c.operators if o.execution.kind == "script"},
                    "handle": handle_name(c.skill),
                    "path": str(outcome.path),
                    "reused": outcome.reused,
                    "compile_sec": c.compile.compile_sec,
                    # the hybrid judge's tokens (0 for a deterministic compile); paid once per artifact
                    "compile_tokens": c.compile.input_tokens + c.compile.output_tokens,
                }
            )
        elapsed = round(time.perf_counter() - t0, 4)
        tool = {"kind": TOOL_KIND, "artifacts": [c["path"] for c in compiled]}
        record = {
            "compiled": compiled,
            "visible_to_agent": [c["handle"] for c in compiled],  # MCP tools; the raw text only through them
            "raw_skills_staged": [],
            # where the runtime's artifacts go in the sandbox: in no directory a harness scans for skills, but
            # readable by the agent's own shell (the runtime runs operators as the agent's user)
            "sandbox_artifacts": f"$HOME/{SANDBOX_DIR}",
            "compile_wall_sec": elapsed,
            "gate": gated.to_record(),
        }
        (request.trial_dir / "compiled-skills.json").write_text(json.dumps(record, indent=2))
        handles = [SkillHandleRef.from_record(c) for c in compiled]
        return SkillProvision(
            skills=[],
            usage=None,
            tools=[tool] if compiled else [],
            record=record,
            handles=handles,
            rejected=gated.rejected,
        )


class SandboxExecutor:
    """Runs operator commands in the trial's sandbox, where the capsules were staged."""

    def __init__(self, sandbox: Sandbox, root: str) -> None:
        self.sandbox = sandbox
        self.root = root
        self.workdir = sandbox.workdir

    def skill_root(self, skill: CompiledSkill) -> str:
        return f"{self.root}/{skill.name}/capsule"

    async def run(self, command: str, timeout: float) -> ExecResult:
        result = await self.sandbox.exec(command, cwd=self.sandbox.workdir, timeout=timeout)
        return ExecResult(result.exit_code, result.stdout, result.stderr, result.timed_out)


def compiled_tool(tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((t for t in tools if t.get("kind") == TOOL_KIND), None)


async def stage_compiled(tool: dict[str, Any], sandbox: Sandbox) -> tuple[str, list[CompiledSkill]]:
    """Upload the artifacts of a `compiled-skills` tool (contract + capsule per skill) into the sandbox, under
    ``$HOME/.skillworks/compiled/<skill>``; returns that directory and the loaded skills."""
    skills = [load_compiled(Path(p)) for p in tool["artifacts"]]
    root = f"{sandbox.home.rstrip('/')}/{SANDBOX_DIR}"
    for skill in skills:
        await sandbox.upload(skill.root / CONTRACT_FILE, f"{root}/{skill.name}/{CONTRACT_FILE}")
        await sandbox.upload(skill.capsule_dir, f"{root}/{skill.name}/{CAPSULE_DIR}")
    return root, skills


async def open_compiled_runtime(tool: dict[str, Any], sandbox: Sandbox) -> SkillRuntime:
    """Stage the capsules of a `compiled-skills` tool into the sandbox and return the runtime over them."""
    root, skills = await stage_compiled(tool, sandbox)
    return SkillRuntime(skills, SandboxExecutor(sandbox, root))
