"""Source-to-sink analysis of a skill's Python files on their syntax trees (`ast`), across lines.

Values are labelled by where they come from: `download` (urlopen(...).read(), requests/httpx responses),
`decode` (base64, zlib, codecs, hex, marshal) and `secret` (the environment, ~/.ssh, ~/.aws and other
credential files). Labels follow assignments through the file (names, attributes, containers, f-strings),
so a payload built over several lines is still traced. Sinks: exec/eval/compile of a download
(`sec-remote-exec`) or of a decoded blob (`sec-obfuscation`), and an HTTP POST/PUT whose body carries a
secret (`sec-exfiltration`). Names are resolved through the file's imports, so `from base64 import
b64decode as d; exec(d(X))` is the same as `exec(base64.b64decode(X))`."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_SENSITIVE_PATH = re.compile(
    r"(?:\.ssh/|\.aws/|id_rsa|id_ed25519|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.kube/|/etc/shadow)"
)
_DOWNLOAD_CALLS = frozenset(
    {
        "urllib.request.urlopen",
        "urllib.urlopen",
        "urllib2.urlopen",
        "requests.get",
        "requests.request",
        "requests.post",
        "httpx.get",
        "httpx.request",
        "httpx.post",
        "urllib.request.urlretrieve",
    }
)
_DECODE_CALLS = frozenset(
    {
        "base64.b64decode",
        "base64.b32decode",
        "base64.b85decode",
        "base64.a85decode",
        "base64.urlsafe_b64decode",
        "base64.decodebytes",
        "zlib.decompress",
        "gzip.decompress",
        "bz2.decompress",
        "lzma.decompress",
        "codecs.decode",
        "bytes.fromhex",
        "binascii.unhexlify",
        "binascii.a2b_base64",
        "marshal.loads",
    }
)
_EXEC_CALLS = frozenset({"exec", "eval", "compile", "builtins.exec", "builtins.eval"})
_SEND_CALLS = frozenset(
    {
        "requests.post",
        "requests.put",
        "requests.patch",
        "requests.request",
        "httpx.post",
        "httpx.put",
        "httpx.patch",
        "httpx.request",
        "urllib.request.urlopen",
        "urllib.request.Request",
        "urllib2.urlopen",
        "urllib2.Request",
    }
)
_SECRET_ATTRS = frozenset({"os.environ", "os.environb"})


@dataclass(frozen=True)
class FlowHit:
    """One source reaching one sink: the rule it breaks, the sink's line and what reached it."""

    rule_id: str
    line: int
    message: str


