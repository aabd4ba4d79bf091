"""The builtin agent's tools, executed in the trial's sandbox: bash, read_file, write_file, skill."""

from __future__ import annotations

import json
import shlex
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillworks._tempdirs import temp_prefix
from skillworks.agents.builtin.mcp_tools import McpTools
from skillworks.sandbox.base import Sandbox
from skillworks.skills.package import SkillPackage

MAX_OUTPUT_CHARS = 16_000
MAX_COMMAND_SEC = 300.0

TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a bash command in the working directory and return its exit code, stdout and stderr.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "the command line"},
                    "timeout_sec": {"type": "number", "description": "optional limit, default 120"},
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file (absolute path or relative to the working directory).",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a text file; parent directories are created.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
]

SKILL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "skill",
        "description": "Load a skill's full instructions (its SKILL.md) and the list of its bundled files.",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
}


def _truncate(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    return f"{text[:half]}\n... [{len(text) - MAX_OUTPUT_CHARS} characters cut] ...\n{text[-half:]}"


class ToolBox:
    def __init__(
        self, sandbox: Sandbox, skills: Sequence[SkillPackage], skills_dir: str | None, mcp: McpTools | None = None
    ) -> None:
        self.sandbox = sandbox
        self.skills = {s.name: s for s in skills}
        self.skills_dir = skills_dir
        self.mcp = mcp

    @property
    def definitions(self) -> list[dict[str, Any]]:
        base = [*TOOL_DEFINITIONS, SKILL_TOOL] if self.skills and self.skills_dir else list(TOOL_DEFINITIONS)
        return base + (self.mcp.definitions if self.mcp is not None else [])

    def _path(self, path: str) -> str:
        return path if path.startswith("/") else f"{self.sandbox.workdir.rstrip('/')}/{path}"

    async def call(self, name: str, raw_arguments: str, time_left: float) -> tuple[dict[str, Any], str]:
        """Run one tool call. Returns the parsed arguments and the observation text (errors included)."""
        try:
            args = json.loads(raw_arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return {}, f"error: could not parse the arguments of {name}: {exc}"
        try:
            if name == "bash":
                return args, await self._bash(str(args["command"]), args.get("timeout_sec"), time_left)
            if name == "read_file":
                return args, await self._read(str(args["path"]))
            if name == "write_file":
                return args, await self._write(str(args["path"]), str(args["content"]))
            if name == "skill" and self.skills:
                return args, self._skill(str(args["name"]))
            if self.mcp is not None and name in self.mcp.names:
                return args, _truncate(await self.mcp.call(name, args))
        except KeyError as exc:
            return args, f"error: {name} needs the argument {exc.args[0]!r}"
        return args, f"error: unknown tool {name!r}"

    async def _bash(self, command: str, timeout: Any, time_left: float) -> str:
        limit = min(float(timeout) if isinstance(timeout, int | float) else 120.0, MAX_COMMAND_SEC, max(time_left, 1.0))
        result = await self.sandbox.exec(command, cwd=self.sandbox.workdir, timeout=limit)
        parts = [f"exit code: {result.exit_code}" + (f" (timed out after {limit:g}s)" if result.timed_out else "")]
        if result.stdout:
            parts.append(f"stdout:\n{result.stdout}")
        if result.stderr:
            parts.append(f"stderr:\n{result.stderr}")
        return _truncate("\n".join(parts))

    async def _read(self, path: str) -> str:
        result = await self.sandbox.exec(f"cat -- {shlex.quote(self._path(path))}", timeout=30)
        if result.exit_code != 0:
            return f"error: {result.stderr.strip() or 'cannot read ' + path}"
        return _truncate(result.stdout)

    async def _write(self, path: str, content: str) -> str:
        """Stage the content in the sandbox's /tmp, then move it into place with the agent's own rights:
        the tool can write exactly where the agent's shell could, and nowhere else."""
        target = self._path(path)
        staged = f"/tmp/.skillworks-write-{uuid.uuid4().hex}"
        with tempfile.TemporaryDirectory(prefix=temp_prefix("write")) as tmp:
            local = Path(tmp) / "content"
            local.write_text(content)
            await self.sandbox.upload(local, staged)
        quoted = shlex.quote(target)
        result = await self.sandbox.exec(
            f'mkdir -p "$(dirname {quoted})" && mv -f {shlex.quote(staged)} {quoted}',
            cwd=self.sandbox.workdir,
            timeout=60,
        )
        if not result.ok:
            await self.sandbox.exec(f"rm -f {shlex.quote(staged)}", timeout=30)
            return f"error: cannot write {target}: {result.stderr.strip()}"
        return f"wrote {len(content.encode())} bytes to {target}"

    def _skill(self, name: str) -> str:
        skill = self.skills.get(name)
        if skill is None:
            return f"error: no skill named {name!r}; available: {', '.join(sorted(self.skills))}"
        root = f"{self.skills_dir}/{skill.name}"
        files = "\n".join(f"- {root}/{a.path} ({a.kind})" for a in skill.assets) or "(none)"
        return f"# Skill: {skill.name}\nLocation: {root}/SKILL.md\n\n{skill.body.strip()}\n\n## Bundled files\n{files}"
