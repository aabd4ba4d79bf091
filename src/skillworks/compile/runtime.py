"""The compiled-skill runtime: every call is a guarded state machine that answers one envelope.

    run_<skill>()                       -> guidance: the boundary contract disclosed (operators, schemas, policy)
    run_<skill>(query=...)              -> guidance: the matching reference text
    run_<skill>(operator=..., inputs=…) -> blocked (unknown operator, missing/bad input, policy) or
                                           execute (the operator ran; its output and evidence)
    list_skill_assets / get_skill_asset / search_skill_docs -> the lossless fallback (deoptimisation)

Execution goes through an `Executor`: inside a trial that is the trial's sandbox; `skillworks serve-skills`
runs operators as its own subprocesses and is meant to be started inside the sandbox.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shlex
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from skillworks.compile.compiler import CompiledSkill
from skillworks.compile.contract import Operator
from skillworks.compile.execute import ExecResult, run_capped
from skillworks.compile.policy import gate, policy_text

__all__ = ["Envelope", "ExecResult", "Executor", "SkillRuntime", "SubprocessExecutor", "build_command", "handle_name"]

MAX_OUTPUT_CHARS = 16_000
DEFAULT_TIMEOUT_SEC = 120.0
MAX_HANDLE_CHARS = 64
DEOPT_TOOLS = ("list_skill_assets", "get_skill_asset", "search_skill_docs")
_DEOPT_HINTS = [  # the lossless fallback, reachable as operators of every run_<skill> handle
    "operator=list_skill_assets",
    "operator=get_skill_asset inputs={path} (e.g. SKILL.md)",
    "operator=search_skill_docs inputs={query}",
]
_DEOPT_SIGNATURES = [
    "list_skill_assets() - the original package's files",
    "get_skill_asset(path: string) - one file of the original package",
    "search_skill_docs(query: string) - full-text search of the original package",
]


class Envelope(BaseModel):
    """The one answer shape of the runtime."""

    status: Literal["blocked", "guidance", "execute"]
    contribution: str = Field(description="what this answer gives the agent")
    operator: str | None = None
    output: Any = None
    trace: list[str] = Field(default_factory=list, description="the states the call went through")
    evidence: list[str] = Field(default_factory=list)
    deopt_hints: list[str] = Field(default_factory=list)


class Executor(Protocol):
    """Runs an operator's command line where the agent works."""

    workdir: str

    def skill_root(self, skill: CompiledSkill) -> str:
        """The directory of the skill's capsule as seen by the executor."""
        ...

    async def run(self, command: str, timeout: float) -> ExecResult: ...


class SubprocessExecutor:
    """Runs commands as subprocesses of this process (the server runs inside the sandbox)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = str(workdir)

    def skill_root(self, skill: CompiledSkill) -> str:
        return str(skill.capsule_dir)

    async def run(self, command: str, timeout: float) -> ExecResult:
        return await run_capped(command, self.workdir, timeout)


def _truncate(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    return f"{text[:half]}\n... [{len(text) - MAX_OUTPUT_CHARS} characters cut] ...\n{text[-half:]}"


def handle_name(skill: str, salt: str = "") -> str:
    """`run_<skill>` as a tool name: [a-zA-Z0-9_] only and at most MAX_HANDLE_CHARS (Anthropic and OpenAI limit
    tool names to 64); a longer one, or one given a `salt` (to tell same-name skills apart), keeps a stable
    prefix and ends in a hash of the skill name and salt."""
    name = "run_" + re.sub(r"[^a-zA-Z0-9_]", "_", skill)
    if len(name) <= MAX_HANDLE_CHARS and not salt:
        return name
    digest = hashlib.sha256(f"{skill}\0{salt}".encode()).hexdigest()[:10]
    return f"{name[: MAX_HANDLE_CHARS - len(digest) - 1]}_{digest}"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


class _DocIndex:
    """Full-text search (SQLite FTS5) over the capsules' text chunks."""

    def __init__(self, skills: list[CompiledSkill]) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("create virtual table docs using fts5(skill unindexed, file unindexed, span unindexed, text)")
        rows = [
            (s.name, c.file, f"{c.line_start}-{c.line_end}", c.text) for s in skills for c in s.contract.fallback.chunks
        ]
        self.db.executemany("insert into docs values (?, ?, ?, ?)", rows)

    def search(self, query: str, skill: str | None, limit: int = 5) -> list[dict[str, str]]:
        words = re.findall(r"\w+", query)
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        sql = "select skill, file, span, text from docs where docs match ?"
        args: list[Any] = [match]
        if skill is not None:
            sql += " and skill = ?"
            args.append(skill)
        sql += " order by rank limit ?"
        args.append(limit)
        return [{"skill": r[0], "file": r[1], "lines": r[2], "text": r[3]} for r in self.db.execute(sql, args)]


