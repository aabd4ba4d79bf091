"""HarnessAgent: runs any HarnessSpec inside the trial's sandbox.

config files into $HOME ─► (listing command) ─► `<cli> <headless args>` with stdout streamed to
<trial>/agent/<name>.events.jsonl ─► collect native logs ─► convert to ATIF (<trial>/trajectory.json)
─► usage as the harness reported it (the gateway's gateway.jsonl stays the record) ─► listed skills
"""

from __future__ import annotations

import asyncio
import glob
import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from skillworks._tempdirs import temp_prefix
from skillworks.agents.base import AgentContext, AgentOutcome
from skillworks.agents.harness.host_tools import TOOLS_MOUNT, HostTool, host_tool
from skillworks.agents.harness.install import (
    Installation,
    cache_root,
    check_node,
    find_installation,
    install,
    user_installation,
)
from skillworks.agents.harness.spec import HarnessSpec, ListedSkills, classify_error, render
from skillworks.errors import UserError
from skillworks.results import SkillUse, TrialError
from skillworks.skills.staging import HarnessSkill

log = logging.getLogger(__name__)

API_KEY_PLACEHOLDER = "sk-skillworks-gateway"  # the gateway holds the real credentials
NODE_MOUNT = "/opt/skillworks/node/bin"
# what a Python harness (OpenHands) imports that needs the image's shared libraries
_INTERPRETER_PROBE = "import ssl, ctypes, sqlite3, lzma, bz2, zlib"
_LIST_TIMEOUT_SEC = 120.0
MCP_CALLS_LOG = "/logs/agent/mcp-calls.jsonl"  # the compiled-skill runtime's record of its calls (in the sandbox)
_TAIL = 400


def _env_key(name: str, suffix: str) -> str:
    return f"SKILLWORKS_{re.sub(r'[^A-Z0-9]', '_', name.upper())}_{suffix}"


