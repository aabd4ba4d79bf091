"""Typed operators from a skill package: its scripts (with the CLI arguments its examples and argparse
calls show) and its documented command templates; risk flags from what each one runs."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path
from typing import Any

from skillworks.compile.contract import Execution, Operator, Param, ParamType, RiskFlag, SourceRef
from skillworks.compile.features import CommandLine, Features
from skillworks.skills.package import SkillPackage

MAX_COMMAND_OPERATORS = 8
_INTERPRETERS = {
    ".py": "python3",
    ".sh": "bash",
    ".bash": "bash",
    ".js": "node",
    ".mjs": "node",
    ".rb": "ruby",
    ".pl": "perl",
    ".ts": "npx tsx",
}
_PLACEHOLDER = re.compile(r"^(?:<[^>]+>|[A-Z][A-Z0-9_]{2,}(?:\.[A-Za-z0-9]+)?|\{[^}]+\})$")
# Risk flags and what raises them, matched in the lower-cased text. Each pattern starts with a literal, so the
# regex engine skips ahead to it (a few ns per character); the second element lists characters that must not
# precede a match (_WORD: a word boundary), checked by hand because a leading \b or look-behind would defeat
# that skip. A whole script is scanned, whatever its size (see benchmarks/compile_throughput.py).
_WORD = "\\w"
_RISKS: list[tuple[RiskFlag, list[tuple[str, str]]]] = [
    (
        "destructive",
        [
            (r"rm\s+-[a-z]*[rf]", _WORD),
            (r"mkfs", _WORD),
            (r"dd\s+if=", _WORD),
            (r"drop\s+(?:table|database)", ""),
            (r"git\s+push\s+(?:-f|--force)", _WORD),
            (r"shutil\.rmtree", _WORD),
            (r"truncate\s", _WORD),
            (r"git\s+reset\s+--hard", _WORD),
            (r"deletes?\b", _WORD),
            (r"wipes?\b", _WORD),
            (r"destroy\b", _WORD),
            (r"erase\b", _WORD),
            (r"purge\b", _WORD),
        ],
    ),
    (
        "network",
        [
            (r"curl\b", _WORD),
            (r"wget\b", _WORD),
            (r"https?://", ""),
            (r"requests\.(?:get|post|put)", _WORD),
            (r"urllib\.request", ""),
            (r"fetch\(", _WORD),
            (r"ssh\s", _WORD),
            (r"scp\s", _WORD),
            (r"nc\s", _WORD),
            (r"socket\.", ""),
        ],
    ),
    (
        "installs-packages",
        [
            (r"pip3?\s+install", _WORD),
            (r"npm\s+(?:install|i)\b", _WORD),
            (r"apt(?:-get)?\s+install", ""),
            (r"brew\s+install", _WORD),
            (r"cargo\s+install", _WORD),
        ],
    ),
    (
        "privileged",
        [(r"sudo\b", _WORD), (r"chmod\s+777", ""), (r"chown\b", _WORD), (r"/etc/(?:passwd|shadow|sudoers)", "")],
    ),
    (
        "writes-files",
        [
            (r">(?!=)", "<>="),  # a redirection (also matches ->), not >=, >>= or <>
            (r"open\([^)]*['\"][wa]b?['\"]", _WORD),
            (r"\.write_text\(", ""),
            (r"tee\b", _WORD),
            (r"-o\s", ""),
        ],
    ),
]
_COMPILED_RISKS = [(flag, [(re.compile(p), before) for p, before in patterns]) for flag, patterns in _RISKS]


def _found(pattern: re.Pattern[str], text: str, not_after: str) -> bool:
    for match in pattern.finditer(text):
        at = match.start()
        if not not_after or at == 0:
            return True
        prev = text[at - 1]
        if not ((prev.isalnum() or prev == "_") if not_after == _WORD else prev in not_after):
            return True
    return False


def risks_of(text: str) -> list[RiskFlag]:
    """The risk flags of a script or command line (all of it is read)."""
    low = text.lower()
    return [flag for flag, patterns in _COMPILED_RISKS if any(_found(p, low, before) for p, before in patterns)]


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


def _argparse_params(script: Path) -> list[Param]:
    """Optional flags an argparse-based Python script declares (name, type, help, default)."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
        return []
    params: list[Param] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument" or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or not first.value.startswith("--"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        ptype: ParamType = "string"
        type_node = kw.get("type")
        if isinstance(type_node, ast.Name):
            ptype = "integer" if type_node.id == "int" else "number" if type_node.id == "float" else "string"
        action = kw.get("action")
        if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
            ptype = "boolean"
        help_text = kw.get("help")
        default = kw.get("default")
        params.append(
            Param(
                name=slug(first.value),
                type=ptype,
                required=False,
                flag=first.value,
                description=help_text.value if isinstance(help_text, ast.Constant) else "",
                default=str(default.value) if isinstance(default, ast.Constant) else None,
            )
        )
    return params


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
    md_lines = (package.root / "SKILL.md").read_text(encoding="utf-8").splitlines()
    per_script = {s: sum(1 for key in examples if key[0] == s) for s in feats.scripts}
    script_info: dict[str, tuple[list[Param], list[RiskFlag]]] = {}
    for (script, sub), (args, cmd) in sorted(examples.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        path = package.root / script
        suffix = Path(script).suffix
        params = _params_from_example(args)
        if script not in script_info:  # each script is read, parsed and scanned once
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            script_info[script] = (_argparse_params(path) if suffix == ".py" else [], risks_of(text))
        flags, script_risks = script_info[script]
        params = _merge(params, flags)
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
                execution=Execution(
                    kind="script", interpreter=_INTERPRETERS.get(suffix, "bash"), script=script, template=sub
                ),
                # a script shared by several subcommands: the risks its documentation line names, else all
                risks=list(
                    dict.fromkeys(
                        (script_risks if per_script.get(script, 1) <= 1 else [])
                        + risks_of(cmd.text + "\n" + (md_lines[cmd.line - 1] if 0 < cmd.line <= len(md_lines) else ""))
                    )
                ),
                cacheable=False,
                source=SourceRef(file=source_file if cmd.line else script, line_start=line, line_end=line),
            )
        )
    return ops


def command_operators(feats: Features, source_file: str = "SKILL.md") -> list[Operator]:
    """Documented shell commands with placeholders become command templates (`{name}` slots)."""
    ops: list[Operator] = []
    seen: set[str] = set()
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
        if not params:
            continue
        op_id = slug(tokens[0].rsplit("/", 1)[-1]) + f"_l{cmd.line}"
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
                risks=risks_of(cmd.text),
                source=SourceRef(file=source_file, line_start=cmd.line, line_end=cmd.line),
            )
        )
        if len(ops) >= MAX_COMMAND_OPERATORS:
            break
    return ops