class SkillRuntime:
    def __init__(self, skills: list[CompiledSkill], executor: Executor) -> None:
        self.skills: dict[str, CompiledSkill] = {}
        self.handles: dict[str, CompiledSkill] = {}
        for s in skills:  # same-name skills (two trees) get distinct handles, salted by their package hash
            handle, k = handle_name(s.name), 0
            while handle in self.handles:  # identical copies too: salted by where the artifact lives
                handle, k = handle_name(s.name, f"{s.root.name}/{s.contract.package_hash}/{k}"), k + 1
            self.handles[handle] = s
            self.skills.setdefault(s.name, s)
        self.executor = executor
        self.index = _DocIndex(skills)
        self.calls: list[dict[str, Any]] = []  # what was asked and answered, for the trial's record

    # --- what the agent sees before selecting a skill: one compact handle per skill + the fallback tools
    def tools(self) -> list[ToolSpec]:
        specs = [
            ToolSpec(
                name=name,
                description=f"{s.contract.summary} No arguments: its operators; operator+inputs: run one; "
                "query: search its docs.",
                input_schema={
                    "type": "object",
                    "properties": {
                        "operator": {"type": "string"},
                        "inputs": {"type": "object"},
                        "query": {"type": "string"},
                        "confirm": {"type": "boolean", "description": "run an operator the policy marks risky"},
                    },
                },
            )
            for name, s in self.handles.items()
        ]
        return specs

    async def call(self, name: str, arguments: dict[str, Any] | None) -> Envelope:
        args = dict(arguments or {})
        if name in self.handles:
            envelope = await self._run(self.handles[name], args)
        else:
            envelope = Envelope(
                status="blocked",
                contribution="unknown tool",
                trace=["received", "blocked"],
                output=f"no tool {name!r}; available: {', '.join(t.name for t in self.tools())}",
            )
        self.calls.append({"tool": name, "arguments": args, "status": envelope.status, "operator": envelope.operator})
        return envelope

    # --- run_<skill>
    async def _run(self, skill: CompiledSkill, args: dict[str, Any]) -> Envelope:
        c = skill.contract
        trace = ["received"]
        unknown = sorted(set(args) - {"operator", "inputs", "query", "confirm"})
        if unknown:
            return Envelope(
                status="blocked",
                contribution="argument check",
                trace=[*trace, "blocked"],
                output=f"unknown argument(s) {', '.join(unknown)}; use operator, inputs, query, confirm",
                deopt_hints=_DEOPT_HINTS,
            )
        operator_id = args.get("operator")
        if not operator_id:
            query = args.get("query")
            if query:
                hits = self.index.search(str(query), c.skill)
                return Envelope(
                    status="guidance",
                    contribution="reference text matching the query",
                    output=hits or f"nothing in {c.skill} matches {query!r}",
                    trace=[*trace, "guidance"],
                    evidence=[f"{h['file']}:{h['lines']}" for h in hits],
                    deopt_hints=_DEOPT_HINTS,
                )
            return self._disclose(skill, trace)
        trace.append("selected")
        if operator_id in DEOPT_TOOLS:
            inputs = args.get("inputs") or {}
            return self._deopt(str(operator_id), inputs if isinstance(inputs, dict) else {}, skill)
        op = next((o for o in c.operators if o.id == operator_id), None)
        if op is None:
            return Envelope(
                status="blocked",
                contribution="operator check",
                operator=str(operator_id),
                trace=[*trace, "blocked"],
                output=f"{c.skill} has no operator {operator_id!r}; operators: "
                f"{', '.join(o.id for o in c.operators) or 'none (guidance only)'}",
                deopt_hints=_DEOPT_HINTS,
            )
        inputs = args.get("inputs") or {}
        if not isinstance(inputs, dict):
            return self._blocked(op, trace, "inputs must be an object of parameter values")
        problem = _check_inputs(op, inputs, self.executor.workdir)
        if problem:
            return self._blocked(op, trace, problem + f"; the input schema is {json.dumps(op.input_schema)}")
        trace.append("inputs-bound")
        refused = gate(op, c.policy, bool(args.get("confirm")))
        if refused:
            return self._blocked(op, trace, refused)
        trace.append("policy-ok")
        command = build_command(op, inputs, self.executor.skill_root(skill))
        started = time.monotonic()
        result = await self.executor.run(command, DEFAULT_TIMEOUT_SEC)
        trace.append("executed")
        return Envelope(
            status="execute",
            contribution=f"ran {op.id}",
            operator=op.id,
            output={
                "exit_code": result.exit_code,
                "stdout": _truncate(result.stdout),
                "stderr": _truncate(result.stderr),
            },
            trace=trace,
            evidence=[
                f"command: {command}",
                f"cwd: {self.executor.workdir}",
                f"seconds: {time.monotonic() - started:.2f}",
                f"source: {op.source.file}:{op.source.line_start}",
            ],
            deopt_hints=_DEOPT_HINTS if result.exit_code else [],
        )

    def _blocked(self, op: Operator, trace: list[str], reason: str) -> Envelope:
        return Envelope(
            status="blocked",
            contribution="guard",
            operator=op.id,
            output=reason,
            trace=[*trace, "blocked"],
            deopt_hints=_DEOPT_HINTS,
        )

    def _disclose(self, skill: CompiledSkill, trace: list[str]) -> Envelope:
        c = skill.contract
        policy = policy_text(c.policy, c.risks)
        disclosed: dict[str, Any] = {"skill": c.skill, "shape": c.shape, "type": c.type, "policy": policy}
        if c.shape == "insufficient":
            disclosed["instructions"] = (skill.capsule_dir / "SKILL.md").read_text(encoding="utf-8", errors="replace")
        # compact typed signatures (name?: optional); the full JSON schema comes back with any input error
        disclosed["operators"] = [signature(o) for o in c.operators] + _DEOPT_SIGNATURES
        if c.graph is not None:
            disclosed["steps"] = [
                f"{s.id}{' <' + ','.join(s.depends_on) + '>' if s.depends_on else ''}"
                f"{' [' + s.operator + ']' if s.operator else ''}: {s.name}"
                for s in c.graph.steps
            ]
        if c.shape == "reference":
            disclosed["sections"] = [f"{s.title} (~{s.tokens} tokens)" for s in c.sections]
        return Envelope(
            status="guidance",
            contribution="the skill's boundary contract (selected)",
            output=disclosed,
            trace=[*trace, "disclosed"],
            deopt_hints=_DEOPT_HINTS,
        )

    # --- the lossless fallback
    def _deopt(self, name: str, args: dict[str, Any], skill: CompiledSkill) -> Envelope:
        trace = ["received", "deopt"]
        if name == "search_skill_docs":
            hits = self.index.search(str(args.get("query") or ""), skill.name)
            return Envelope(
                status="guidance",
                contribution="full-text search of the original packages",
                output=hits,
                trace=trace,
                evidence=[f"{h['skill']}/{h['file']}:{h['lines']}" for h in hits],
            )
        assets = skill.contract.fallback.assets
        if name == "list_skill_assets":
            return Envelope(
                status="guidance",
                contribution="the original package's files",
                output=[a.model_dump() for a in assets],
                trace=trace,
            )
        path = str(args.get("path") or "")
        record = next((a for a in assets if a.path == path), None)
        if record is None:  # only files recorded in the capsule: no traversal out of it
            return Envelope(
                status="blocked",
                contribution="fallback",
                trace=[*trace, "blocked"],
                output=f"{skill.name} has no file {path!r}; see list_skill_assets",
            )
        data = (skill.capsule_dir / record.path).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = f"(binary file, {len(data)} bytes, sha256 {record.sha256})"
        return Envelope(
            status="guidance",
            contribution=f"{skill.name}/{path} from the original package",
            output=_truncate(text),
            trace=trace,
            evidence=[f"sha256 {record.sha256}"],
        )