class HarnessAgent:
    """An installed agent CLI run headless against the trial's gateway. Options (agent config or env):

    - ``binary``: use this executable instead of the cached pinned install
      (env ``SKILLWORKS_<NAME>_BINARY``, e.g. SKILLWORKS_CLAUDE_CODE_BINARY);
    - ``install``: install the pinned version into the cache at preflight when missing
      (env ``SKILLWORKS_HARNESS_AUTO_INSTALL=1``);
    - ``harness_model``: the model id the CLI sends (default: the model's name, or the spec's default for
      the scripted provider);
    - ``harness_skills``: False turns the CLI's bundled skills off where the CLI has a switch (Claude Code,
      Codex; OpenHands' public-skills clone);
      a UserError for a CLI without one. Whatever it is, the skills the CLI listed beyond the staged ones are
      recorded per trial (skills.json `harness_skills`, TrialResult.skill_use.harness_provided).
    """

    needs_model = True

    def __init__(
        self,
        spec: HarnessSpec,
        model: str | None = None,
        binary: str | None = None,
        install: bool | None = None,
        harness_model: str | None = None,
        harness_skills: bool = True,
        **_: Any,
    ) -> None:
        if not harness_skills and not (spec.bundled_skills_off_env or spec.bundled_skills_off_args):
            raise UserError(
                f"agent {spec.name}: harness_skills=false is not supported: {spec.display_name} has no switch for "
                "its bundled skills (they are recorded in each trial's skills.json instead)"
            )
        self.harness_skills = harness_skills
        self.spec = spec
        self.name = spec.name
        self.model = model
        self.binary = binary or os.environ.get(_env_key(spec.name, "BINARY")) or None
        auto = os.environ.get("SKILLWORKS_HARNESS_AUTO_INSTALL", "") not in ("", "0", "false")
        self.auto_install = bool(install) if install is not None else auto
        self.harness_model = harness_model
        self._installation: Installation | None = None
        self._node: str | None = None
        self._tools: list[HostTool] = []

    # --- Agent protocol -------------------------------------------------------------------------
    @property
    def version(self) -> str:
        return self._installation.version if self._installation is not None else self.spec.version

    def skills_dir(self, home: str, workdir: str) -> str | None:
        return f"{home.rstrip('/')}/{self.spec.skills_subdir}"

    async def preflight(self) -> None:
        """Fail before any trial when the CLI is missing, broken, or node is unusable."""
        self._installation = await asyncio.to_thread(self._resolve)

    def check_tools(self, kinds: Collection[str]) -> None:
        """Refuse, before any trial, a condition whose tools this CLI cannot be given (never run it without)."""
        from skillworks.compile.source import TOOL_KIND

        if TOOL_KIND in kinds and self.spec.mcp is None:
            raise UserError(
                f"agent {self.name}: {self.spec.display_name} cannot get compiled skills (skillworks has no MCP "
                "wiring for it); run the compiled condition with claude-code, codex, gemini-cli, opencode or builtin"
            )

    def tool_binds(self, tools: list[dict[str, Any]]) -> list[tuple[Path, str]]:
        """Host paths the condition's tools need in the sandbox: compiled skills are served by this host's
        interpreter running `skillworks serve-skills` there, started by the CLI (see compile.sandbox_server)."""
        from skillworks.compile.sandbox_server import runtime_binds
        from skillworks.compile.source import compiled_tool

        return list(runtime_binds()) if compiled_tool(tools) is not None and self.spec.mcp is not None else []

    def sandbox_binds(self) -> list[tuple[Path, str]]:
        inst = self._require()
        binds = [(inst.mount_source, inst.mount_target), *inst.extra_binds]
        if self._node is not None:  # the host's node, at a fixed path whatever the sandbox's root holds
            binds.append((Path(self._node), f"{NODE_MOUNT}/node"))
        for tool in self._tools:  # e.g. ripgrep with its libraries (see host_tools)
            binds += tool.binds
        return binds

    # --- installation -----------------------------------------------------------------------------
    def _resolve(self) -> Installation:
        self._node = check_node(self.spec)
        wrappers = cache_root() / "_host-tools"
        self._tools = [host_tool(name, self.name, wrappers) for name in self.spec.host_tools]
        if self.binary:
            return user_installation(self.spec, self.binary)
        found = find_installation(self.spec)
        if found is not None:
            return found
        if self.auto_install:
            return install(self.spec)
        raise UserError(
            f"agent {self.name}: {self.spec.display_name} {self.spec.version} is not installed; run "
            f"`skillworks agents install {self.name}` (or set {_env_key(self.name, 'BINARY')}=<path to the CLI>)"
        )

    def _require(self) -> Installation:
        if self._installation is None:
            self._installation = self._resolve()
        return self._installation

    def client_model(self) -> str:
        """The model id the CLI is told to use."""
        if self.harness_model:
            return self.harness_model
        if not self.model or self.model.startswith("scripted/"):
            return self.spec.default_model
        return self.model.split("/", 1)[1] if "/" in self.model else self.model

    # --- one trial ----------------------------------------------------------------------------------
    async def run(self, ctx: AgentContext) -> AgentOutcome:
        inst = self._require()
        if ctx.gateway_url is None:
            return AgentOutcome(
                error=TrialError(category="config", message=f"{self.name} has no gateway", phase="agent")
            )
        sandbox = ctx.sandbox
        values = {
            "gateway_url": ctx.gateway_url.rstrip("/"),
            "model": self.client_model(),
            "instruction": ctx.task.instruction,
            "workdir": sandbox.workdir,
            "home": sandbox.home,
            "api_key": API_KEY_PLACEHOLDER,
        }
        env = {key: render(value, values) for key, value in self.spec.env.items()}
        if not self.harness_skills:
            env.update(self.spec.bundled_skills_off_env)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        if self._node is not None:
            path = f"{NODE_MOUNT}:{path}"
        if self._tools:
            path = f"{TOOLS_MOUNT}:{path}"
        env["PATH"] = path
        problem = await self._probe(ctx)
        mcp_argv: list[str] | None = None
        if problem is None:
            problem, mcp_argv = await self._compiled_runtime(ctx)
        if problem is not None:
            return AgentOutcome(error=TrialError(category="harness_setup", message=problem, phase="agent"))
        if mcp_argv is not None and self.spec.mcp is not None:
            env.update(self.spec.mcp.env)
        await self._write_config_files(ctx, values, mcp_argv)
        logs = ctx.agent_log_dir
        logs.mkdir(parents=True, exist_ok=True)
        exe = inst.argv_prefix

        listed: list[str] | None = None
        listing = self.spec.listed_skills
        if listing is not None and listing.source == "command":
            result = await sandbox.exec(
                [*exe, *listing.args], cwd=sandbox.workdir, env=env, timeout=min(_LIST_TIMEOUT_SEC, ctx.timeout_sec)
            )
            (logs / f"{self.name}.skills-list.txt").write_text(result.stdout + result.stderr)
            listed = parse_listed(listing, result.stdout) if result.ok else None

        events = logs / f"{self.name}.events.jsonl"
        off = [] if self.harness_skills else self.spec.bundled_skills_off_args
        argv = [*exe, *off, *(render(arg, values) for arg in self.spec.command)]
        if mcp_argv is not None and self.spec.mcp is not None:
            argv += [render(arg, values) for arg in self.spec.mcp.args]
        (logs / f"{self.name}.command.json").write_text(
            json.dumps({"argv": argv, "env": env, "cwd": sandbox.workdir, "version": inst.version}, indent=2) + "\n"
        )
        result = await sandbox.exec(argv, cwd=sandbox.workdir, env=env, timeout=ctx.timeout_sec, stdout_path=events)
        (logs / f"{self.name}.stderr.txt").write_text(result.stderr)
        await self._collect(ctx)
        if listing is not None and listing.source == "files":
            listed = parse_listed_files(listing, logs / "home")

        outcome = AgentOutcome(exit_code=result.exit_code, timed_out=result.timed_out)
        converted = self._convert(ctx, events, values["model"], listed)
        if converted is not None:
            if listing is not None and listing.source == "events":
                listed = converted.listed_skills
            outcome.trajectory_path = ctx.trial_dir / "trajectory.json"
            outcome.usage = converted.usage
            outcome.final_message = converted.final_message
        if listing is not None and listed is None:
            log.warning(
                "%s: the CLI's own skill listing was not found; counting the staged skills as listed", self.name
            )
        outcome.skill_use = SkillUse(listed=listed) if listed is not None else None
        outcome.harness_skills = self._harness_skills(ctx, listed) if listed is not None else None
        outcome.error = self._error(ctx, result.exit_code, result.timed_out, result.stderr, converted)
        return outcome

    def locked_options(self) -> dict[str, Any]:
        """Options whose effective value experiment.json records even when left at their default."""
        return {"harness_skills": self.harness_skills}

    def _harness_skills(self, ctx: AgentContext, listed: list[str]) -> list[HarnessSkill]:
        """What the CLI listed beyond the staged skills: its own. The hash is of a SKILL.md of that name in
        the CLI's collected $HOME files (e.g. Codex writes its system skills there), where there is one."""
        staged = {s.name for s in ctx.skills}
        home = ctx.agent_log_dir / "home"
        out: list[HarnessSkill] = []
        for name in listed:
            if name in staged:
                continue
            found = sorted(home.glob(f"**/{glob.escape(name)}/SKILL.md")) if home.is_dir() else []
            digest = hashlib.sha256(found[0].read_bytes()).hexdigest() if found else None
            path = found[0].relative_to(home).as_posix() if found else None
            origin = self.spec.harness_skills_origin.format(name=self.name, version=self.version)
            out.append(HarnessSkill(name=name, origin=origin, sha256=digest, path=f"~/{path}" if path else None))
        return out

    async def _probe(self, ctx: AgentContext) -> str | None:
        """Whether what the harness needs runs inside this sandbox (node, host tools); why not, if not."""
        needs: list[tuple[str, list[str]]] = [(tool.name, tool.probe_argv()) for tool in self._tools]
        if self._node is not None:
            needs.insert(0, ("node", [f"{NODE_MOUNT}/node", "--version"]))
        image = getattr(getattr(ctx.sandbox, "image", None), "tag", None)
        where = f"image {image}" if image else "this sandbox"
        for name, argv in needs:
            result = await ctx.sandbox.exec(argv, cwd=ctx.sandbox.workdir, timeout=60)
            if not result.ok:
                said = " ".join((result.stderr or result.stdout).split())[-200:] or f"exit {result.exit_code}"
                # a host tool comes with its libraries and loader; node uses the image's C and C++ runtimes
                # (started through another loader, it would name that loader as its own executable)
                needed = "glibc and libstdc++" if name == "node" else "/bin/sh"
                return (
                    f"{self.name} needs `{name}`, and the host's {name} mounted into the sandbox does not run in "
                    f"{where} ({said}); use an image with {needed} on the host's CPU architecture, or the local "
                    "backend"
                )
        launcher = self._require().launcher
        if launcher:  # a venv's interpreter from the host: its extension modules need the image's libraries
            result = await ctx.sandbox.exec([*launcher, "-c", _INTERPRETER_PROBE], cwd=ctx.sandbox.workdir, timeout=60)
            if not result.ok:
                said = " ".join((result.stderr or result.stdout).split())[-200:] or f"exit {result.exit_code}"
                return (
                    f"{self.name} runs on the host's Python, whose modules need shared libraries {where} lacks "
                    f"({said}); use an image with them (e.g. one with python3 installed: libssl3, libffi8, "
                    "libsqlite3-0), or the local backend"
                )
        return None

    async def _compiled_runtime(self, ctx: AgentContext) -> tuple[str | None, list[str] | None]:
        """Under `compiled`: check the host interpreter runs serve-skills in this sandbox, stage the artifacts,
        and return the server's command line (or why the CLI cannot get compiled skills here)."""
        from skillworks.compile.sandbox_server import probe_argv, server_argv
        from skillworks.compile.source import compiled_tool, stage_compiled

        tool = compiled_tool(ctx.tools)
        if tool is None:
            return None, None
        if self.spec.mcp is None:  # preflight refuses this; never run the condition without its skills
            return f"{self.name} cannot get compiled skills (no MCP wiring)", None
        result = await ctx.sandbox.exec(probe_argv(), cwd=ctx.sandbox.workdir, timeout=120)
        if not result.ok:
            image = getattr(getattr(ctx.sandbox, "image", None), "tag", None)
            where = f"image {image}" if image else "this sandbox"
            said = " ".join((result.stderr or result.stdout).split())[-200:] or f"exit {result.exit_code}"
            return (
                f"compiled skills are served by the host's Python (skillworks serve-skills), which does not run in "
                f"{where} ({said}); use an image with python3's libraries (libssl3, libsqlite3-0, libffi8), "
                "or the local backend"
            ), None
        root, _ = await stage_compiled(tool, ctx.sandbox)
        return None, server_argv(root, ctx.sandbox.workdir, calls_log=MCP_CALLS_LOG)

    async def _write_config_files(self, ctx: AgentContext, values: dict[str, str], mcp_argv: list[str] | None) -> None:
        from skillworks.agents.harness.mcp_config import mcp_config
        from skillworks.compile.sandbox_server import SERVER_KEY

        contents = {config.path: render(config.content, values) for config in self.spec.config_files}
        if mcp_argv is not None and self.spec.mcp is not None:
            path = self.spec.mcp.config_path
            contents[path] = mcp_config(self.spec.mcp.format, SERVER_KEY, mcp_argv, contents.get(path))
        if not contents:
            return
        with tempfile.TemporaryDirectory(prefix=temp_prefix("harness")) as tmp:
            for i, (path, content) in enumerate(contents.items()):
                local = Path(tmp) / f"{i}-{Path(path).name}"
                local.write_text(content)
                await ctx.sandbox.upload(local, f"{ctx.sandbox.home.rstrip('/')}/{path}")
                (ctx.agent_log_dir / "config").mkdir(parents=True, exist_ok=True)
                (ctx.agent_log_dir / "config" / Path(path).name).write_text(content)

    async def _collect(self, ctx: AgentContext) -> None:
        """Copy the CLI's own session logs from $HOME into <trial>/agent/home/."""
        for rel in self.spec.collect:
            remote = f"{ctx.sandbox.home.rstrip('/')}/{rel}"
            try:
                if await ctx.sandbox.path_exists(remote):
                    await ctx.sandbox.download(remote, ctx.agent_log_dir / "home" / rel)
            except OSError as exc:
                log.warning("%s: could not collect %s: %s", self.name, remote, exc)

    def _convert(self, ctx: AgentContext, events: Path, model: str, listed: list[str] | None) -> Any:
        from skillworks.agents.harness.gateway_reconcile import cost_from_gateway, tool_names_from_gateway
        from skillworks.trajectory import TrajectoryError, write_trajectory

        converter = converter_for(self.spec.converter)
        try:
            converted = converter(
                events, instruction=ctx.task.instruction, agent_version=self.version, model_name=model
            )
        except (TrajectoryError, OSError) as exc:
            log.warning("%s: no trajectory from %s: %s", self.name, events, exc)
            return None
        trajectory = converted.trajectory
        extra = dict(trajectory.extra or {})
        extra.setdefault("harness", self.name)
        extra.setdefault("condition", ctx.condition)
        if listed is not None:
            extra.setdefault("skills_listed", listed)
        trajectory = fill_step_completion_tokens(
            trajectory.model_copy(update={"extra": extra}), ctx.trial_dir / "gateway.jsonl"
        )
        trajectory = cost_from_gateway(trajectory, ctx.trial_dir / "gateway.jsonl")
        if self.spec.converter == "codex":
            trajectory = tool_names_from_gateway(trajectory, ctx.trial_dir / "gateway.jsonl")
        converted.trajectory = trajectory
        write_trajectory(trajectory, ctx.trial_dir / "trajectory.json")
        return converted

    def _error(
        self, ctx: AgentContext, exit_code: int, timed_out: bool, stderr: str, converted: Any
    ) -> TrialError | None:
        """A typed error when the CLI failed for a reason that is not the task's (the gateway's own record
        of a failed model call wins; a plain non-zero exit with a usable log is left to the verifier)."""
        if timed_out or exit_code == 0:
            return None
        from skillworks.gateway import read_calls, trial_error_from_calls

        gateway_log = ctx.trial_dir / "gateway.jsonl"
        if gateway_log.is_file():
            gateway_error = trial_error_from_calls(read_calls(gateway_log))
            if gateway_error is not None:
                return gateway_error
        errors = list(converted.errors) if converted is not None else []
        text = "\n".join([stderr, *errors, (converted.final_message or "") if converted is not None else ""])
        category = classify_error(self.spec, text)
        detail = (errors[-1] if errors else " ".join(stderr.split()))[-_TAIL:] or f"exit {exit_code}"
        if category is not None:
            return TrialError(category=category, message=f"{self.name}: {detail}", phase="agent")
        if converted is None:
            return TrialError(
                category="harness_crash", message=f"{self.name} exited {exit_code}: {detail}", phase="agent"
            )
        if errors:
            return TrialError(category="harness_error", message=f"{self.name}: {detail}", phase="agent")
        return None


