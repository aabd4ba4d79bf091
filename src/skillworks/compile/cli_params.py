"""The command-line parameters a script declares: argparse `add_argument` and click `option`/`argument` calls
(read from the Python syntax tree, never run), else the usage text of any script (`Usage: x.sh <input> [out]`)."""

from __future__ import annotations

import ast
import re

from skillworks.compile.contract import Param, ParamType

_USAGE = re.compile(r"usage:?\s+\S+((?:\s+(?:<[^>\s]+>|\[[^\]\s]+\]|\[?-{1,2}[\w-]+(?:[ =]<[^>]+>)?\]?))+)", re.I)
_TYPES: dict[str, ParamType] = {"int": "integer", "float": "number", "Path": "path", "bool": "boolean"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "arg"


def _const(node: ast.expr | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _type_of(node: ast.expr | None) -> ParamType:
    if isinstance(node, ast.Name):
        return _TYPES.get(node.id, "string")
    if isinstance(node, ast.Attribute):
        return _TYPES.get(node.attr, "path" if node.attr in ("Path", "File") else "string")
    if isinstance(node, ast.Call):
        return _type_of(node.func)
    return "string"


def _argparse_param(node: ast.Call) -> Param | None:
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names:
        return None
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    action = _const(kw.get("action"))
    ptype: ParamType = "boolean" if action in ("store_true", "store_false") else _type_of(kw.get("type"))
    help_text = _const(kw.get("help"))
    choices = kw.get("choices")
    description = help_text if isinstance(help_text, str) else ""
    if isinstance(choices, ast.List | ast.Tuple):
        values = [str(_const(e)) for e in choices.elts if _const(e) is not None]
        description = (description + " " if description else "") + f"(one of: {', '.join(values)})"
    default = _const(kw.get("default"))
    if not names[0].startswith("-"):  # a positional
        optional = _const(kw.get("nargs")) in ("?", "*")
        return Param(name=_slug(names[0]), type=ptype, required=not optional, description=description)
    flag = next((n for n in names if n.startswith("--")), names[0])
    dest = _const(kw.get("dest"))
    return Param(
        name=_slug(dest if isinstance(dest, str) else flag.lstrip("-")),
        type=ptype,
        required=_const(kw.get("required")) is True,
        flag=flag,
        description=description,
        default=None if default is None else str(default),
    )


def _click_param(node: ast.Call, kind: str) -> Param | None:
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names:
        return None
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    help_text = _const(kw.get("help"))
    if kind == "argument":
        return Param(
            name=_slug(names[0]), type=_type_of(kw.get("type")), required=_const(kw.get("required")) is not False
        )
    flags = [n for n in names if n.startswith("-")]
    if not flags:
        return None
    flag = next((n for n in flags if n.startswith("--")), flags[0]).split("/", 1)[0]
    boolean = _const(kw.get("is_flag")) is True
    default = _const(kw.get("default"))
    return Param(
        name=_slug(flag.lstrip("-")),
        type="boolean" if boolean else _type_of(kw.get("type")),
        required=_const(kw.get("required")) is True,
        flag=flag,
        description=help_text if isinstance(help_text, str) else "",
        default=None if default is None else str(default),
    )


def _subparser_names(tree: ast.Module) -> dict[str, str]:
    """`calc = sub.add_parser("calc")` -> {"calc": "calc"}: which variable holds which subcommand's parser."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if isinstance(call.func, ast.Attribute) and call.func.attr == "add_parser" and call.args:
                sub = _const(call.args[0])
                for target in node.targets:
                    if isinstance(target, ast.Name) and isinstance(sub, str):
                        names[target.id] = sub
    return names


def python_params(source: str, sub: str | None = None) -> list[Param]:
    """argparse and click parameters of a Python script, in declaration order (positionals keep their order):
    the main parser's, plus those of subcommand `sub`'s parser (argparse `add_parser`); another subcommand's
    are left out."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    subparsers = _subparser_names(tree)
    found: list[tuple[int, int, Param]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        param: Param | None = None
        if node.func.attr == "add_argument":
            owner = node.func.value.id if isinstance(node.func.value, ast.Name) else None
            if owner in subparsers and subparsers[owner] != sub:
                continue
            param = _argparse_param(node)
        elif (
            node.func.attr in ("option", "argument")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "click"
        ):
            param = _click_param(node, node.func.attr)
        if param is not None:
            found.append((node.lineno, node.col_offset, param))
    params: list[Param] = []
    seen: set[str] = set()
    for _, _, p in sorted(found, key=lambda t: (t[0], t[1])):
        if p.name not in seen and p.name != "help":
            seen.add(p.name)
            params.append(p)
    return params


def usage_params(source: str) -> list[Param]:
    """Parameters from a `Usage: name <a> [b] [--flag <v>]` line of any script."""
    match = _USAGE.search(source)
    if match is None:
        return []
    params: list[Param] = []
    seen: set[str] = set()
    for token in re.findall(r"\[?-{1,2}[\w-]+(?:[ =]<[^>]+>)?\]?|<[^>\s]+>|\[[^\]\s]+\]", match.group(1)):
        optional = token.startswith("[")
        bare = token.strip("[]")
        if bare.startswith("-"):
            flag, _, value = re.split(r"[ =]", bare, maxsplit=1)[0], "", bare
            has_value = "<" in value
            name = _slug(flag.lstrip("-"))
            p = Param(name=name, type="string" if has_value else "boolean", required=False, flag=flag)
        else:
            name = _slug(bare.strip("<>"))
            p = Param(name=name, required=not optional)
        if name not in seen and name != "help":
            seen.add(name)
            params.append(p)
    return params


def declared_params(source: str, interpreter: str, sub: str | None = None) -> list[Param]:
    """What the script itself says it takes (for subcommand `sub`): the syntax tree for Python, else its
    usage text."""
    if interpreter.startswith("python"):
        return python_params(source, sub) or usage_params(source)
    return usage_params(source)
