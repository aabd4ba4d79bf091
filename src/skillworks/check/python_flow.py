"""Source-to-sink analysis of a skill's Python files on their syntax trees (`ast`), across lines and files.

Sources: the environment (`os.environ`, `os.environb`, `dict(os.environ)`, `os.environ.copy()`; one named
variable is how a script reads its own key, not a source), credential files (`~/.ssh`, `~/.aws`, `.env`, ...
opened or read), downloads (`requests.get(...).text`, `urllib.request.urlopen(...).read()`, httpx, aiohttp)
and decoders (base64, hex, zlib/gzip/bz2/lzma, `codecs.decode(x, "base64")`, marshal). Sinks: network sends
(requests, httpx, urllib, http.client, sockets, smtplib) -> `sec-exfiltration`; `exec`/`eval` of a download
-> `sec-remote-exec`, of a decoded value -> `sec-obfuscation`; an interpreter run on a file written from a
download or a decoder; commands (`os.system`, `subprocess`), whose strings are analysed as shell code; files
written to persistence places (`sec-persistence`).

Names carry what was assigned to them within their scope (a function's locals, the module's globals), so a
payload built over several lines is followed and a name reused in another function is not confused with it.
Functions carry what they return, also across the files of one skill (`from helpers import collect`), and
imports are resolved (`from base64 import b64decode as d; exec(d(X))`). Literal base64/hex/zlib blobs that
reach exec/eval are decoded and scanned again."""

from __future__ import annotations

import ast
import base64
import binascii
import contextlib
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from skillworks.check.python_calls import (
    CODECS,
    CONN_SENDS,
    CONNECTIONS,
    DECODER_MODULES,
    DECODERS,
    DOWNLOAD_CALLS,
    EXECS,
    MUTATORS,
    NET_MODULES,
    NET_SENDS,
    RAW_SENDS,
    READS,
    RUNNERS,
)
from skillworks.check.shell_flow import analyse_shell
from skillworks.threat_words import INTERPRETERS, SENSITIVE_PATH, persistence_target

SECRET, DOWNLOAD, DECODED, PATHS, CONN = "secret", "download", "decoded", "path", "connection"
_ATTR = -1  # the scope key of instance attributes (`self.payload`): shared by the methods of a module
_RUNS = frozenset({DOWNLOAD, DECODED})
_MAX_DECODE = 200_000
_MAX_DEPTH = 2  # decoded payloads inside decoded payloads


@dataclass(frozen=True)
class PyHit:
    """One source reaching one sink: the rule it breaks, what reached it, the sink's line; `high` False when the
    analysis is not confident enough to block (the finding is reported as a warning)."""

    rule_id: str
    message: str
    line: int  # 1-based line in the file
    high: bool = True


@dataclass
class _Summary:
    """What one module gives the modules that import it: the kinds its functions return and its globals hold."""

    returns: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        if _dotted(node.func) == "__import__" and node.args and isinstance(node.args[0], ast.Constant):
            parts.append(str(node.args[0].value))  # __import__("base64").b64decode
        else:
            parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))