def fill_step_completion_tokens(trajectory: Any, gateway_log: Path) -> Any:
    """Per-step completion tokens from the gateway's record where the harness logged fewer.

    Claude Code writes each assistant message to its stream-json log before the model's final usage
    arrives, so its per-step `output_tokens` are the stream's opening count (0 or 1) although its run
    totals are right. When the trajectory's LLM steps and the gateway's successful model calls pair up
    one to one (same count, in order), each step gets the call's count, marked
    `metrics.extra.completion_tokens_source = "gateway"`; otherwise the trajectory is left as it is."""
    from skillworks.gateway import read_calls

    calls = [c for c in read_calls(gateway_log) if c.is_model_call and c.status == "ok"]
    steps = [i for i, s in enumerate(trajectory.steps) if s.source == "agent" and s.metrics is not None]
    if not calls or len(calls) != len(steps):
        return trajectory
    new_steps = list(trajectory.steps)
    for index, call in zip(steps, calls, strict=True):
        metrics = new_steps[index].metrics
        if (metrics.completion_tokens or 0) >= call.output_tokens:
            continue
        extra = {**(metrics.extra or {}), "completion_tokens_source": "gateway"}
        metrics = metrics.model_copy(update={"completion_tokens": call.output_tokens, "extra": extra})
        new_steps[index] = new_steps[index].model_copy(update={"metrics": metrics})
    return trajectory.model_copy(update={"steps": new_steps})


