"""Source-to-sink analysis of a skill's JavaScript and TypeScript files (.js .mjs .cjs .ts) on their syntax trees
(tree-sitter-javascript, tree-sitter-typescript), across statements through variables and callbacks.

Sources: the whole environment (`process.env` passed on, spread, stringified or iterated; one named variable,
`process.env.API_KEY`, is how a script reads its own key and is not a source, as in the Python analysis),
credential files read (`fs.readFileSync(path.join(os.homedir(), ".ssh", "id_rsa"))`, `~/.aws/credentials`,
`.npmrc`, ...), downloads (`fetch`, `axios`, `got`, `http(s).get`, and what their callbacks receive) and decoders
(`Buffer.from(x, "base64")`, `atob`, zlib). Sinks: network sends (`fetch`, `axios`, `got`, `http(s).request` and
what is written to it, `net.connect` sockets, WebSocket, `child_process` running curl/wget) ->
`sec-exfiltration`; `eval`, `new Function`, `vm.runInThisContext`, `require`/`import()` of a written file, or
`child_process` running a download -> `sec-remote-exec`, a decoded value -> `sec-obfuscation`. Command strings
given to `child_process` are analysed as shell code (`shell_flow`); files written to persistence places are
`sec-persistence`. Literal base64/hex/zlib blobs that reach an exec sink are decoded and analysed again.

Names are tracked per file without scopes (a name reused for unrelated values in two functions is joined);
headers (`Authorization: ...`) are not counted as data sent, like the Python analysis."""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

from skillworks.check.shell_flow import analyse_shell
from skillworks.threat_words import INTERPRETERS, NETWORK_TOOLS, SENSITIVE_PATH, SHELLS, persistence_target

JS_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".ts"})
SECRET, DOWNLOAD, DECODED, PATHS, CONN = "secret", "download", "decoded", "path", "connection"
_RUNS = frozenset({DOWNLOAD, DECODED})
_MAX_BYTES = 400_000  # larger (bundled, minified) files are left to the line-based patterns
_MAX_DEPTH = 2
_FUNCTIONS = ("arrow_function", "function_expression", "function_declaration", "function", "method_definition")
_NET_MODULES = frozenset({"http", "https", "axios", "got", "node-fetch", "undici", "needle", "superagent", "request"})
_DOWNLOADS = frozenset({"fetch", "get", "request", "axios", "got", "needle", "superagent"})
_SENDS = frozenset({"fetch", "post", "put", "patch", "request", "axios", "got", "needle", "sendBeacon", "get"})
_CONNECT = frozenset({"net.connect", "net.createConnection", "tls.connect", "dgram.createSocket", "WebSocket"})
_WRITES = frozenset({"write", "end", "send"})
_EXECS = frozenset({"eval", "Function", "vm.runInThisContext", "vm.runInNewContext", "vm.runInContext"})
_VM_SCRIPT = frozenset({"vm.Script", "vm.compileFunction", "vm.SourceTextModule"})
_CP_RUNS = frozenset({"exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork"})
_READS = frozenset({"readFileSync", "readFile", "createReadStream", "readdirSync", "readdir"})
_FILE_WRITES = frozenset({"writeFileSync", "writeFile", "appendFileSync", "appendFile"})
_ZLIB = frozenset({"inflateSync", "gunzipSync", "unzipSync", "inflateRawSync", "brotliDecompressSync"})
# where a script puts its own key: not counted as data sent (a header carrying the environment still is)
_SKIP_KEYS = frozenset({"auth", "Authorization", "authorization", "x-api-key", "X-Api-Key", "url", "method", "host"})
_GLOBALS = frozenset({"globalThis", "window", "global", "self"})
_B64 = re.compile(r"^[A-Za-z0-9+/=\s]+$")


@dataclass(frozen=True)
class JsHit:
    """One source reaching one sink in a JS/TS file; `high` False when not confident enough to block."""

    rule_id: str
    message: str
    line: int  # 1-based line in the file
    high: bool = True


@lru_cache(maxsize=3)
def _parser(dialect: str) -> Parser:
    if dialect == "ts":
        return Parser(Language(tree_sitter_typescript.language_typescript()))
    return Parser(Language(tree_sitter_javascript.language()))


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", errors="replace") if node is not None else ""


