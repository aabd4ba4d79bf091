"""Source-to-sink analysis of Python scripts on their syntax tree (`ast`).

Sources: the environment (`os.environ`, `dict(os.environ)`, `os.environ.copy()`), credential files
(`~/.ssh`, `~/.aws`, `.env`, ... opened, read or globbed), downloads (`requests.get(...).text`,
`urllib.request.urlopen(...).read()`), decoders (base64, hex, zlib, marshal). Sinks: network calls (requests,
httpx, urllib, http.client, sockets, smtplib), `exec`/`eval`/`compile`, commands (`os.system`, `subprocess`)
and files later run. Names carry what was assigned to them (flow-insensitive within a module), so a payload
built over several lines is followed. A command given to `os.system` or `subprocess` is a command: its string
is analysed as shell code. Literal base64/hex/zlib blobs that are decoded are decoded here and scanned again."""

from __future__ import annotations

import ast
import base64
import binascii
import contextlib
import zlib
from dataclasses import dataclass

from skillworks.check.shell_flow import ShellHit, analyse_shell
from skillworks.check.threat_words import SENSITIVE_PATH, persistence_target, plain_rc_content

SECRET, DOWNLOAD, DECODED, PATHS = "secret", "download", "decoded", "path"
_NET_MODULES = ("requests", "httpx", "urllib", "http", "aiohttp", "socket", "smtplib", "ftplib", "urllib3")
_NET_SENDS = frozenset(
    {
        "post",
        "put",
        "patch",
        "request",
        "urlopen",
        "Request",
        "send",
        "sendall",
        "sendmail",
        "send_message",
        "storbinary",
        "connect",
        "get",
        "stream",
    }
)
_DOWNLOAD_CALLS = frozenset({"get", "urlopen", "request", "stream", "urlretrieve"})
_DECODERS = frozenset(
    {
        "b64decode",
        "b32decode",
        "b85decode",
        "a85decode",
        "urlsafe_b64decode",
        "decodebytes",
        "fromhex",
        "unhexlify",
        "a2b_base64",
        "a2b_hex",
        "decompress",
        "loads",
    }
)
_RUNNERS = frozenset(
    {
        "system",
        "popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "Popen",
        "getoutput",
        "getstatusoutput",
        "spawnl",
        "execv",
        "execl",
        "execvp",
    }
)
_MAX_DECODE = 200_000


@dataclass(frozen=True)
class PyHit:
    rule_id: str
    message: str
    line: int  # 1-based line in the file
    high: bool = True


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
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