def converter_for(name: str) -> Callable[..., Any]:
    """The native-log converter called `name`: skillworks.trajectory's, or OpenHands' (kept here)."""
    from skillworks.agents.harness.convert_openhands import convert_openhands
    from skillworks.trajectory import CONVERTERS

    converters: dict[str, Callable[..., Any]] = {**CONVERTERS, "openhands": convert_openhands}
    return converters[name]


def parse_listed(listing: ListedSkills, text: str) -> list[str]:
    """Skill names from the CLI's own listing output."""
    if listing.parse == "json":
        start = text.find("[")
        try:
            data = json.loads(text[start:]) if start >= 0 else []
        except json.JSONDecodeError:
            return []
        names = [str(item["name"]) for item in data if isinstance(item, dict) and item.get("name")]
        return list(dict.fromkeys(names))
    assert listing.pattern is not None
    found = [m.group("name") for m in re.finditer(listing.pattern, text, flags=re.MULTILINE)]
    return list(dict.fromkeys(found))


def parse_listed_files(listing: ListedSkills, root: Path) -> list[str] | None:
    """Skill names from files the CLI wrote (matched by `listing.glob` under the collected $HOME copy)."""
    assert listing.glob is not None
    paths = sorted(glob.glob(str(root / listing.glob), recursive=True))
    if not paths:
        return None
    names: list[str] = []
    for path in paths:
        names += parse_listed(listing, Path(path).read_text(encoding="utf-8", errors="replace"))
    return list(dict.fromkeys(names))