def _const_text(node: ast.AST) -> str | None:
    """The text of a string expression: constants, f-strings (placeholders as {}), `+` joins, lists of words."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        v = node.value
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else v
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _const_text(node.left), _const_text(node.right)
        return None if a is None and b is None else (a or "{}") + (b or "{}")
    if isinstance(node, ast.List | ast.Tuple):
        words = [_const_text(e) for e in node.elts]
        if words and words[0] is not None:
            return " ".join(w if w is not None else "{}" for w in words)
    return None


def _target_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List | ast.Starred):
        elts = node.elts if isinstance(node, ast.Tuple | ast.List) else [node.value]
        return [n for e in elts for n in _target_names(e)]
    if isinstance(node, ast.Subscript | ast.Attribute):
        return _target_names(node.value)
    return []


class _Scopes:
    """Which function each node sits in, and which names each function assigns (its locals)."""

    def __init__(self, tree: ast.Module) -> None:
        self.of: dict[int, int] = {}
        self.parent: dict[int, int] = {0: 0}
        self.local: dict[int, set[str]] = {0: set()}
        self.declared_global: dict[int, set[str]] = {}
        stack: list[tuple[ast.AST, int]] = [(tree, 0)]
        while stack:
            node, scope = stack.pop()
            for child in ast.iter_child_nodes(node):
                self.of[id(child)] = scope
                inner = scope
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    inner = id(child)
                    self.parent[inner] = scope
                    a = child.args
                    self.local[inner] = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | {
                        x.arg for x in (a.vararg, a.kwarg) if x is not None
                    }
                    if not isinstance(child, ast.Lambda):
                        self.local[scope].add(child.name)
                elif isinstance(child, ast.Global | ast.Nonlocal):
                    self.declared_global.setdefault(scope, set()).update(child.names)
                else:
                    for name in self._assigned(child):
                        self.local[scope].add(name)
                stack.append((child, inner))

    @staticmethod
    def _assigned(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Assign):
            return [n for t in node.targets for n in _target_names(t) if isinstance(t, ast.Name | ast.Tuple | ast.List)]
        if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and isinstance(node.target, ast.Name):
            return [node.target.id]
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            return _target_names(node.target)
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            return _target_names(node.optional_vars)
        if isinstance(node, ast.ExceptHandler) and node.name:
            return [node.name]
        if isinstance(node, ast.Import | ast.ImportFrom):
            return [a.asname or a.name.split(".")[0] for a in node.names]
        return []

    def key(self, node: ast.AST, name: str) -> tuple[int, str]:
        """The scope that owns `name` where `node` uses it: the innermost function assigning it, else the module."""
        scope = self.of.get(id(node), 0)
        while True:
            if name in self.declared_global.get(scope, ()):
                return (0, name)
            if name in self.local.get(scope, ()) or scope == 0:
                return (scope, name)
            scope = self.parent.get(scope, 0)


class _Tree:
    """What one parsed module's flow analysis needs that does not depend on other modules: its nodes in walk
    order, scopes, imports and literals, and its assignments. Built once per tree and shared by every pass
    over it (a multi-file skill is analysed three times), so the tree is walked once, not once per pass."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.nodes: list[ast.AST] = list(ast.walk(tree))
        self.scopes = _Scopes(tree)
        self.consts: dict[tuple[int, str], str | bytes] = {}  # names bound to one literal
        self.aliases: dict[str, str] = {}  # imported name -> module.attr
        self.opened: dict[tuple[int, str], list[ast.AST]] = {}  # file object -> the path expression it was opened from
        # os.environ nodes read for one named variable (os.environ["KEY"], os.environ.get("KEY")): how a
        # skill reads its own key, not a dump of the environment
        self.single_env: set[int] = set()
        self._walks: dict[int, list[ast.AST]] = {}
        for node in self.nodes:
            single = ("get", "setdefault", "pop", "__getitem__")
            if isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and node.attr in single):
                self.single_env.add(id(node.value))
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                # `with open(path, "w") as fh`: what fh is given lands in path
                ctx = node.context_expr
                if isinstance(ctx, ast.Call) and ctx.args:
                    self.opened[self.scopes.key(node.optional_vars, node.optional_vars.id)] = list(ctx.args[:1])
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0]
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str | bytes):
                    self.consts[self.scopes.key(target, target.id)] = node.value.value
                elif _dotted(node.value) in EXECS:  # run = exec
                    self.aliases[target.id] = _dotted(node.value)
        # what propagation visits, in walk order: a function's returned values, or an assignment's targets and value
        self.steps: list[tuple[str | None, list[ast.AST], ast.AST]] = []
        for node in self.nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                values = [
                    sub.value
                    for sub in ast.walk(node)
                    if isinstance(sub, ast.Return | ast.Yield) and sub.value is not None
                ]
                self.steps.append((node.name, [], ast.Tuple(elts=values, ctx=ast.Load())))
                continue
            targets, value = self._assignment(node)
            if value is not None:
                self.steps.append((None, targets, value))

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`ast.walk(node)` as a list, kept: the same expressions are re-read on every propagation round."""
        found = self._walks.get(id(node))
        if found is None:
            found = self._walks[id(node)] = list(ast.walk(node))
        return found

    def resolve(self, func: ast.AST) -> str:
        if (  # getattr(builtins, "exec")
            isinstance(func, ast.Call)
            and _dotted(func.func) == "getattr"
            and len(func.args) == 2
            and _const_text(func.args[1]) in ("exec", "eval")
        ):
            return str(_const_text(func.args[1]))
        name = _dotted(func)
        head, _, rest = name.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full

    def _assignment(self, node: ast.AST) -> tuple[list[ast.AST], ast.AST | None]:
        if isinstance(node, ast.Assign):
            return list(node.targets), node.value
        if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value is not None:
            return [node.target], node.value
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            return [node.target], node.iter
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            return [node.optional_vars], node.context_expr
        if isinstance(node, ast.Call) and len(node.args) >= 2 and self.resolve(node.func).endswith("urlretrieve"):
            return [node.args[1]], node  # urlretrieve(url, path): the file holds a download
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            # the written data taints the receiver and the path it was opened from
            receiver = node.func.value
            targets: list[ast.AST] = [receiver]
            if isinstance(receiver, ast.Name):
                targets += self.opened.get(self.scopes.key(receiver, receiver.id), [])
            if isinstance(receiver, ast.Call):
                targets += list(receiver.args[:1])
            return targets, ast.Tuple(elts=[*node.args, *(k.value for k in node.keywords)], ctx=ast.Load())
        return [], None


class _Flow:
    def __init__(self, tree: ast.Module | _Tree, imported: Mapping[str, _Summary], depth: int = 0) -> None:
        facts = tree if isinstance(tree, _Tree) else _Tree(tree)
        self.facts = facts
        self.tree = facts.tree
        self.imported = imported
        self.depth = depth
        self.scopes = facts.scopes
        self.names: dict[tuple[int, str], set[str]] = {}
        self.consts = facts.consts
        self.hits: list[PyHit] = []
        self.aliases = facts.aliases
        self.opened = facts.opened
        self.returns: dict[str, set[str]] = {}  # function defined here -> what its return values carry
        self.written: dict[str, set[str]] = {}  # literal file paths -> what was written to them
        self.single_env = facts.single_env

    # --- propagation ----------------------------------------------------------------------------------
    def propagate(self) -> None:
        for _ in range(4):  # names assigned from names: a few rounds reach a fixed point in real scripts
            changed = False
            for function, targets, value in self.facts.steps:
                if function is not None:  # a function: what its return and yield values carry
                    ret = self.kinds(value)
                    if not ret <= self.returns.get(function, set()):
                        self.returns[function] = self.returns.get(function, set()) | ret
                        changed = True
                    continue
                kinds = self.kinds(value)
                if not kinds:
                    continue
                for t in targets:
                    if isinstance(t, ast.Constant) and isinstance(t.value, str) and len(t.value) > 1:
                        if not kinds <= self.written.get(t.value, set()):  # open("/tmp/x.sh", "w").write(...)
                            self.written[t.value] = self.written.get(t.value, set()) | kinds
                            changed = True
                        continue
                    attr = _self_attr(t)
                    if attr is not None and not kinds <= self.names.get((_ATTR, attr), set()):
                        self.names[(_ATTR, attr)] = self.names.get((_ATTR, attr), set()) | kinds
                        changed = True
                    for name in _target_names(t):
                        if name in self.aliases:
                            continue  # `os.environ[k] = v` changes the environment, not what `os` carries
                        k = self.scopes.key(t, name)
                        before = self.names.get(k, set())
                        if not kinds <= before:
                            self.names[k] = before | kinds
                            changed = True
            if not changed:
                break

    def resolve(self, func: ast.AST) -> str:
        return self.facts.resolve(func)

    # --- what an expression carries -------------------------------------------------------------------
    def kinds(self, node: ast.AST) -> set[str]:
        out: set[str] = set()
        for sub in self.facts.walk(node):
            if isinstance(sub, ast.Name):
                k = self.scopes.key(sub, sub.id)
                out |= self.names.get(k, set())
                full = self.aliases.get(sub.id)
                if full == "os.environ" and id(sub) not in self.single_env:
                    out.add(SECRET)
                elif full and k[0] == 0 and k not in self.names:
                    module, _, attr = full.rpartition(".")
                    out |= self._imported(module).names.get(attr, set())
            elif isinstance(sub, ast.Attribute) and id(sub) not in self.single_env:
                if _dotted(sub) in ("os.environ", "os.environb"):
                    out.add(SECRET)
                own = _self_attr(sub)
                if own is not None:
                    out |= self.names.get((_ATTR, own), set())
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if SENSITIVE_PATH.search(sub.value):
                    out.add(PATHS)
                out |= self.written.get(sub.value, set())
            elif isinstance(sub, ast.Call):
                out |= self._call_kinds(sub)
        return out

    def _imported(self, module: str) -> _Summary:
        return self.imported.get(module.rsplit(".", 1)[-1], _EMPTY)

    def _call_kinds(self, call: ast.Call) -> set[str]:
        out: set[str] = set()
        fn = self.resolve(call.func)
        if isinstance(call.func, ast.Name):
            out |= self.returns.get(call.func.id, set())
        module, _, last = fn.rpartition(".")
        if module:
            out |= self._imported(module).returns.get(last, set())
        if any(fn.startswith(m + ".") for m in NET_MODULES) and last in DOWNLOAD_CALLS:
            out.add(DOWNLOAD)
        if fn in CONNECTIONS or fn.endswith((".wrap_socket", ".create_connection")):
            out.add(CONN)
        if last in DECODERS and (fn.startswith(DECODER_MODULES) or "fromhex" in fn):
            out.add(DECODED)
        if last == "decode" and len(call.args) >= (1 if isinstance(call.func, ast.Attribute) else 2):
            codec = _const_text(call.args[-1] if fn == "codecs.decode" else call.args[0]) or ""
            if codec.lower().replace("-", "_") in CODECS:
                out.add(DECODED)
        if last in READS and (PATHS in self.kinds_of_args(call) or PATHS in self.kinds(call.func)):
            out.add(SECRET)
        return out

    def kinds_of_args(self, call: ast.Call) -> set[str]:
        out: set[str] = set()
        for a in [*call.args, *(k.value for k in call.keywords)]:
            out |= self.kinds(a)
        return out

    # --- sinks ----------------------------------------------------------------------------------------
    def add(self, rule: str, message: str, node: ast.AST, high: bool = True) -> None:
        self.hits.append(PyHit(rule, message, getattr(node, "lineno", 1), high))

    def run(self) -> list[PyHit]:
        self.propagate()
        for node in self.facts.nodes:
            if isinstance(node, ast.Call):
                self.sink(node)
        return self.hits

    def sink(self, call: ast.Call) -> None:
        fn = self.resolve(call.func)
        last = fn.rsplit(".", 1)[-1]
        if (
            (any(fn.startswith(m + ".") for m in NET_MODULES) and last in NET_SENDS)
            or _is_method_send(call, last)
            or (isinstance(call.func, ast.Attribute) and last in CONN_SENDS and CONN in self.kinds(call.func.value))
        ):
            sent: set[str] = set()
            for a in [*call.args[1:], *(k.value for k in call.keywords if k.arg not in ("headers", "auth", "url"))]:
                sent |= self.kinds(a)
            if fn.endswith("Request") or last in RAW_SENDS:
                sent |= self.kinds_of_args(call) - {PATHS}
            if SECRET in sent:
                self.add("sec-exfiltration", f"{fn}() sends credential data or the environment", call)
        if fn in EXECS and call.args:
            carried = self.kinds(call.args[0])
            if DOWNLOAD in carried:
                self.add("sec-remote-exec", f"{fn}() runs code downloaded from the network", call)
            elif DECODED in carried:
                self.add("sec-obfuscation", f"{fn}() runs code it decoded", call)
            self.literal_blob(call)
        if fn.startswith(("os.", "subprocess.", "commands.", "pty.")) and last in RUNNERS and call.args:
            self.command(call, call.args[0])
            self.runs_payload(fn, call)
        if last == "open" and len(call.args) >= 2:
            mode = _const_text(call.args[1]) or ""
            path = _path_text(call.args[0])
            target = persistence_target(path)
            if any(c in mode for c in "wa+") and target:
                self.add(
                    "sec-persistence", f"opens a {target} for writing ({path})", call, high=target != "systemd unit"
                )
        if last in ("write_text", "write_bytes") and isinstance(call.func, ast.Attribute):
            path = _path_text(call.func.value)
            if path and persistence_target(path):
                self.add("sec-persistence", f"writes a {persistence_target(path)} ({path})", call)
        if fn.endswith("CronTab") or fn.startswith("crontab."):
            self.add("sec-persistence", "installs a cron job (python-crontab)", call)

    def runs_payload(self, fn: str, call: ast.Call) -> None:
        """A program run on what was downloaded or decoded: a command string carrying it, an interpreter given a
        file written from it (or `-c` it), the file itself run, or an interpreter fed it on stdin. A program that
        only takes a download as an argument (`gemini -p TEXT`) does not run it."""
        arg = call.args[0]
        carried: set[str] = set()
        high = True
        if isinstance(arg, ast.List | ast.Tuple) and arg.elts:
            program = (_const_text(arg.elts[0]) or self.resolve(arg.elts[0])).rsplit("/", 1)[-1]
            if program in INTERPRETERS or program == "sys.executable":
                for e in arg.elts[1:]:
                    carried |= self.kinds(e)
            carried |= self.kinds(arg.elts[0])
        elif isinstance(arg, ast.Name):
            carried, high = self.kinds(arg), False  # a command list built elsewhere: its program is not known
        else:
            carried = self.kinds(arg)
            words = (_const_text(arg) or "").split()
            for i, w in enumerate(words):  # os.system("bash /tmp/x.sh") after the file was written
                before = words[i - 1].rsplit("/", 1)[-1] if i else ""
                if w in self.written and (i == 0 or before in INTERPRETERS or before in ("source", ".")):
                    carried |= self.written[w]
        stdin = next((k.value for k in call.keywords if k.arg == "input"), None)
        fed = self.kinds(stdin) & _RUNS if stdin is not None else set()
        what = carried & _RUNS or fed
        if what:
            how = "feeds to a program" if fed and not carried & _RUNS else "runs"
            if DOWNLOAD in what:
                self.add("sec-remote-exec", f"{fn}() {how} what was downloaded", call, high)
            else:
                self.add("sec-obfuscation", f"{fn}() {how} what it decoded", call, high)

    def command(self, call: ast.Call, arg: ast.AST) -> None:
        text = _const_text(arg)
        if text is None and isinstance(arg, ast.Name):  # a command held in a name bound to one literal
            held = self.consts.get(self.scopes.key(arg, arg.id))
            text = held if isinstance(held, str) else None
        if not text:
            return
        if SENSITIVE_PATH.search(text) or any(t in text for t in ("curl", "wget", "crontab", "nc ", "base64", ">>")):
            for h in analyse_shell(text.replace("{}", "X")):
                self.add(h.rule_id, h.message + " (a command in a Python string)", call, h.high)

    def literal_blob(self, call: ast.Call) -> None:
        """Decode literal payloads handed to exec/eval (in the call or through a name bound to a literal) and scan
        what they hold."""
        for sub in ast.walk(call):
            value: str | bytes | None = None
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str | bytes):
                value = sub.value
            elif isinstance(sub, ast.Name):
                value = self.consts.get(self.scopes.key(sub, sub.id))
            if value is None or len(value) < 16:
                continue
            inner = _decode_blob(value)
            if inner is None:
                continue
            self.add("sec-obfuscation", "exec/eval of an encoded literal", call)
            if self.depth < _MAX_DEPTH:
                for h in _scan_payload(inner, self.depth + 1):
                    self.add(h.rule_id, h.message + " (inside a decoded payload)", call, h.high)
            return


_EMPTY = _Summary()


def _self_attr(node: ast.AST) -> str | None:
    """`x` of `self.x` / `cls.x`: instance state one method sets and another reads."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
        return node.attr
    return None