class _Flow:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.names: dict[str, set[str]] = {}
        self.hits: list[PyHit] = []
        self.aliases: dict[str, str] = {}  # imported name -> module.attr
        self.opened: dict[str, list[ast.AST]] = {}  # file object name -> the path expression it was opened from
        self.returns: dict[str, set[str]] = {}  # function defined here -> what its return values carry
        # os.environ nodes read for one named variable (os.environ["KEY"], os.environ.get("KEY")): how a
        # skill reads its own key, not a dump of the environment
        self.single_env: set[int] = set()
        for node in ast.walk(tree):
            single = ("get", "setdefault", "pop", "__getitem__")
            if isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and node.attr in single):
                self.single_env.add(id(node.value))

    def run(self) -> list[PyHit]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        for node in ast.walk(self.tree):  # `with open(path, "w") as fh`: what fh is given lands in path
            if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                ctx = node.context_expr
                if isinstance(ctx, ast.Call) and ctx.args:
                    self.opened[node.optional_vars.id] = list(ctx.args[:1])
        for _ in range(3):  # names assigned from names: a few rounds reach a fixed point in real scripts
            changed = False
            for node in ast.walk(self.tree):
                targets: list[ast.AST] = []
                value: ast.AST | None = None
                if isinstance(node, ast.Assign):
                    targets, value = list(node.targets), node.value
                elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
                    targets, value = [node.target], node.value
                elif isinstance(node, ast.For):
                    targets, value = [node.target], node.iter
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    targets, value = [node.optional_vars], node.context_expr
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr
                    in ("update", "append", "extend", "__setitem__", "write", "write_text", "write_bytes", "writelines")
                ):
                    # the written data taints the receiver and the path it was opened from
                    targets, value = [node.func.value], ast.Tuple(elts=list(node.args), ctx=ast.Load())
                    receiver = node.func.value
                    if isinstance(receiver, ast.Name) and receiver.id in self.opened:
                        targets += self.opened[receiver.id]
                    if isinstance(receiver, ast.Call):
                        targets += list(receiver.args[:1])
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    ret: set[str] = set()
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Return) and sub.value is not None:
                            ret |= self.kinds(sub.value)
                    if not ret <= self.returns.get(node.name, set()):
                        self.returns[node.name] = self.returns.get(node.name, set()) | ret
                        changed = True
                if value is None:
                    continue
                kinds = self.kinds(value)
                for t in targets:
                    for name in _target_names(t):
                        before = self.names.get(name, set())
                        if not kinds <= before:
                            self.names[name] = before | kinds
                            changed = True
            if not changed:
                break
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                self.sink(node)
        return self.hits

    def resolve(self, func: ast.AST) -> str:
        name = _dotted(func)
        head, _, rest = name.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full

    # --- what an expression carries -------------------------------------------------------------------
    def kinds(self, node: ast.AST) -> set[str]:
        out: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in self.names:
                out |= self.names[sub.id]
            elif isinstance(sub, ast.Attribute | ast.Name) and id(sub) not in self.single_env:
                if _dotted(sub) == "os.environ" or (
                    isinstance(sub, ast.Name) and self.aliases.get(sub.id) == "os.environ"
                ):
                    out.add(SECRET)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and SENSITIVE_PATH.search(sub.value):
                out.add(PATHS)
            elif isinstance(sub, ast.Call):
                fn = self.resolve(sub.func)
                if isinstance(sub.func, ast.Name):
                    out |= self.returns.get(sub.func.id, set())
                last = fn.rsplit(".", 1)[-1]
                if any(fn.startswith(m + ".") for m in _NET_MODULES) and last in _DOWNLOAD_CALLS:
                    out.add(DOWNLOAD)
                if last in _DECODERS and (
                    any(
                        fn.startswith(m)
                        for m in ("base64", "binascii", "codecs", "zlib", "marshal", "bytes", "gzip", "lzma", "bz2")
                    )
                    or fn in ("fromhex",)
                    or "fromhex" in fn
                ):
                    out.add(DECODED)
                if last in ("open", "read_text", "read_bytes", "load", "dotenv_values", "load_dotenv") and (
                    PATHS in self.kinds_of_args(sub) or PATHS in self.kinds(sub.func)
                ):
                    out.add(SECRET)
        return out

    def kinds_of_args(self, call: ast.Call) -> set[str]:
        out: set[str] = set()
        for a in [*call.args, *(k.value for k in call.keywords)]:
            out |= self.kinds(a)
            if isinstance(a, ast.Name):
                out |= self.names.get(a.id, set())
        return out

    # --- sinks ----------------------------------------------------------------------------------------
    def add(self, rule: str, message: str, node: ast.AST, high: bool = True) -> None:
        # names carry data flow-insensitively across the module: a hit that needs them is reported, but only
        # a source inside the sink's own expression (or a command string) is confident enough to block
        direct = not any(isinstance(sub, ast.Name) and sub.id in self.names for sub in ast.walk(node))
        self.hits.append(PyHit(rule, message, getattr(node, "lineno", 1), high and direct))

    def sink(self, call: ast.Call) -> None:
        fn = self.resolve(call.func)
        last = fn.rsplit(".", 1)[-1]
        args = self.kinds_of_args(call)
        if (any(fn.startswith(m + ".") for m in _NET_MODULES) and last in _NET_SENDS) or _is_method_send(call, last):
            sent = set()
            for a in [*call.args[1:], *(k.value for k in call.keywords if k.arg not in ("headers", "auth", "url"))]:
                sent |= self.kinds(a)
                if isinstance(a, ast.Name):
                    sent |= self.names.get(a.id, set())
            if fn.endswith("Request") or last in ("send", "sendall", "sendmail", "send_message", "storbinary"):
                sent |= args - {PATHS}
            if SECRET in sent:
                self.add("sec-exfiltration", f"{fn}() sends credential data or the environment", call)
        if fn in ("exec", "eval", "builtins.exec", "builtins.eval"):
            if DOWNLOAD in args:
                self.add("sec-remote-exec", f"{fn}() runs code downloaded from the network", call)
            elif DECODED in args:
                self.add("sec-obfuscation", f"{fn}() runs code it decoded", call)
            self.literal_blob(call)
        if fn.startswith(("os.", "subprocess.", "commands.", "pty.")) and last in _RUNNERS and call.args:
            self.command(call, call.args[0])
            if DOWNLOAD in args:
                self.add("sec-remote-exec", f"{fn}() runs what was downloaded", call)
            elif DECODED in args:
                self.add("sec-obfuscation", f"{fn}() runs what it decoded", call)
            for kw in call.keywords:
                if kw.arg == "input" and DOWNLOAD in self.kinds(kw.value):
                    self.add("sec-remote-exec", f"{fn}() feeds downloaded code to a program", call)
        if last == "open" and len(call.args) >= 2:
            mode = _const_text(call.args[1]) or ""
            path = _path_text(call.args[0])
            if any(c in mode for c in "wa+") and persistence_target(path):
                self.add(
                    "sec-persistence",
                    f"opens a {persistence_target(path)} for writing ({path})",
                    call,
                    high=persistence_target(path) != "systemd unit",
                )
        if last in ("write_text", "write_bytes") and isinstance(call.func, ast.Attribute):
            path = _path_text(call.func.value)
            if path and persistence_target(path):
                self.add("sec-persistence", f"writes a {persistence_target(path)} ({path})", call)
        if fn.endswith("CronTab") or fn.startswith("crontab."):
            self.add("sec-persistence", "installs a cron job (python-crontab)", call)

    def command(self, call: ast.Call, arg: ast.AST) -> None:
        text = _const_text(arg)
        if text is None and isinstance(arg, ast.Name):
            return
        if not text:
            return
        if SENSITIVE_PATH.search(text) or any(t in text for t in ("curl", "wget", "crontab", "nc ", "base64", ">>")):
            for h in analyse_shell(text.replace("{}", "X")):
                self.add(h.rule_id, h.message + " (a command in a Python string)", call, h.high)

    def literal_blob(self, call: ast.Call) -> None:
        """Decode literal payloads handed to exec/eval and scan what they hold."""
        for sub in ast.walk(call):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str | bytes) and len(sub.value) >= 16:
                inner = _decode_blob(sub.value)
                if inner:
                    self.add("sec-obfuscation", "exec/eval of an encoded literal", call)
                    for h in analyse_python(inner):
                        self.add(h.rule_id, h.message + " (inside a decoded payload)", call, h.high)
                    return


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
    parts: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            parts.append(sub.value)
    return "/".join(parts)


def _target_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [n for e in node.elts for n in _target_names(e)]
    if isinstance(node, ast.Subscript | ast.Attribute):
        return _target_names(node.value)
    return []


def _decode_blob(value: str | bytes) -> str | None:
    raw = value.encode("latin-1", "ignore") if isinstance(value, str) else value
    if len(raw) > _MAX_DECODE:
        return None
    candidates: list[bytes] = []
    for decode in (base64.b64decode, binascii.unhexlify):
        try:
            candidates.append(decode(raw))
        except (binascii.Error, ValueError):
            continue
    for data in list(candidates):
        with contextlib.suppress(zlib.error):
            candidates.append(zlib.decompress(data))
    for data in candidates:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text.isprintable() or "\n" in text:
            return text
    return None


def analyse_python(text: str) -> list[PyHit]:
    """Every flow finding in one Python source (none when it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return _Flow(tree).run()


def shell_hits_to_lines(text: str, hits: list[ShellHit]) -> list[tuple[ShellHit, int]]:
    return [(h, text.count("\n", 0, h.start) + 1) for h in hits]


__all__ = ["PyHit", "analyse_python", "plain_rc_content"]