def signature(op: Operator) -> str:
    """`id(name: type, opt?: type) - summary [risks]`, the operator as the agent is told about it."""
    params = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.type}" for p in op.params)
    risks = f" [{', '.join(op.risks)}]" if op.risks else ""
    return f"{op.id}({params}) - {op.summary}{risks}"


def _check_inputs(op: Operator, inputs: dict[str, Any], workdir: str) -> str | None:
    known = {p.name: p for p in op.params}
    extra = sorted(set(inputs) - set(known) - {"extra_args"})
    if extra:
        return f"unknown input(s) {', '.join(extra)} for {op.id}"
    missing = [p.name for p in op.params if p.required and inputs.get(p.name) in (None, "")]
    if missing:
        return f"missing required input(s) {', '.join(missing)} for {op.id}"
    for name, value in inputs.items():
        if name == "extra_args":
            if not (isinstance(value, list) and all(isinstance(v, str | int | float) for v in value)):
                return "extra_args must be a list of strings"
            problems = [
                path_problem(f"extra_args[{k}]", v.split("=", 1)[-1], workdir) for k, v in enumerate(map(str, value))
            ]
            if any(problems):
                return next(p for p in problems if p)
            continue
        p = known[name]
        if isinstance(value, str) and (problem := path_problem(name, value, workdir)):
            return problem
        if p.type in ("integer", "number"):
            try:
                float(value)
            except (TypeError, ValueError):
                return f"input {name} must be a number, got {value!r}"
        elif p.type == "boolean" and not isinstance(value, bool):
            return f"input {name} must be true or false"
        elif isinstance(value, dict | list):
            return f"input {name} must be a single value"
    return None