def _walk(root: Node) -> list[Node]:
    out: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _string_value(node: Node | None) -> str | None:
    """The text of a string or template literal (substitutions as `X`), `+` joins of them."""
    if node is None:
        return None
    if node.type == "string":
        return "".join(_text(c) for c in node.named_children)
    if node.type == "template_string":
        parts = []
        for c in node.named_children:
            parts.append("X" if c.type == "template_substitution" else _text(c))
        return "".join(parts)
    if node.type == "binary_expression" and _text(node.child_by_field_name("operator")) == "+":
        a = _string_value(node.child_by_field_name("left"))
        b = _string_value(node.child_by_field_name("right"))
        return None if a is None and b is None else (a or "X") + (b or "X")
    if node.type == "parenthesized_expression" and node.named_children:
        return _string_value(node.named_children[0])
    return None


def _path_text(node: Node) -> str:
    """The string pieces of a path expression joined by `/`: `path.join(os.homedir(), ".bashrc")` -> `.bashrc`."""
    return "/".join(v for n in _walk(node) if n.type in ("string", "template_string") and (v := _string_value(n)))


class _Flow:
    def __init__(self, root: Node, depth: int) -> None:
        self.root = root
        self.depth = depth
        self.nodes = _walk(root)
        self.names: dict[str, set[str]] = {}
        self.consts: dict[str, str] = {}  # names bound to one string literal
        self.values: dict[str, Node] = {}  # names declared once with a value: where a literal blob may sit
        self.aliases: dict[str, str] = {}  # local name -> module or module.attr (require/import)
        self.written: dict[str, set[str]] = {}  # file path (literal text or variable name) -> what was written
        self.hits: list[JsHit] = []
        # names the file declares: only these carry what is pushed or written into them (not `process`)
        self.declared = {
            _text(n) for d in self.nodes if d.type == "variable_declarator" and (n := d.child_by_field_name("name"))
        }
        self._imports()

    # --- names --------------------------------------------------------------------------------------
    def _imports(self) -> None:
        for node in self.nodes:
            if node.type == "variable_declarator":
                name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
                if value is None or name is None:
                    continue
                while value.type in ("await_expression", "parenthesized_expression") and value.named_children:
                    value = value.named_children[-1]
                module = self._required(value)
                if name.type == "identifier":
                    self.values[_text(name)] = value
                if module is not None:
                    self._bind(name, module)
                elif name.type == "identifier" and (s := _string_value(value)) is not None:
                    self.consts[_text(name)] = s
                elif name.type == "identifier" and self.resolve(value) in _EXECS:  # const run = eval
                    self.aliases[_text(name)] = self.resolve(value)
                elif name.type == "identifier" and value.type == "member_expression":
                    full = self.resolve(value)
                    if full.split(".", 1)[0] in ("fs", "child_process", "vm", "zlib", "http", "https", "net"):
                        self.aliases[_text(name)] = full
            elif node.type == "import_statement":
                source = node.child_by_field_name("source")
                module = _string_value(source) if source is not None else None
                if module is None:
                    continue
                module = module.removeprefix("node:")
                for sub in _walk(node):
                    if sub.type == "import_specifier":
                        orig, alias = sub.child_by_field_name("name"), sub.child_by_field_name("alias")
                        self.aliases[_text(alias or orig)] = f"{module}.{_text(orig)}"
                    elif sub.type in ("namespace_import",) or (
                        sub.type == "identifier" and sub.parent is not None and sub.parent.type == "import_clause"
                    ):
                        ident = sub if sub.type == "identifier" else sub.named_children[-1]
                        self.aliases[_text(ident)] = module

    def _required(self, value: Node) -> str | None:
        if value.type == "member_expression":  # require("fs").promises
            obj = value.child_by_field_name("object")
            inner = self._required(obj) if obj is not None else None
            return f"{inner}.{_text(value.child_by_field_name('property'))}" if inner else None
        if value.type != "call_expression" or _text(value.child_by_field_name("function")) != "require":
            return None
        args = value.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        module = _string_value(first)
        return module.removeprefix("node:") if module else None

    def _bind(self, pattern: Node, module: str) -> None:
        if pattern.type == "identifier":
            self.aliases[_text(pattern)] = module
            return
        for sub in pattern.named_children:  # const { exec, readFileSync: read } = require(...)
            if sub.type == "shorthand_property_identifier_pattern":
                self.aliases[_text(sub)] = f"{module}.{_text(sub)}"
            elif sub.type == "pair_pattern":
                key, value = sub.child_by_field_name("key"), sub.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    self.aliases[_text(value)] = f"{module}.{_text(key)}"

    def resolve(self, func: Node | None) -> str:
        """The dotted name a callee stands for, imports resolved: `cp.execSync` -> `child_process.execSync`."""
        if func is None:
            return ""
        if func.type == "identifier":
            return self.aliases.get(_text(func), _text(func))
        if func.type == "import":
            return "import"
        if func.type == "call_expression":  # require("child_process").exec
            return self._required(func) or "?"
        if func.type in ("member_expression", "subscript_expression"):
            obj = func.child_by_field_name("object")
            prop = func.child_by_field_name("property")
            attr = _text(prop) if prop is not None else _string_value(func.child_by_field_name("index"))
            if attr is None:
                return "?"
            head = self.resolve(obj) if obj is not None else "?"
            if head in _GLOBALS:  # globalThis.eval, window.fetch
                return self.aliases.get(attr, attr)
            return f"{head}.{attr}"
        if func.type == "parenthesized_expression" and func.named_children:
            return self.resolve(func.named_children[-1])
        return "?"

    # --- what an expression carries -------------------------------------------------------------------
    def kinds(self, node: Node, skip_keys: bool = False) -> set[str]:
        out: set[str] = set()
        stack = [node]
        while stack:
            sub = stack.pop()
            if skip_keys and sub.type == "pair" and _text(sub.child_by_field_name("key")).strip("'\"") in _SKIP_KEYS:
                continue
            t = sub.type
            if t in ("identifier", "shorthand_property_identifier"):
                out |= self.names.get(_text(sub), set())
                continue
            if t in ("member_expression", "subscript_expression") and self.resolve(sub) == "process.env":
                parent = sub.parent  # process.env itself, not process.env.NAME / process.env["NAME"]
                subscripted = parent is not None and parent.type in ("member_expression", "subscript_expression")
                if not subscripted or parent is None or parent.child_by_field_name("object") != sub:
                    out.add(SECRET)
                continue
            if t in ("string", "template_string"):
                value = _string_value(sub) or ""
                if SENSITIVE_PATH.search(value):
                    out.add(PATHS)
                out |= self.written.get(value, set())
            if t in ("call_expression", "new_expression"):
                out |= self.call_kinds(sub)
            stack.extend(sub.named_children)
        return out

    def call_kinds(self, call: Node) -> set[str]:
        fn = self.resolve(call.child_by_field_name("function") or call.child_by_field_name("constructor"))
        module, _, last = fn.rpartition(".")
        args = _args(call)
        out: set[str] = set()
        if fn == "fetch" or (module.split(".", 1)[0] in _NET_MODULES and last in _DOWNLOADS) or fn in _NET_MODULES:
            out.add(DOWNLOAD)
        if fn in _CONNECT or (module in ("http", "https") and last == "request"):
            out.add(CONN)
        if module.endswith("child_process") and last in _CP_RUNS and args:
            words = (self._string(args[0]) or "").split()
            if words and words[0].rsplit("/", 1)[-1] in ("curl", "wget") and "-o" not in words and "-O" not in words:
                out.add(DOWNLOAD)
        if fn == "Buffer.from" and len(args) >= 2 and (self._string(args[1]) or "").lower() in ("base64", "hex"):
            out.add(DECODED)
        if fn == "atob" or (module.endswith("zlib") and last in _ZLIB):
            out.add(DECODED)
        reads = last in _READS and module.split(".", 1)[0] in ("fs", "fs/promises", "?") and args
        if reads and PATHS in self.kinds(args[0]):
            out.add(SECRET)
        return out

    def _string(self, node: Node) -> str | None:
        if node.type == "identifier":
            return self.consts.get(_text(node))
        return _string_value(node)

    # --- propagation ----------------------------------------------------------------------------------
    def propagate(self) -> None:
        for _ in range(4):
            changed = False
            for node in self.nodes:
                for target, kinds in self._flows(node):
                    for name in _names_of(target):
                        if name in self.aliases:
                            continue
                        before = self.names.get(name, set())
                        if not kinds <= before:
                            self.names[name] = before | kinds
                            changed = True
            if not changed:
                break

    def _flows(self, node: Node) -> list[tuple[Node, set[str]]]:
        t = node.type
        if t == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is None or value is None:
                return []
            if name.type == "object_pattern" and self.resolve(value) == "process.env":
                return []  # const { API_KEY } = process.env: named variables, not the environment
            return [(name, self.kinds(value))]
        if t in ("function_declaration", "generator_function_declaration"):  # a call carries what it returns
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name is None or body is None:
                return []
            returned: set[str] = set()
            for sub in _walk(body):
                if sub.type == "return_statement" and sub.named_children:
                    returned |= self.kinds(sub.named_children[0])
            return [(name, returned - {CONN})]
        if t in ("assignment_expression", "augmented_assignment_expression"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                return []
            return [(left, self.kinds(right))]
        if t in ("call_expression", "new_expression"):
            out: list[tuple[Node, set[str]]] = []
            func = node.child_by_field_name("function")
            fn = self.resolve(func)
            _, _, last = fn.rpartition(".")
            args = _args(node)
            # callbacks receive what the call yields: http.get(url, res => ...), res.on("data", c => ...)
            given = self.call_kinds(node)
            if func is not None and func.type == "member_expression":
                receiver = func.child_by_field_name("object")
                if receiver is not None:
                    given |= self.kinds(receiver)
                    own = receiver.type == "identifier" and _text(receiver) in self.declared
                    if own and last in _WRITES | {"push", "concat", "append", "set"}:  # chunks.push(data)
                        out.append((receiver, {k for a in args for k in self.kinds(a)} - {CONN}))
            for a in args:
                if a.type in _FUNCTIONS:
                    params = a.child_by_field_name("parameters") or a.child_by_field_name("parameter")
                    if params is not None:
                        out.append((params, given - {CONN}))
            if last in _FILE_WRITES and len(args) >= 2:
                self._written(args[0], self.kinds(args[1]))
            return out
        return []

    def _written(self, path: Node, kinds: set[str]) -> None:
        if not kinds:
            return
        for key in {_text(path), self._string(path) or ""} - {""}:
            self.written[key] = self.written.get(key, set()) | kinds

    def _file_kinds(self, node: Node) -> set[str]:
        out: set[str] = set()
        for key in {_text(node), self._string(node) or ""} - {""}:
            out |= self.written.get(key, set())
        return out

    # --- sinks ----------------------------------------------------------------------------------------
    def add(self, rule: str, message: str, node: Node, high: bool = True) -> None:
        self.hits.append(JsHit(rule, message, node.start_point[0] + 1, high))

    def run(self) -> list[JsHit]:
        self.propagate()
        for node in self.nodes:
            if node.type in ("call_expression", "new_expression"):
                self.sink(node)
        return self.hits

    def sink(self, call: Node) -> None:
        func = call.child_by_field_name("function") or call.child_by_field_name("constructor")
        fn = self.resolve(func)
        module, _, last = fn.rpartition(".")
        args = _args(call)
        if not args:
            return
        net = fn == "fetch" or fn in _NET_MODULES or (module.split(".", 1)[0] in _NET_MODULES and last in _SENDS)
        receiver = func.child_by_field_name("object") if func is not None and func.type == "member_expression" else None
        if not net and receiver is not None and last in _WRITES:
            net = CONN in self.kinds(receiver)
        if net or last == "sendBeacon":
            sent: set[str] = set()
            for a in args:
                sent |= self.kinds(a, skip_keys=True)
            if SECRET in sent:
                self.add("sec-exfiltration", f"{fn}() sends credential data or the environment", call)
        if fn in _EXECS or fn in _VM_SCRIPT or fn in ("require", "import"):
            code = args[-1] if fn == "Function" else args[0]  # new Function("a", "b", BODY)
            # a module loaded runs what was written to its path; the path's own origin is not code
            carried = (
                self._file_kinds(code) if fn in ("require", "import") else self.kinds(code) | self._file_kinds(code)
            )
            if DOWNLOAD in carried:
                self.add("sec-remote-exec", f"{fn}() runs code downloaded from the network", call)
            elif DECODED in carried:
                self.add("sec-obfuscation", f"{fn}() runs code it decoded", call)
            if fn not in ("require", "import"):
                self.literal_blob(call, code)
        if module.endswith("child_process") and last in _CP_RUNS:
            self.command(call, fn, args)
        if last in _FILE_WRITES and module.split(".", 1)[0] in ("fs", "fs/promises", "?"):
            path = _path_text(args[0]) or (self._string(args[0]) or "")
            target = persistence_target(path)
            if target:
                self.add("sec-persistence", f"writes a {target} ({path})", call, high=target != "systemd unit")

    def command(self, call: Node, fn: str, args: list[Node]) -> None:
        """A child_process call: its command string is judged as shell code, and what it runs is followed."""
        last = fn.rsplit(".", 1)[-1]
        first = self._string(args[0])
        argv: list[Node] = []
        if len(args) >= 2 and args[1].type == "array":
            argv = list(args[1].named_children)
        program = (first or "").split()[0].rsplit("/", 1)[-1] if (first or "").split() else ""
        script = first
        if program in SHELLS and argv:  # spawn("bash", ["-c", cmd])
            words = [self._string(a) or "" for a in argv]
            if "-c" in words and words.index("-c") + 1 < len(argv):
                script = self._string(argv[words.index("-c") + 1])
        if script and last not in ("fork",):
            for h in analyse_shell(script):
                self.add(h.rule_id, h.message + " (a command run from JavaScript)", call, h.high)
        carried = self.kinds(args[0]) | self._file_kinds(args[0])
        if program in INTERPRETERS or program in ("node", "deno", "bun"):
            for a in argv:
                carried |= self.kinds(a) | self._file_kinds(a)
            for w in (first or "").split()[1:]:
                carried |= self.written.get(w, set()) | self.names.get(w, set())
        if last == "fork":
            carried |= self._file_kinds(args[0])
        what = carried & _RUNS
        if DOWNLOAD in what:
            self.add("sec-remote-exec", f"{fn}() runs what was downloaded", call)
        elif DECODED in what:
            self.add("sec-obfuscation", f"{fn}() runs what it decoded", call)
        words = (first or "").split()
        if SECRET in carried and any(w.rsplit("/", 1)[-1] in NETWORK_TOOLS - {"http", "https"} for w in words):
            self.add("sec-exfiltration", f"{fn}() passes credential data or the environment to a network tool", call)

    def literal_blob(self, call: Node, code: Node) -> None:
        """Decode literal payloads that reach an exec sink (in the call, or one name away) and analyse them."""
        reached = _walk(code)
        reached += [n for i in reached if i.type == "identifier" and (v := self.values.get(_text(i))) for n in _walk(v)]
        for sub in reached:
            value: str | None = None
            if sub.type in ("string", "template_string"):
                value = _string_value(sub)
            elif sub.type == "identifier":
                value = self.consts.get(_text(sub))
            if value is None or len(value) < 16:
                continue
            inner = _decode_blob(value)
            if inner is None:
                continue
            self.add("sec-obfuscation", "eval of an encoded literal", call)
            if self.depth < _MAX_DEPTH:
                for h in _scan_payload(inner, self.depth + 1):
                    self.add(h.rule_id, h.message + " (inside a decoded payload)", call, h.high)
            return


def _args(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    if args.type == "template_string":  # tagged template: fn`...`
        return [args]
    return [a for a in args.named_children if a.type != "comment"]


def _names_of(target: Node) -> list[str]:
    """The names a binding target or parameter list assigns (`a`, `{a, b}`, `[a, b]`, `(res) =>`, `obj.field`)."""
    if target.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [_text(target)]
    if target.type in ("member_expression", "subscript_expression"):
        obj = target.child_by_field_name("object")
        return _names_of(obj) if obj is not None else []
    out: list[str] = []
    for child in target.named_children:
        if child.type in ("type_annotation", "property_identifier"):
            continue
        if child.type == "pair_pattern":
            value = child.child_by_field_name("value")
            out += _names_of(value) if value is not None else []
        elif child.type in ("assignment_pattern", "required_parameter", "optional_parameter"):
            left = child.child_by_field_name("left") or child.child_by_field_name("pattern")
            out += _names_of(left) if left is not None else []
        else:
            out += _names_of(child)
    return out


def _decode_blob(value: str) -> str | None:
    raw = value.strip().encode("latin-1", "ignore")
    candidates: list[bytes] = []
    if _B64.match(value):
        with contextlib.suppress(binascii.Error, ValueError):
            candidates.append(base64.b64decode(raw, validate=False))
    with contextlib.suppress(binascii.Error, ValueError):
        candidates.append(binascii.unhexlify(raw))
    for data in list(candidates):
        with contextlib.suppress(zlib.error):
            candidates.append(zlib.decompress(data))
    for data in candidates:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text.strip() and (text.isprintable() or "\n" in text):
            return text
    return None


def _scan_payload(text: str, depth: int) -> list[JsHit]:
    """A decoded payload is analysed as JavaScript, or as shell code when it does not parse as JavaScript."""
    tree = _parser("js").parse(text.encode("utf-8", errors="replace"))
    if not tree.root_node.has_error:
        return _Flow(tree.root_node, depth).run()
    return [JsHit(h.rule_id, h.message, 1, h.high) for h in analyse_shell(text)]


def analyse_js(text: str, suffix: str = ".js") -> list[JsHit]:
    """Every flow finding in one JavaScript/TypeScript source (TypeScript grammar for `.ts`)."""
    data = text.encode("utf-8", errors="replace")
    if len(data) > _MAX_BYTES or not data.strip():
        return []
    tree = _parser("ts" if suffix == ".ts" else "js").parse(data)
    hits = _Flow(tree.root_node, 0).run()
    seen: set[tuple[str, int]] = set()
    out = []
    for h in hits:
        if (h.rule_id, h.line) not in seen:
            seen.add((h.rule_id, h.line))
            out.append(h)
    return out


__all__ = ["JS_SUFFIXES", "JsHit", "analyse_js"]
