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

from skillworks.check._pyparse import parse_python
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


# fields that never hold a node the analysis reads: names and flags, and the context/operator singletons
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "kind", "type_comment", "level", "module"})
_FIELDS: dict[type, tuple[str, ...]] = {}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class _Scopes:
    """Which function each node sits in, and which names each function assigns (its locals)."""

    def __init__(self) -> None:
        self.of: dict[int, int] = {}
        self.parent: dict[int, int] = {0: 0}
        self.local: dict[int, set[str]] = {0: set()}
        self.declared_global: dict[int, set[str]] = {}

    def enter(self, child: ast.AST, scope: int) -> int:
        """Record `child`, a child of a node whose children sit in `scope`; the scope of `child`'s own children."""
        self.of[id(child)] = scope
        if isinstance(child, _SCOPES):
            inner = id(child)
            self.parent[inner] = scope
            a = child.args
            self.local[inner] = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | {
                x.arg for x in (a.vararg, a.kwarg) if x is not None
            }
            if not isinstance(child, ast.Lambda):
                self.local[scope].add(child.name)
            return inner
        if isinstance(child, ast.Global | ast.Nonlocal):
            self.declared_global.setdefault(scope, set()).update(child.names)
        elif type(child) in _BINDERS:
            self.local[scope].update(self._assigned(child))
        return scope

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


# the node types `_Scopes._assigned` reads names from
_BINDERS = frozenset(
    {
        ast.Assign,
        ast.AnnAssign,
        ast.AugAssign,
        ast.NamedExpr,
        ast.For,
        ast.AsyncFor,
        ast.comprehension,
        ast.withitem,
        ast.ExceptHandler,
        ast.Import,
        ast.ImportFrom,
    }
)
# the node types `_Tree._assignment` can make a propagation step of
_STEP_TYPES = frozenset(
    {ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension, ast.withitem}
)
_Key = tuple[int, str]
# what the walk of `_Tree` does with a node of each type (bits)
_R_FACT, _R_CALL, _R_SCOPE, _R_BINDS, _R_FUNCTION, _R_RETURN = 1, 2, 4, 8, 16, 32
_ROLES: dict[type, int] = {
    ast.Subscript: _R_FACT,
    ast.Attribute: _R_FACT,
    ast.Call: _R_FACT | _R_CALL,
    ast.FunctionDef: _R_FACT | _R_SCOPE | _R_FUNCTION,
    ast.AsyncFunctionDef: _R_FACT | _R_SCOPE | _R_FUNCTION,
    ast.Lambda: _R_SCOPE,
    ast.Global: _R_BINDS,
    ast.Nonlocal: _R_BINDS,
    ast.Return: _R_RETURN,
    ast.Yield: _R_RETURN,
}
for _t in _BINDERS | _STEP_TYPES:
    _ROLES[_t] = _ROLES.get(_t, 0) | _R_FACT | (_R_BINDS if _t in _BINDERS else 0)


@dataclass
class _Plan:
    """What `_Flow.kinds` reads of one expression, gathered once from its subtree: the kinds that do not depend
    on propagation, and the names, attributes, literals and calls whose kinds do."""

    fixed: frozenset[str]
    keys: list[_Key]  # names: what they carry
    imports: list[tuple[_Key, str, str]]  # module-level imported names not assigned here: (key, module, attribute)
    attrs: list[str]  # `self.x` attributes
    literals: list[str]  # string literals: what was written to a file of that path
    calls: list[_CallPlan]


@dataclass
class _CallPlan:
    """What `_Flow._call_kinds` reads of one call: its fixed kinds and what depends on propagation."""

    call: ast.Call
    fixed: frozenset[str]
    local: str | None  # a function of this module called by name: what it returns
    module: str  # the call's module, if any: what its function returns there
    last: str
    reads: bool  # a file read: secret when its path (or receiver) carries a sensitive path


@dataclass
class _Step:
    """One propagation step: a function's returned values (`function`), or an assignment's value and targets."""

    function: str | None
    value: ast.AST
    paths: list[str] = field(default_factory=list)  # literal file paths written
    attrs: list[str] = field(default_factory=list)  # `self.x` attributes assigned
    keys: list[_Key] = field(default_factory=list)  # names assigned, by scope


