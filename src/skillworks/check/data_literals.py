"""Whether a span of a script is an element of a data collection rather than code that runs, judged on the
syntax tree: a string in an array/list/set/tuple literal of several strings (Python `ast`, tree-sitter for
JavaScript/TypeScript and shell), a string in a JSON array (a permission deny list, a list of patterns), a
`case` pattern, the pattern side of a shell `[[ ... == pattern ]]` test, a shell comment, a quoted value
assigned to a shell variable, the pattern argument of grep or of Python's `re` functions, or an item of a
YAML block sequence in a fenced block. A command found there is a payload, a block list or a detection
pattern: the command is not run by that line. A fenced block of a Markdown file is judged the same way, as
the language its info string names (`fenced_data_element`), and the body of a shell heredoc fed to Python
(`python3 <<'EOF'`) as Python.

A list that is itself an argument of a call (`subprocess.run([...])`, `spawn("sh", [...])`) may be the argv
that runs, and is never treated as data here. Nor is data the script later runs: a shell variable or array run
by `eval "$V"`, `sh -c "$V"`, `$V` as the command or a `for x in "${V[@]}"` loop that runs `$x` so, and a
Python list/tuple/set bound to a name that a `for` loop hands, item by item, to `os.system`, `subprocess`,
`exec` or `eval` (names are matched within the file, not per function)."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

import tree_sitter_bash
import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

from skillworks.check._pyparse import parse_python

_JS = (".js", ".mjs", ".cjs", ".jsx")
_TS = (".ts", ".tsx", ".mts", ".cts")
_SHELL = (".sh", ".bash", ".zsh")
_GREP = frozenset({"grep", "egrep", "fgrep", "rg"})
_YAML_ITEM = re.compile(r"^(\s*)-\s+\S")
# JSON keys whose array is an argv that runs (MCP servers, hooks, launch configs), not a list of values
_ARGV_KEYS = frozenset({"args", "argv", "command", "cmd", "exec", "run", "script", "entrypoint", "program"})
_RE_FUNCS = frozenset({"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
# a fence's language -> a file name whose suffix `is_data_element` reads
_FENCE_NAMES = {
    **dict.fromkeys(("bash", "sh", "shell", "zsh", "console"), "fence.sh"),
    **dict.fromkeys(("python", "py", "python3"), "fence.py"),
    **dict.fromkeys(("javascript", "js", "mjs", "jsx", "node"), "fence.js"),
    **dict.fromkeys(("typescript", "ts", "tsx"), "fence.ts"),
    **dict.fromkeys(("json", "jsonc", "json5"), "fence.json"),
}
# languages where `#` starts a comment: text after it, behind code on the same line, does not run
_HASH_COMMENT = frozenset({"bash", "sh", "shell", "zsh", "perl", "pl", "python", "py", "ruby", "rb", "r", "yaml"})


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
    if name.endswith(".json"):
        return _json_array_element(text, start, end)
    return False


def fenced_data_element(text: str, body: tuple[int, int, str], start: int, end: int) -> bool:
    """True when text[start:end], inside the fenced block `body` (its body's start, end and language, as
    `TextMap.fence_at` gives them), is data by the rules of that language, or a trailing comment after code
    on its line in a language where `#` comments."""
    a, b, lang = body
    if lang in _HASH_COMMENT and _trailing_comment(text[text.rfind("\n", 0, start) + 1 : start]):
        return True
    name = _FENCE_NAMES.get(lang)
    return name is not None and is_data_element(text[a:b], name, start - a, end - a)


def _trailing_comment(before: str) -> bool:
    """True when `before` (the line up to a match) holds code, then ` #` outside quotes: a comment."""
    i = before.find(" #")
    while i >= 0:
        head = before[:i]
        if head.strip() and head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
            return True
        i = before.find(" #", i + 1)
    return False


# --- JSON ------------------------------------------------------------------------------------------------------
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}:,]')


def _json_array_element(text: str, start: int, end: int) -> bool:
    """True when text[start:end] lies in a string that is an element of a JSON array, unless the array is the
    value of a key that holds an argv (`"args": [...]`). Read token by token, so a fragment or a file with
    comments still reads."""
    stack: list[tuple[str, str | None]] = []  # (container, the key it is the value of)
    key: str | None = None
    last: str | None = None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if m.start() > end:
            return False
        if tok in "[{":
            stack.append((tok, key if last == ":" else None))
            key = None
        elif tok in "]}":
            if stack:
                stack.pop()
        elif tok == ":":
            pass
        elif tok == ",":
            key = None
        else:  # a string
            if m.start() <= start and end <= m.end():
                if not stack or stack[-1][0] != "[":
                    return False
                owner = next((k for c, k in reversed(stack) if c == "{" or k is not None), None)
                return (stack[-1][1] or owner or "").lower() not in _ARGV_KEYS
            if stack and stack[-1][0] == "{" and last in ("{", ","):
                key = tok[1:-1]
        last = tok
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
            if _regex_call(node) and node.args and _spans(starts, node.args[0], start, end):
                return True  # the pattern of re.compile / re.search / ...: text to look for
    if _unrun_python_string(tree, starts, start, end):
        return True
    run = _python_run_collections(tree)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.List, ast.Set, ast.Tuple)) or id(node) in in_call or id(node) in run:
            continue
        strings = [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, (str, bytes))]
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


_PY_RUNNERS = frozenset({"system", "popen", "run", "call", "check_call", "check_output", "Popen", "getoutput"})


def _python_runner(func: ast.expr) -> bool:
    """`os.system`, `subprocess.run`, ... (by attribute name on a module name), `exec` and `eval`."""
    if isinstance(func, ast.Name):
        return func.id in ("exec", "eval")
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("os", "subprocess", "commands")
        and func.attr in _PY_RUNNERS
    )


def _unrun_python_string(tree: ast.Module, starts: list[int], start: int, end: int) -> bool:
    """True when text[start:end] lies in a string literal that nothing runs: an argument of a call to neither
    a command runner nor a function of the file (a test's input, `assertEqual(x, "$(rm -rf /)")`), a
    docstring, or a value bound to names no runner call reads. A string reaching `os.system`/`subprocess`/
    `exec`/`eval` directly, through a name, a `for` loop or a function the file defines (a wrapper) runs."""
    parents: dict[int, ast.AST] = {}
    hit: ast.Constant | None = None
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _spans(starts, node, start, end):
            hit = node
    if hit is None:
        return False
    local_defs = {  # functions of the file that run a command: wrappers (`def sh(cmd): subprocess.run(cmd, ...)`)
        n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(isinstance(c, ast.Call) and _python_runner(c.func) for c in ast.walk(n))
    }
    run_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (_python_runner(node.func) or _local_call(node, local_defs)):
            run_names.update(n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name))
    cur: ast.AST = hit
    while id(cur) in parents:
        parent = parents[id(cur)]
        if isinstance(parent, ast.Call) and cur is not parent.func:
            return not (_python_runner(parent.func) or _local_call(parent, local_defs))
        if isinstance(parent, ast.Assign | ast.AnnAssign):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            return not names & run_names and not _loop_runs(tree, names)
        if isinstance(parent, ast.Return | ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            return isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module) and isinstance(
                cur, ast.Expr
            )  # a docstring or a bare string statement; a returned value may be run by the caller
        cur = parent
    return False


def _local_call(call: ast.Call, local_defs: set[str]) -> bool:
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name in local_defs


def _loop_runs(tree: ast.Module, names: set[str]) -> bool:
    """True when a `for` loop over one of `names` hands its item to a runner."""
    return any(
        isinstance(n, ast.For | ast.AsyncFor) and isinstance(n.iter, ast.Name) and n.iter.id in names and id(n.iter)
        for n in ast.walk(tree)
    ) and bool(_python_run_collections_names(tree) & names)


def _python_run_collections_names(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.For | ast.AsyncFor)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, ast.Name)
            and _loop_runs_its_item(node, node.target.id)
        ):
            out.add(node.iter.id)
    return out


def _loop_runs_its_item(loop: ast.For | ast.AsyncFor, item: str) -> bool:
    """Does the loop's body hand its item (`item`, the loop variable) to a command runner's first argument?"""
    return any(
        isinstance(sub, ast.Call)
        and _python_runner(sub.func)
        and sub.args
        and any(isinstance(n, ast.Name) and n.id == item for n in ast.walk(sub.args[0]))
        for stmt in loop.body
        for sub in ast.walk(stmt)
    )


def _python_run_collections(tree: ast.Module) -> set[int]:
    """Ids of the collection literals whose items a loop hands to a command runner: `for step in STEPS:
    os.system(step)` with `STEPS = [...]`, or the literal written in the `for` itself."""
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple, ast.Set)):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    bound.setdefault(t.id, []).append(node.value)
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(node.value, (ast.List, ast.Tuple, ast.Set))
        ):
            bound.setdefault(node.target.id, []).append(node.value)
    out: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.For, ast.AsyncFor)) or not isinstance(node.target, ast.Name):
            continue
        if not _loop_runs_its_item(node, node.target.id):
            continue
        if isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
            out.add(id(node.iter))
        elif isinstance(node.iter, ast.Name):
            out.update(id(c) for c in bound.get(node.iter.id, []))
    return out


@lru_cache(maxsize=8)
def _python_tree(text: str) -> ast.Module | None:
    try:
        return parse_python(text)
    except (SyntaxError, ValueError):
        return None


def _line_starts(text: str) -> list[int]:
    """Offsets of line starts; ast columns are UTF-8 byte offsets, close enough for ASCII lines."""
    out = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            out.append(i + 1)
    return out


def _regex_call(node: ast.Call) -> bool:
    f = node.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr in _RE_FUNCS
        and isinstance(f.value, ast.Name)
        and f.value.id in ("re", "regex")
    )


def _spans(starts: list[int], node: ast.expr, start: int, end: int) -> bool:
    if not isinstance(node, ast.Constant) or not isinstance(node.value, (str, bytes)) or node.end_lineno is None:
        return False
    a = starts[node.lineno - 1] + node.col_offset
    b = starts[node.end_lineno - 1] + (node.end_col_offset or 0)
    return a <= start and end <= b


# --- JavaScript / TypeScript / shell ----------------------------------------------------------------------------
def _tree(text: str, start: int, end: int, kind: str) -> bool:
    data = text.encode("utf-8")
    b_start = len(text[:start].encode("utf-8"))
    b_end = len(text[:end].encode("utf-8"))
    root = _parse(data, kind)
    node: Node | None = root.descendant_for_byte_range(b_start, b_end)
    if kind == "bash":
        body = _python_heredoc(node)
        if body is not None:  # python3 <<'EOF' ... EOF: the body is a Python program
            offset = len(data[: body.start_byte].decode("utf-8", errors="replace"))
            code = (body.text or b"").decode("utf-8", errors="replace")
            return _python(code, start - offset, end - offset)
        return _bash_data(node, _bash_run_vars(data))
    return _js_data(node)


def _python_heredoc(node: Node | None) -> Node | None:
    """The heredoc body holding `node` when the heredoc feeds a Python interpreter, else None."""
    while node is not None and node.type != "heredoc_body":
        node = node.parent
    statement = node.parent.parent if node is not None and node.parent is not None else None
    if statement is None or statement.type != "redirected_statement":
        return None
    command = statement.child_by_field_name("body")
    name = command.child_by_field_name("name") if command is not None and command.type == "command" else None
    word = (name.text or b"").decode(errors="replace").rsplit("/", 1)[-1] if name is not None else ""
    return node if re.fullmatch(r"python(?:3(?:\.\d+)?)?", word) else None


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


_VAR_REF = re.compile(rb"\$\{?([A-Za-z_]\w*)")
_SHELL_NAMES = frozenset({b"sh", b"bash", b"zsh", b"dash", b"ksh"})


@lru_cache(maxsize=8)
def _bash_run_vars(data: bytes) -> frozenset[str]:
    """Names of the variables whose value the script runs as a command: `eval "$V"`, `bash -c "$V"`, `$V args`
    (the command word), and the arrays a `for x in "${V[@]}"` loop walks when the loop runs `$x` so."""
    root = _parse(data, "bash")
    run: set[bytes] = set()
    loops: list[tuple[bytes, list[bytes]]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "for_statement":
            var = node.child_by_field_name("variable")
            values = [v.text or b"" for v in node.children_by_field_name("value")]
            if var is not None:
                loops.append((var.text or b"", values))
        if node.type != "command":
            continue
        word_node = node.child_by_field_name("name")
        word = (word_node.text or b"") if word_node is not None else b""
        args = [
            c for c in node.named_children if c.type not in ("command_name", "variable_assignment", "file_redirect")
        ]
        if word.startswith((b"$", b'"$')):
            run.update(_VAR_REF.findall(word))
        base = word.strip(b"\"'").rsplit(b"/", 1)[-1]
        if base == b"eval":
            for a in args:
                run.update(_VAR_REF.findall(a.text or b""))
        elif base in _SHELL_NAMES:
            texts = [a.text or b"" for a in args]
            if b"-c" in texts and texts.index(b"-c") + 1 < len(texts):
                run.update(_VAR_REF.findall(texts[texts.index(b"-c") + 1]))
    for _ in range(2):  # a loop over an array whose items are run
        for loop_var, loop_values in loops:
            if loop_var in run:
                for value in loop_values:
                    run.update(_VAR_REF.findall(value))
    return frozenset(r.decode(errors="replace") for r in run)


def _assigned_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return (name.text or b"").decode(errors="replace") if name is not None else ""


def _bash_data(node: Node | None, run: frozenset[str] = frozenset()) -> bool:
    child: Node | None = None
    while node is not None:
        if node.type == "comment":
            return True  # a comment does not run
        if node.type in ("command_substitution", "process_substitution", "subshell"):
            return False  # the text runs
        if node.type == "binary_expression" and child is not None and _test_pattern(node, child):
            return True  # [[ "$cmd" == *"rm -rf /"* ]]: the pattern the command is compared with
        if node.type == "case_item" and child is not None:
            return child.start_byte < _case_body_start(node)  # a pattern, not the commands of the branch
        if node.type == "array":
            owner = node.parent
            return owner is None or owner.type != "variable_assignment" or _assigned_name(owner) not in run
        if node.type == "variable_assignment" and child is not None and child.type != "command_name":
            if _assigned_name(node) in run:
                return False  # a command held in a variable the script later runs
            return child.type in ("string", "raw_string", "expansion", "concatenation", "array")
        if node.type == "command":
            name = node.child_by_field_name("name")
            cmd = (name.text or b"").decode(errors="replace").rsplit("/", 1)[-1] if name is not None else ""
            return cmd in _GREP and child is not None and child != name
        child, node = node, node.parent
    return False


def _test_pattern(expr: Node, child: Node) -> bool:
    """True when `child` is the right-hand side of a string comparison or match (`==`, `!=`, `=~`, `=`)."""
    op = expr.child_by_field_name("operator")
    right = expr.child_by_field_name("right")
    if op is None or right is None:
        return False
    return (op.text or b"").decode() in ("==", "!=", "=~", "=") and child.start_byte >= right.start_byte


def _case_body_start(item: Node) -> int:
    """Byte offset where a case item's commands start (after the `)` closing its patterns)."""
    for c in item.children:
        if c.type == ")":
            return c.end_byte
    return item.end_byte