class _Flow:
    def __init__(self, tree: ast.Module) -> None:
        self.alias: dict[str, str] = {}
        self.labels: dict[str, set[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.alias[a.asname or a.name] = f"{node.module}.{a.name}"

    def dotted(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.alias.get(node.id, node.id))
            return ".".join(reversed(parts))
        if isinstance(node, ast.Call):  # requests.get(url).text -> requests.get().text
            inner = self.dotted(node.func)
            return None if inner is None else ".".join([inner + "()", *reversed(parts)])
        return None

    def of(self, node: ast.AST) -> set[str]:
        """The labels of an expression: the union over everything it is built from."""
        out: set[str] = set()
        # one variable (os.environ["KEY"], os.environ.get("KEY")) is how a script uses its own token: only the
        # whole environment is a secret source
        single = {
            id(sub.value)
            for sub in ast.walk(node)
            if isinstance(sub, ast.Subscript) or (isinstance(sub, ast.Attribute) and sub.attr in ("get", "pop"))
        }
        for sub in ast.walk(node):
            if id(sub) in single:
                continue
            if isinstance(sub, ast.Name):
                out |= self.labels.get(sub.id, set())
            elif isinstance(sub, ast.Attribute):
                name = self.dotted(sub)
                if name in _SECRET_ATTRS:
                    out.add("secret")
                elif name is not None and name in self.labels:
                    out |= self.labels[name]
            elif isinstance(sub, ast.Call):
                out |= self._call_source(sub)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _SENSITIVE_PATH.search(sub.value):
                out.add("secret-path")
        if "secret-path" in out:
            out.discard("secret-path")
            if _reads(node):
                out.add("secret")
        return out

    def _call_source(self, call: ast.Call) -> set[str]:
        name = self.dotted(call.func) or ""
        base = name.split("()")[0]
        if base in _DOWNLOAD_CALLS:
            return {"download"}
        if base in _DECODE_CALLS or name.endswith((".b64decode", ".decompress")):
            return {"decode"}
        codec = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None
        if name.endswith(".decode") and str(codec).lower() in ("base64", "hex", "rot13", "rot_13", "zlib"):
            return {"decode"}
        if name == "dict" and call.args and self.dotted(call.args[0]) in _SECRET_ATTRS:
            return {"secret"}
        return set()

    def assign(self, tree: ast.Module) -> None:
        for _ in range(3):  # a few passes reach a fixed point for the chains skills write
            for node in ast.walk(tree):
                targets: list[ast.expr] = []
                value: ast.AST | None = None
                if isinstance(node, ast.Assign):
                    targets, value = list(node.targets), node.value
                elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                    targets, value = [node.target], node.value
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    for item in node.items:
                        if item.optional_vars is not None:
                            targets.append(item.optional_vars)
                            self._label(item.optional_vars, self.of(item.context_expr))
                    continue
                elif isinstance(node, (ast.For, ast.AsyncFor)):
                    targets, value = [node.target], node.iter
                elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                    # payload.update(os.environ) / parts.append(secret): the receiver takes the labels
                    func = node.value.func
                    if isinstance(func, ast.Attribute) and func.attr in ("update", "append", "extend", "write"):
                        labels = set().union(*(self.of(a) for a in node.value.args)) if node.value.args else set()
                        self._label(func.value, labels)
                    continue
                if value is None:
                    continue
                labels = self.of(value)
                for t in targets:
                    self._label(t, labels)

    def _label(self, target: ast.AST, labels: set[str]) -> None:
        if not labels:
            return
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                self.labels.setdefault(sub.id, set()).update(labels)
            elif isinstance(sub, (ast.Attribute, ast.Subscript)):
                inner = sub.value
                while isinstance(inner, (ast.Attribute, ast.Subscript)):
                    inner = inner.value
                if isinstance(inner, ast.Name):
                    self.labels.setdefault(inner.id, set()).update(labels)


def _reads(node: ast.AST) -> bool:
    """True when the expression reads a file (open(...), .read_text(), .read_bytes(), .read())."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Name) and f.id == "open":
                return True
            if isinstance(f, ast.Attribute) and f.attr in ("read_text", "read_bytes", "read", "open", "readlines"):
                return True
    return False


def python_flows(source: str) -> list[FlowHit]:
    """Every source-to-sink flow in one Python file ([] when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    flow = _Flow(tree)
    flow.assign(tree)
    hits: list[FlowHit] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = (flow.dotted(node.func) or "").split("()")[0]
        if name in _EXEC_CALLS and node.args:
            labels = flow.of(node.args[0])
            if "download" in labels:
                hits.append(FlowHit("sec-remote-exec", node.lineno, f"{name}() runs code downloaded at run time"))
            elif "decode" in labels:
                hits.append(FlowHit("sec-obfuscation", node.lineno, f"{name}() runs a decoded payload"))
        elif name in _SEND_CALLS:
            body = [kw.value for kw in node.keywords if kw.arg in ("data", "json", "files", "params", "content")]
            if name.endswith(("Request", "urlopen")):
                body += node.args[1:]
            if name.endswith("request"):
                body += node.args[2:]
            if any("secret" in flow.of(b) for b in body):
                hits.append(FlowHit("sec-exfiltration", node.lineno, f"{name}() sends the environment or a credential"))
    return hits