def path_problem(name: str, value: object, workdir: str = "") -> str | None:
    """An input that points outside the workspace `workdir`: a home path, an absolute path elsewhere, or one
    whose `..` segments climb out of it. (An absolute path inside the workspace, such as /app/data/x.json
    when the agent works in /app, is the workspace and is accepted.)"""
    text = str(value)
    if text.startswith("~"):
        return f"input {name} must be a path inside the workspace, not a home path ({text[:80]!r})"
    root = posixpath.normpath(workdir or "/nonexistent-workspace")
    resolved = posixpath.normpath(posixpath.join(root, text.replace("\\", "/")))
    if resolved != root and not resolved.startswith(root.rstrip("/") + "/"):
        kind = "an absolute path outside it" if text.startswith("/") else "a path that leaves it with '..'"
        return f"input {name} must be a path inside the workspace {root}, not {kind} ({text[:80]!r})"
    return None


def render_template(template: str, values: dict[str, str]) -> str:
    """Fill `{slot}`s in ONE pass: each known slot becomes its value as one shell-quoted argument; a value that
    itself contains `{other}` is never expanded again (it is inside quotes, and the scan is over the template)."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return shlex.quote(values[name]) if name in values else match.group(0)

    return _SLOT.sub(fill, template)


_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def build_command(op: Operator, inputs: dict[str, Any], skill_root: str) -> str:
    """The shell command for an operator call; every input value is one shell-quoted argument."""
    extra = [shlex.quote(str(v)) for v in inputs.get("extra_args") or []]
    if op.execution.kind == "command":
        values = {p.name: str(inputs.get(p.name, "")) for p in op.params}
        return " ".join([render_template(op.execution.template or "", values), *extra])
    parts = [op.execution.interpreter or "bash", shlex.quote(f"{skill_root}/{op.execution.script}")]
    if op.execution.template:
        parts.append(shlex.quote(op.execution.template))
    for p in op.params:
        if p.name not in inputs:
            continue
        value = inputs[p.name]
        if p.flag is None:
            parts.append(shlex.quote(str(value)))
        elif p.type == "boolean":
            if value:
                parts.append(p.flag)
        else:
            parts += [p.flag, shlex.quote(str(value))]
    return " ".join([*parts, *extra])