def _is_method_send(call: ast.Call, last: str) -> bool:
    return (
        isinstance(call.func, ast.Attribute)
        and last in ("post", "put", "patch", "sendall", "send", "request")
        and isinstance(call.func.value, ast.Name | ast.Attribute | ast.Call)
        and any(
            w in _dotted(call.func.value).lower() for w in ("session", "client", "sock", "conn", "http", "requests")
        )
    )


def _path_text(node: ast.AST) -> str:
    return "/".join(sub.value for sub in ast.walk(node) if isinstance(sub, ast.Constant) and isinstance(sub.value, str))


def _decode_blob(value: str | bytes) -> str | None:
    raw = value.encode("latin-1", "ignore") if isinstance(value, str) else value
    if len(raw) > _MAX_DECODE:
        return None
    candidates: list[bytes] = [raw]
    for decode in (base64.b64decode, binascii.unhexlify):
        try:
            candidates.append(decode(raw))
        except (binascii.Error, ValueError):
            continue
    for data in list(candidates):
        with contextlib.suppress(zlib.error):
            candidates.append(zlib.decompress(data))
    for data in candidates[1:]:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text.isprintable() or "\n" in text:
            return text
    return None


def _scan_payload(text: str, depth: int) -> list[PyHit]:
    """A decoded payload is scanned as Python, or as shell when it is not Python."""
    tree = _parse(text)
    if tree is not None:
        return _Flow(tree, {}, depth).run()
    return [PyHit(h.rule_id, h.message, 1, h.high) for h in analyse_shell(text)]


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _summary(flow: _Flow) -> _Summary:
    module_names = {name: kinds for (scope, name), kinds in flow.names.items() if scope == 0}
    return _Summary(dict(flow.returns), module_names)


def analyse_python_files(files: Mapping[str, str]) -> dict[str, list[PyHit]]:
    """Every flow finding in the Python files of one skill, keyed by the file's path. A function or global one
    file imports from another (by module name: `helpers` for `scripts/helpers.py`) carries what it carries
    there. Files that do not parse have no findings."""
    trees = {rel: _Tree(parsed) for rel, text in files.items() if (parsed := _parse(text)) is not None}
    summaries: dict[str, _Summary] = {}
    for _ in range(2 if len(trees) > 1 else 0):  # one module importing another importing a third
        for rel, facts in trees.items():
            flow = _Flow(facts, summaries)
            flow.propagate()
            summaries[_module_name(rel)] = _summary(flow)
    return {rel: _Flow(facts, summaries).run() for rel, facts in trees.items()}


def analyse_python(text: str) -> list[PyHit]:
    """Every flow finding in one Python source (none when it does not parse)."""
    return analyse_python_files({"main.py": text}).get("main.py", [])


def _module_name(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".py") else name


__all__ = ["PyHit", "analyse_python", "analyse_python_files"]
