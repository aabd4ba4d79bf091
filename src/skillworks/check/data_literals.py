"""Whether a span of a script is an element of a data collection rather than code that runs, judged on the
syntax tree: a string in an array/list/set/tuple literal of several strings (Python `ast`, tree-sitter for
JavaScript/TypeScript and shell), a `case` pattern, a quoted value assigned to a shell variable, the pattern
argument of grep, or an item of a YAML block sequence in a fenced block. A destructive command found there is
a payload, a block list or a detection pattern: the command is not run by that line.

A list that is itself an argument of a call (`subprocess.run([...])`, `spawn("sh", [...])`) may be the argv
that runs, and is never treated as data here."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

import tree_sitter_bash
import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

_JS = (".js", ".mjs", ".cjs", ".jsx")
_TS = (".ts", ".tsx", ".mts", ".cts")
_SHELL = (".sh", ".bash", ".zsh")
_GREP = frozenset({"grep", "egrep", "fgrep", "rg"})
_YAML_ITEM = re.compile(r"^(\s*)-\s+\S")


@lru_cache(maxsize=3)
def _parser(kind: str) -> Parser:
    if kind == "bash":
        return Parser(Language(tree_sitter_bash.language()))
    if kind == "ts":
        return Parser(Language(tree_sitter_typescript.language_typescript()))
    return Parser(Language(tree_sitter_javascript.language()))


def is_data_element(text: str, rel: str | None, start: int, end: int) -> bool:
    """True when text[start:end] lies inside one element of a data collection literal of the script `rel`."""
    name = (rel or "").lower()
    if name.endswith(".py"):
        return _python(text, start, end)
    if name.endswith(_JS + _TS):
        return _tree(text, start, end, "ts" if name.endswith(_TS) else "js")
    if name.endswith(_SHELL):
        return _tree(text, start, end, "bash")
    return False


def yaml_sequence_item(text: str, start: int) -> bool:
    """True when the line holding `start` is an item of a block sequence (`- value`) with a sibling item at the
    same indentation right before or after it: a list of values, not a command line."""
    begin = text.rfind("\n", 0, start) + 1
    stop = text.find("\n", start)
    line = text[begin : len(text) if stop < 0 else stop]
    m = _YAML_ITEM.match(line)
    if not m:
        return False
    indent = m.group(1)
    prev_end = begin - 1
    neighbours = []
    if prev_end > 0:
        neighbours.append(text[text.rfind("\n", 0, prev_end) + 1 : prev_end])
    if stop >= 0:
        after = text.find("\n", stop + 1)
        neighbours.append(text[stop + 1 : len(text) if after < 0 else after])
    return any((n_m := _YAML_ITEM.match(n)) is not None and n_m.group(1) == indent for n in neighbours)


# --- Python --------------------------------------------------------------------------------------------------
def _python(text: str, start: int, end: int) -> bool:
    tree = _python_tree(text)
    if tree is None:
        return False
    starts = _line_starts(text)
    in_call: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            in_call.update(id(a) for a in node.args)
            in_call.update(id(k.value) for k in node.keywords)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.List, ast.Set, ast.Tuple)) or id(node) in in_call:
            continue
        strings = [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(strings) < 2:
            continue
        for e in strings:
            if e.end_lineno is None or e.end_col_offset is None:
                continue
            a = starts[e.lineno - 1] + e.col_offset
            b = starts[e.end_lineno - 1] + e.end_col_offset
            if a <= start and end <= b:
                return True
    return False


@lru_cache(maxsize=8)
def _python_tree(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _line_starts(text: str) -> list[int]:
    """Offsets of line starts; ast columns are UTF-8 byte offsets, close enough for ASCII lines."""
    out = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            out.append(i + 1)
    return out


# --- JavaScript / TypeScript / shell ----------------------------------------------------------------------------
def _tree(text: str, start: int, end: int, kind: str) -> bool:
    data = text.encode("utf-8")
    b_start = len(text[:start].encode("utf-8"))
    b_end = len(text[:end].encode("utf-8"))
    root = _parse(data, kind)
    node: Node | None = root.descendant_for_byte_range(b_start, b_end)
    if kind == "bash":
        return _bash_data(node)
    return _js_data(node)


@lru_cache(maxsize=8)
def _parse(data: bytes, kind: str) -> Node:
    return _parser(kind).parse(data).root_node


def _js_data(node: Node | None) -> bool:
    while node is not None and node.type not in ("string", "template_string"):
        node = node.parent
    if node is None or node.parent is None or node.parent.type != "array":
        return False
    array = node.parent
    if array.parent is not None and array.parent.type == "arguments":
        return False  # spawn("sh", ["-c", "..."]): an argv that runs
    return sum(c.type in ("string", "template_string") for c in array.named_children) >= 2


def _bash_data(node: Node | None) -> bool:
    child: Node | None = None
    while node is not None:
        if node.type in ("command_substitution", "process_substitution", "subshell"):
            return False  # the text runs
        if node.type == "case_item" and child is not None:
            return child.start_byte < _case_body_start(node)  # a pattern, not the commands of the branch
        if node.type == "array":
            return True
        if node.type == "variable_assignment" and child is not None and child.type != "command_name":
            return child.type in ("string", "raw_string", "expansion", "concatenation", "array")
        if node.type == "command":
            name = node.child_by_field_name("name")
            cmd = (name.text or b"").decode(errors="replace").rsplit("/", 1)[-1] if name is not None else ""
            return cmd in _GREP and child is not None and child != name
        child, node = node, node.parent
    return False


def _case_body_start(item: Node) -> int:
    """Byte offset where a case item's commands start (after the `)` closing its patterns)."""
    for c in item.children:
        if c.type == ")":
            return c.end_byte
    return item.end_byte