class _Tree:
    """What one parsed module's flow analysis needs that does not depend on other modules: its nodes in walk
    order, scopes, imports and literals, and its assignments. Built once per tree, in one walk, and shared by
    every pass over it (a multi-file skill is analysed three times), as are the plans of what each expression
    carries (`plan`)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.scopes = scopes = _Scopes()
        # one breadth-first walk, in `ast.walk` order (without the ctx/operator singletons): the nodes, their
        # children, their scopes, and the values each function returns or yields (its nested functions' too)
        nodes: list[ast.AST] = [tree]
        inner: list[int] = [0]  # the scope of each node's children
        functions: list[ast.AST | None] = [None]  # the innermost function def around each node's children
        outer_function: dict[int, ast.AST | None] = {}
        returned: dict[int, list[ast.expr]] = {}
        facts: list[ast.AST] = []  # the nodes the loops below read, in walk order
        self.calls: list[ast.Call] = []
        self._children: dict[int, list[ast.AST]] = {}  # of every node that has children
        children, of, fields_of, roles = self._children, scopes.of, _FIELDS, _ROLES
        i = 0
        while i < len(nodes):
            node, scope, function = nodes[i], inner[i], functions[i]
            i += 1
            fields = fields_of.get(type(node))
            if fields is None:
                fields = fields_of[type(node)] = tuple(f for f in node._fields if f not in _SKIP_FIELDS)
            kids: list[ast.AST] = []
            for name in fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    kids.extend([item for item in value if isinstance(item, ast.AST)])
                elif isinstance(value, ast.AST):
                    kids.append(value)
            if not kids:
                continue
            children[id(node)] = kids
            nodes.extend(kids)
            for child in kids:
                of[id(child)] = scope
                role = roles.get(type(child), 0)
                if role == 0:
                    inner.append(scope)
                    functions.append(function)
                    continue
                if role & _R_FACT:
                    facts.append(child)
                if role & _R_CALL:
                    self.calls.append(child)  # type: ignore[arg-type]
                if role & _R_SCOPE:
                    inner.append(scopes.enter(child, scope))
                else:
                    inner.append(scope)
                    if role & _R_BINDS:
                        scopes.enter(child, scope)
                if role & _R_FUNCTION:
                    outer_function[id(child)] = function
                    returned[id(child)] = []
                    functions.append(child)
                    continue
                functions.append(function)
                if role & _R_RETURN and child.value is not None:  # type: ignore[attr-defined]
                    around = function
                    while around is not None:
                        returned[id(around)].append(child.value)  # type: ignore[attr-defined]
                        around = outer_function[id(around)]
        self.nodes = nodes
        self.consts: dict[_Key, str | bytes] = {}  # names bound to one literal
        self.aliases: dict[str, str] = {}  # imported name -> module.attr
        self.opened: dict[_Key, list[ast.AST]] = {}  # file object -> the path expression it was opened from
        # os.environ nodes read for one named variable (os.environ["KEY"], os.environ.get("KEY")): how a
        # skill reads its own key, not a dump of the environment
        self.single_env: set[int] = set()
        self._plans: dict[int, _Plan] = {}
        self._resolved: dict[int, str] = {}
        single = ("get", "setdefault", "pop", "__getitem__")
        for node in facts:
            t = type(node)
            if t is ast.Subscript or (t is ast.Attribute and node.attr in single):  # type: ignore[attr-defined]
                self.single_env.add(id(node.value))  # type: ignore[attr-defined]
            elif t is ast.ImportFrom and node.module:  # type: ignore[attr-defined]
                for a in node.names:  # type: ignore[attr-defined]
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"  # type: ignore[attr-defined]
            elif t is ast.Import:
                for a in node.names:  # type: ignore[attr-defined]
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif t is ast.withitem and isinstance(node.optional_vars, ast.Name):  # type: ignore[attr-defined]
                # `with open(path, "w") as fh`: what fh is given lands in path
                target, ctx = node.optional_vars, node.context_expr  # type: ignore[attr-defined]
                if isinstance(ctx, ast.Call) and ctx.args:
                    self.opened[scopes.key(target, target.id)] = list(ctx.args[:1])
            elif t is ast.Assign and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):  # type: ignore[attr-defined]
                target, value = node.targets[0], node.value  # type: ignore[attr-defined]
                if isinstance(value, ast.Constant) and isinstance(value.value, str | bytes):
                    self.consts[scopes.key(target, target.id)] = value.value
                elif _dotted(value) in EXECS:  # run = exec
                    self.aliases[target.id] = _dotted(value)
        # what propagation visits, in walk order: a function's returned values, or an assignment's targets and value
        self.steps: list[_Step] = []
        for node in facts:
            if isinstance(node, _FUNCTIONS):
                values = returned[id(node)]
                value = ast.Tuple(elts=values, ctx=ast.Load())
                children[id(value)] = list[ast.AST](values)
                self.steps.append(_Step(node.name, value))
                continue
            if type(node) not in _STEP_TYPES and type(node) is not ast.Call:
                continue
            targets, value = self._assignment(node)
            if value is not None:
                self.steps.append(self._step(targets, value))

    def _step(self, targets: list[ast.AST], value: ast.AST) -> _Step:
        step = _Step(None, value)
        for t in targets:
            if isinstance(t, ast.Constant) and isinstance(t.value, str) and len(t.value) > 1:
                step.paths.append(t.value)  # open("/tmp/x.sh", "w").write(...)
                continue
            attr = _self_attr(t)
            if attr is not None:
                step.attrs.append(attr)
            for name in _target_names(t):
                if name not in self.aliases:  # `os.environ[k] = v` changes the environment, not what `os` carries
                    step.keys.append(self.scopes.key(t, name))
        return step

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`ast.walk(node)` as a list (without the ctx/operator singletons), from the children found by the walk
        of the module (and those of the tuples the analysis builds)."""
        out = [node]
        i = 0
        children = self._children
        while i < len(out):
            kids = children.get(id(out[i]))
            i += 1
            if kids:
                out.extend(kids)
        return out

    def plan(self, node: ast.AST) -> _Plan:
        """What `_Flow.kinds(node)` reads, kept: the same expressions are re-read on every propagation round."""
        found = self._plans.get(id(node))
        if found is None:
            found = self._plans[id(node)] = self._make_plan(node)
        return found

    def _make_plan(self, node: ast.AST) -> _Plan:
        fixed: set[str] = set()
        keys: dict[_Key, None] = {}
        imports: list[tuple[_Key, str, str]] = []
        attrs: list[str] = []
        literals: list[str] = []
        calls: list[_CallPlan] = []
        for sub in self.walk(node):
            if isinstance(sub, ast.Name):
                k = self.scopes.key(sub, sub.id)
                keys[k] = None
                full = self.aliases.get(sub.id)
                if full == "os.environ" and id(sub) not in self.single_env:
                    fixed.add(SECRET)
                elif full and k[0] == 0:
                    module, _, attr = full.rpartition(".")
                    imports.append((k, module, attr))
            elif isinstance(sub, ast.Attribute) and id(sub) not in self.single_env:
                if _dotted(sub) in ("os.environ", "os.environb"):
                    fixed.add(SECRET)
                own = _self_attr(sub)
                if own is not None:
                    attrs.append(own)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if SENSITIVE_PATH.search(sub.value):
                    fixed.add(PATHS)
                literals.append(sub.value)
            elif isinstance(sub, ast.Call):
                calls.append(self._call_plan(sub))
        return _Plan(frozenset(fixed), list(keys), imports, attrs, literals, calls)

    def _call_plan(self, call: ast.Call) -> _CallPlan:
        out: set[str] = set()
        fn = self.resolve(call.func)
        module, _, last = fn.rpartition(".")
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
        local = call.func.id if isinstance(call.func, ast.Name) else None
        return _CallPlan(call, frozenset(out), local, module, last, last in READS)

    def resolve(self, func: ast.AST) -> str:
        found = self._resolved.get(id(func))
        if found is None:
            found = self._resolved[id(func)] = self._resolve(func)
        return found

    def _resolve(self, func: ast.AST) -> str:
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
            values: list[ast.expr] = [*node.args, *(k.value for k in node.keywords)]
            tuple_ = ast.Tuple(elts=values, ctx=ast.Load())
            self._children[id(tuple_)] = list[ast.AST](values)
            return targets, tuple_
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
        names, returns, written = self.names, self.returns, self.written
        for _ in range(4):  # names assigned from names: a few rounds reach a fixed point in real scripts
            changed = False
            for step in self.facts.steps:
                kinds = self.kinds(step.value)
                if step.function is not None:  # a function: what its return and yield values carry
                    if not kinds <= returns.get(step.function, set()):
                        returns[step.function] = returns.get(step.function, set()) | kinds
                        changed = True
                    continue
                if not kinds:
                    continue
                for path in step.paths:
                    if not kinds <= written.get(path, set()):
                        written[path] = written.get(path, set()) | kinds
                        changed = True
                for attr in step.attrs:
                    if not kinds <= names.get((_ATTR, attr), set()):
                        names[(_ATTR, attr)] = names.get((_ATTR, attr), set()) | kinds
                        changed = True
                for k in step.keys:
                    before = names.get(k, set())
                    if not kinds <= before:
                        names[k] = before | kinds
                        changed = True
            if not changed:
                break

    def resolve(self, func: ast.AST) -> str:
        return self.facts.resolve(func)

    # --- what an expression carries -------------------------------------------------------------------
    def kinds(self, node: ast.AST) -> set[str]:
        plan = self.facts.plan(node)
        out = set(plan.fixed)
        names = self.names
        for k in plan.keys:
            carried = names.get(k)
            if carried:
                out |= carried
        for k, module, attr in plan.imports:
            if k not in names:
                out |= self._imported(module).names.get(attr, set())
        for attr in plan.attrs:
            carried = names.get((_ATTR, attr))
            if carried:
                out |= carried
        if self.written:
            for literal in plan.literals:
                carried = self.written.get(literal)
                if carried:
                    out |= carried
        for call in plan.calls:
            out |= self._call_kinds(call)
        return out

    def _imported(self, module: str) -> _Summary:
        return self.imported.get(module.rsplit(".", 1)[-1], _EMPTY)

    def _call_kinds(self, plan: _CallPlan) -> set[str]:
        out = set(plan.fixed)
        if plan.local is not None:
            out |= self.returns.get(plan.local, set())
        if plan.module:
            out |= self._imported(plan.module).returns.get(plan.last, set())
        call = plan.call
        if plan.reads and (PATHS in self.kinds_of_args(call) or PATHS in self.kinds(call.func)):
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
        for node in self.facts.calls:
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
        return parse_python(text)
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
