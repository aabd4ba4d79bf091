"""In-process script checks: Python parses (ast), usage/--help, error handling, shebang."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import replace

from skillworks.check._pyparse import parse_python
from skillworks.check.model import Finding, Severity
from skillworks.check.reader import SkillFile, SkillSource
from skillworks.check.rules import finding

_SHELL_USAGE = re.compile(r"usage|--help|\b-h\)|getopts", re.I)
_SHELL_ERRORS = re.compile(r"^\s*set\s+-[a-z]*e|set -o errexit|\|\|\s*(exit|return|die|fail)|\btrap\b|if\s+!", re.M)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement of a module, at any depth (with except handlers and match cases), without visiting
    expressions: imports and try blocks are statements, and a full ast.walk costs several times more."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for name in _BLOCKS:
            children = getattr(node, name, None)
            if children:
                stack.extend(children)


_DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
    ast.Pass,
)


def _only_definitions(body: list[ast.stmt]) -> bool:
    for node in body:
        if isinstance(node, _DEFINITIONS):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        # `try: import x / except ImportError`, `if TYPE_CHECKING:`, version switches
        if (
            isinstance(node, ast.Try | ast.If)
            and not _mentions(node, ("__name__", "argv"))
            and all(_only_definitions(block) for block in _blocks(node))
        ):
            continue
        return False
    return True


def _blocks(node: ast.Try | ast.If) -> list[list[ast.stmt]]:
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    return [node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)]


def _mentions(node: ast.Try | ast.If, names: tuple[str, ...]) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return test is not None and any(
        (isinstance(n, ast.Name) and n.id in names) or (isinstance(n, ast.Attribute) and n.attr in names)
        for n in ast.walk(test)
    )


def _runs_nothing(f: SkillFile, tree: ast.Module) -> bool:
    """A package's `__init__.py`, or a module whose top level only imports and defines (no `__main__`
    block, no call): running it does nothing, so it is a library of the skill's scripts, not a script."""
    return f.path.name == "__init__.py" or _only_definitions(tree.body)


def _python_findings(f: SkillFile, text: str) -> list[Finding]:
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        line = exc.lineno or 1
        src_line = text.splitlines()[line - 1] if 0 < line <= text.count("\n") + 1 else None
        if sys.version_info < (3, 12) and "f-string" in exc.msg:
            # PEP 701 (Python 3.12) allows quotes, backslashes and comments inside f-string braces: only the
            # older grammar this scan runs on rejects it, so the script may well be valid where it is run
            version = f"{sys.version_info.major}.{sys.version_info.minor}"
            found = finding("script-syntax-error", "", f.rel, line, src_line)
            message = f"cannot be parsed by Python {version} ({exc.msg}); valid f-string syntax on Python 3.12+"
            return [replace(found, severity=Severity.WARNING, message=message)]
        return [finding("script-syntax-error", f"Python syntax error: {exc.msg}", f.rel, line, src_line)]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [finding("script-syntax-error", f"Python source cannot be parsed: {exc}", f.rel, 1)]
    out: list[Finding] = []
    if _runs_nothing(f, tree):
        return out  # a module the skill's scripts import: usage text and exit status are its callers' job
    names: set[str] = set()
    has_try = False
    for node in _statements(tree.body):
        if isinstance(node, ast.Try | ast.TryStar):
            has_try = True
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    lowered = text.lower()
    has_usage = bool(names & {"argparse", "click", "typer", "fire", "docopt", "optparse"}) or "usage" in lowered
    uses_args = "sys.argv" in text or has_usage
    if uses_args and not has_usage:
        out.append(finding("script-no-usage", "reads sys.argv but prints no usage", f.rel, 1))
    elif not uses_args and not ast.get_docstring(tree):
        out.append(finding("script-no-usage", "no argument parser, usage text or module docstring", f.rel, 1))
    if not has_try and "sys.exit" not in text and "SystemExit" not in text and ".error(" not in text:
        out.append(finding("script-no-error-handling", "no try/except and no explicit exit status", f.rel, 1))
    return out


def _shell_findings(f: SkillFile, text: str) -> list[Finding]:
    out: list[Finding] = []
    if not text.startswith("#!"):
        out.append(finding("script-no-shebang", "no '#!' line", f.rel, 1))
    if not _SHELL_USAGE.search(text):
        out.append(finding("script-no-usage", "no usage text or -h/--help handling", f.rel, 1))
    if not _SHELL_ERRORS.search(text):
        out.append(finding("script-no-error-handling", "no 'set -e' and no '|| exit' checks", f.rel, 1))
    return out


def check_scripts(src: SkillSource) -> list[Finding]:
    out: list[Finding] = []
    for f in src.files:
        if f.text is None:
            continue
        lang = f.language
        if lang == "python":
            out.extend(_python_findings(f, f.text))
        elif lang == "shell":
            out.extend(_shell_findings(f, f.text))
    return out
