"""Typed operators from a skill package: its scripts (with the CLI arguments its examples and argparse
calls show) and its documented command templates; risk flags from what each one runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from skillworks.compile.cli_params import declared_params
from skillworks.compile.contract import Execution, Operator, Param, SourceRef
from skillworks.compile.effects import Effects, code_effects, shell_effects
from skillworks.compile.executables import INTERPRETERS as _INTERPRETERS
from skillworks.compile.executables import interpreter_for
from skillworks.compile.features import CommandLine, Features
from skillworks.skills.package import SkillPackage

MAX_COMMAND_OPERATORS = 12
_PLACEHOLDER = re.compile(r"^(?:<[^>]+>|[A-Z][A-Z0-9_]{2,}(?:\.[A-Za-z0-9]+)?|\{[^}]+\})$")


def slug(text: str) -> str:
    value = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return value or "op"


def _param_name(token: str, taken: set[str]) -> str:
    base = slug(token.strip("<>{}").rsplit(".", 1)[0] if "." in token.strip("<>{}") else token.strip("<>{}"))
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _looks_like_path(token: str) -> bool:
    return "/" in token or bool(re.search(r"\.[A-Za-z0-9]{1,5}$", token))


def _params_from_example(tokens: list[str]) -> list[Param]:
    params: list[Param] = []
    taken: set[str] = set()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in ("|", ">", ">>", "&&", ";", "2>", "<"):
            break
        if tok.startswith("--") or (tok.startswith("-") and len(tok) == 2 and tok[1].isalpha()):
            flag = tok.split("=", 1)[0]
            value = tok.split("=", 1)[1] if "=" in tok else None
            if value is None and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                value = tokens[i + 1]
                i += 1
            name = _param_name(flag.lstrip("-"), taken)
            if value is None:
                params.append(Param(name=name, type="boolean", required=False, flag=flag))
            else:
                params.append(
                    Param(
                        name=name,
                        type="path" if _looks_like_path(value) else "string",
                        required=False,
                        flag=flag,
                        description=f"e.g. {value}",
                    )
                )
        else:
            name = _param_name(tok if _PLACEHOLDER.match(tok) else f"arg{len(params) + 1}", taken)
            params.append(
                Param(
                    name=name,
                    type="path" if _looks_like_path(tok) else "string",
                    required=True,
                    description=f"e.g. {tok}",
                )
            )
        i += 1
    return params


def input_schema(params: list[Param]) -> dict[str, Any]:
    kinds = {"string": "string", "path": "string", "number": "number", "integer": "integer", "boolean": "boolean"}
    props: dict[str, Any] = {
        p.name: {"type": kinds[p.type], **({"description": p.description} if p.description else {})} for p in params
    }
    props["extra_args"] = {"type": "array", "items": {"type": "string"}, "description": "further CLI arguments"}
    return {
        "type": "object",
        "properties": props,
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"exit_code": {"type": "integer"}, "stdout": {"type": "string"}, "stderr": {"type": "string"}},
    "required": ["exit_code", "stdout", "stderr"],
}


def _split(text: str) -> list[str] | None:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def _merge(params: list[Param], more: list[Param]) -> list[Param]:
    merged = list(params)
    have = {p.name for p in params} | {p.flag for p in params if p.flag}
    for p in more:
        if p.name in have or (p.flag and p.flag in have):
            continue
        merged.append(p)
        have |= {p.name, p.flag or p.name}
    return merged


def _with_declared(example: list[Param], declared: list[Param]) -> list[Param]:
    """The script's own parameters (names, types, help) first; a positional the example fills is required and
    keeps the example value as its illustration; the example's own positionals only when the script declares
    none (then named from placeholders, else arg1...)."""
    shown = [p for p in example if p.flag is None]
    by_flag = {p.flag: p for p in example if p.flag}
    declared = [  # a plain-string flag the example fills with a file name is a path
        p.model_copy(update={"type": "path", "description": p.description or by_flag[p.flag].description})
        if p.flag in by_flag and p.type == "string" and by_flag[p.flag].type == "path"
        else p
        for p in declared
    ]
    positionals = [p for p in declared if p.flag is None]
    if positionals:
        filled = []
        for k, p in enumerate(positionals):
            if k < len(shown):
                more: dict[str, object] = {"required": True, "description": p.description or shown[k].description}
                if p.type == "string" and shown[k].type == "path":
                    more["type"] = "path"
                p = p.model_copy(update=more)
            filled.append(p)
        declared = [*filled, *(p for p in declared if p.flag is not None)]
        example = [p for p in example if p.flag is not None]
    return _merge(declared, example)


def script_operators(package: SkillPackage, feats: Features, source_file: str = "SKILL.md") -> list[Operator]:
    """One operator per script entry point: (script, subcommand) pairs seen in the examples, else the script."""
    examples: dict[tuple[str, str | None], tuple[list[str], CommandLine]] = {}
    for cmd in feats.commands:
        tokens = _split(cmd.text)
        if not tokens:
            continue
        for k, tok in enumerate(tokens):
            script = next(
                (
                    s
                    for s in feats.scripts
                    if tok == s
                    or tok.endswith("/" + s)
                    or (tok.endswith(s.rsplit("/", 1)[-1]) and "/" not in s.split("scripts/", 1)[-1])
                ),
                None,
            )
            if script is None:
                continue
            rest = tokens[k + 1 :]
            sub = (
                rest[0]
                if rest
                and re.fullmatch(r"[a-z][a-z0-9_-]+", rest[0])
                and not _PLACEHOLDER.match(rest[0])
                and "." not in rest[0]
                else None
            )
            args = rest[1:] if sub else rest
            key = (script, sub)
            if key not in examples or len(args) > len(examples[key][0]):
                examples[key] = (args, cmd)
            break
    for script in feats.scripts:
        if not any(key[0] == script for key in examples):
            examples[(script, None)] = ([], CommandLine("", 0, "", False))
    ops: list[Operator] = []
    seen: set[str] = set()
    script_info: dict[str, tuple[str, Effects, str]] = {}
    subs_of: dict[str, set[str]] = {s: {sub for (sc, sub) in examples if sc == s and sub} for s in feats.scripts}
    for (script, sub), (args, cmd) in sorted(examples.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        path = package.root / script
        suffix = Path(script).suffix
        params = _params_from_example(args)
        if script not in script_info:  # each script is read, parsed and scanned once
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            interpreter = interpreter_for(package.root, script) or _INTERPRETERS.get(suffix, "bash")
            script_info[script] = (text, code_effects(text, interpreter), interpreter)
        source_text, script_effects, interpreter = script_info[script]
        declared = declared_params(source_text, interpreter, sub)
        effects = Effects()
        effects.merge(script_effects.for_subcommand(sub, subs_of[script]), prefix=f"{script} ")
        if cmd.text:
            effects.merge(shell_effects(cmd.text, f"SKILL.md:{cmd.line}"))
        params = _with_declared(params, declared)
        op_id = slug(Path(script).stem + (f"_{sub}" if sub else ""))
        while op_id in seen:
            op_id += "_2"
        seen.add(op_id)
        line = cmd.line if cmd.line else 1
        ops.append(
            Operator(
                id=op_id,
                summary=f"run {script}" + (f" {sub}" if sub else "") + (f" (e.g. `{cmd.text}`)" if cmd.text else ""),
                params=params,
                input_schema=input_schema(params),
                output_schema=OUTPUT_SCHEMA,
                execution=Execution(kind="script", interpreter=interpreter, script=script, template=sub),
                # what the script's code does (every subcommand shares it) and what its documented line runs
                risks=effects.flags,
                risk_evidence=effects.notes(),
                cacheable=False,
                source=SourceRef(file=source_file if cmd.line else script, line_start=line, line_end=line),
            )
        )
    return ops


def command_operators(feats: Features, source_file: str = "SKILL.md", steps: bool = False) -> list[Operator]:
    """Documented shell commands with placeholders become command templates (`{name}` slots); with `steps`,
    a command inside a numbered step becomes an operator even without placeholders (the step runs it)."""
    ops: list[Operator] = []
    seen: set[str] = set()
    in_step = {c.line for c in feats.commands if any(i.line_start <= c.line <= i.line_end for i in feats.ordered)}
    for cmd in feats.commands:
        if any(s.rsplit("/", 1)[-1] in cmd.text for s in feats.scripts):
            continue
        tokens = _split(cmd.text)
        if not tokens:
            continue
        taken: set[str] = set()
        params: list[Param] = []
        template = cmd.text
        for tok in dict.fromkeys(tokens):
            if _PLACEHOLDER.match(tok) and not tok.startswith("-"):
                name = _param_name(tok, taken)
                params.append(
                    Param(name=name, type="path" if _looks_like_path(tok) else "string", description=f"replaces {tok}")
                )
                template = re.sub(rf"(?<![\w{{]){re.escape(tok)}(?![\w}}])", "{" + name + "}", template)
        if not params and not (steps and cmd.line in in_step):
            continue
        op_id = slug(tokens[0].rsplit("/", 1)[-1]) + f"_l{cmd.line}"
        command_effects = shell_effects(cmd.text, f"SKILL.md:{cmd.line}")
        if op_id in seen:
            continue
        seen.add(op_id)
        ops.append(
            Operator(
                id=op_id,
                summary=f"run `{cmd.text}`" + (f" ({cmd.section})" if cmd.section else ""),
                params=params,
                input_schema=input_schema(params),
                output_schema=OUTPUT_SCHEMA,
                execution=Execution(kind="command", template=template),
                risks=command_effects.flags,
                risk_evidence=command_effects.notes(),
                source=SourceRef(file=source_file, line_start=cmd.line, line_end=cmd.line),
            )
        )
        if len(ops) >= MAX_COMMAND_OPERATORS:
            break
    return ops
