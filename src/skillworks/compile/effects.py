"""Risk flags from what code does, with evidence: Python through its syntax tree (`ast`: calls through network
modules, file removal, writes, subprocess command lines), shell through a tokenizer (`shlex` with punctuation:
the command words of each simple command, redirections; comments are dropped). A URL in a comment or a string
is not a network call; `httpx.get(...)`, `http.client.HTTPSConnection(...)`, `os.remove(...)`, `git push` are.

(bashlex would give a full shell syntax tree but is GPL-3.0; the tokenizer keeps the package's licence simple.)
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field

from skillworks.compile.contract import RiskFlag

_NET_MODULES = (
    "requests",
    "httpx",
    "aiohttp",
    "urllib.request",
    "urllib3",
    "http.client",
    "socket",
    "ftplib",
    "smtplib",
    "paramiko",
    "websocket",
    "websockets",
    "boto3",
    "openai",
    "anthropic",
    "googleapiclient",
    "pycurl",
    "telnetlib",
    "xmlrpc.client",
)
_DESTRUCTIVE_CALLS = {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree", "os.truncate"}
_DESTRUCTIVE_METHODS = {"unlink", "rmdir"}
_WRITE_CALLS = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move", "os.rename"}
_WRITE_CALLS |= {"os.replace", "os.makedirs", "os.mkdir"}
_WRITE_METHODS = {"write_text", "write_bytes", "to_csv", "to_excel", "to_parquet", "to_json", "savefig", "mkdir"}
_PRIVILEGED_CALLS = {"os.setuid", "os.setgid", "os.chown", "os.chroot"}
_SHELL_CALLS = {"os.system", "os.popen", "subprocess.run", "subprocess.call", "subprocess.check_call"}
_SHELL_CALLS |= {"subprocess.check_output", "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput"}

_NET_COMMANDS = {"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "ftp", "http", "https"}
_NET_COMMANDS |= {"gh", "aws", "gcloud", "az", "gsutil", "httpie", "xh"}
_NET_SUB = {
    "git": {"push", "pull", "fetch", "clone", "ls-remote"},
    "docker": {"pull", "push", "login"},
    "podman": {"pull", "push", "login"},
    "npm": {"publish"},
}
_INSTALL_SUB = {
    "pip": {"install"},
    "pip3": {"install"},
    "npm": {"install", "i", "ci", "add"},
    "pnpm": {"install", "add", "i"},
    "yarn": {"add", "install"},
    "apt": {"install"},
    "apt-get": {"install"},
    "brew": {"install"},
    "cargo": {"install"},
    "gem": {"install"},
    "go": {"install"},
    "uv": {"add"},
}
_WRITE_COMMANDS = {"tee", "cp", "mv", "mkdir", "touch", "install", "ln"}
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "$(", "`", "{", "}", "do", "then", "else"}
_REDIRECTS = {">", ">>", "&>", ">|", "2>", "&>>"}
_WRAPPERS = {"sudo", "env", "nohup", "time", "exec", "xargs", "command", "nice", "timeout"}


@dataclass
class Effects:
    """Risk flags and, for each, the lines that raised it (`line 12: httpx.get`)."""

    evidence: dict[RiskFlag, list[str]] = field(default_factory=dict)
    # note -> the words of the branches and functions it sits in (`if cmd == "wipe"`, `def wipe_dir`)
    scopes: dict[str, frozenset[str]] = field(default_factory=dict)

    def add(self, flag: RiskFlag, note: str, scope: frozenset[str] = frozenset()) -> None:
        notes = self.evidence.setdefault(flag, [])
        if note not in notes:
            notes.append(note)
            self.scopes[note] = scope

    def merge(self, other: Effects, prefix: str = "", scope: frozenset[str] = frozenset()) -> None:
        for flag, notes in other.evidence.items():
            for note in notes:
                self.add(flag, prefix + note, other.scopes.get(note, frozenset()) | scope)

    def for_subcommand(self, sub: str | None, subs: set[str]) -> Effects:
        """The effects a call of subcommand `sub` may have: those in its own branch or function, and those not
        in the branch of any other known subcommand."""
        if sub is None or len(subs) < 2:
            return self
        norm = {s.replace("-", "_"): s for s in subs}
        mine = sub.replace("-", "_")
        kept = Effects()
        for flag, notes in self.evidence.items():
            for note in notes:
                words = {w.replace("-", "_") for w in self.scopes.get(note, frozenset())}
                owners = {w for w in words if w in norm} | {n for n in norm for w in words if n in w.split("_")}
                if not owners or mine in owners:
                    kept.add(flag, note)
        return kept

    @property
    def flags(self) -> list[RiskFlag]:
        order: list[RiskFlag] = ["destructive", "network", "installs-packages", "privileged", "writes-files"]
        return [f for f in order if f in self.evidence]

    def notes(self, per_flag: int = 5) -> list[str]:
        return [f"{flag}: {note}" for flag in self.flags for note in self.evidence[flag][:per_flag]]


# --- shell
def _shell_words(text: str) -> list[list[str]] | None:
    """Simple commands (lists of words, redirection operators kept) of a shell text; None if it cannot be read."""
    joined = re.sub(r"\\\n", " ", text)
    commands: list[list[str]] = []
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            return None
        current: list[str] = []
        for tok in tokens:
            if tok in _SEPARATORS or tok.startswith(("$(", "`")):
                if current:
                    commands.append(current)
                current = [tok[2:] if tok.startswith("$(") else tok[1:]] if tok.startswith(("$(", "`")) else []
                current = [t for t in current if t]
                continue
            current.append(tok)
        if current:
            commands.append(current)
    return commands


def shell_effects(text: str, where: str = "") -> Effects:
    effects = Effects()
    commands = _shell_words(text)
    if commands is None:
        return effects
    prefix = f"{where}: " if where else ""
    for words in commands:
        for k, w in enumerate(words):
            if w in _REDIRECTS and k + 1 < len(words) and words[k + 1] not in ("/dev/null", "&1", "&2"):
                effects.add("writes-files", f"{prefix}redirection {w} {words[k + 1]}")
        args = [w for w in words if w not in _REDIRECTS]
        while args and (re.fullmatch(r"[A-Za-z_]\w*=.*", args[0]) or args[0] in _WRAPPERS):
            if args[0] == "sudo":
                effects.add("privileged", f"{prefix}sudo {' '.join(args[1:3])}")
            args = args[1:]
            while args and args[0].startswith("-"):  # wrapper options (timeout 5, env -i)
                args = args[1:]
        if not args:
            continue
        head = args[0].rsplit("/", 1)[-1]
        rest = args[1:]
        sub = next((a for a in rest if not a.startswith("-")), "")
        shown = " ".join(args[:4])[:80]
        if head in _NET_COMMANDS or sub in _NET_SUB.get(head, ()):
            effects.add("network", f"{prefix}{shown}")
        if head in ("python", "python3") and rest[:2] == ["-m", "pip"] and "install" in rest:
            effects.add("installs-packages", f"{prefix}{shown}")
        if sub in _INSTALL_SUB.get(head, ()) or (head == "uv" and rest[:2] == ["pip", "install"]):
            effects.add("installs-packages", f"{prefix}{shown}")
        flags = "".join(a.lstrip("-") for a in rest if a.startswith("-") and not a.startswith("--"))
        if (
            (head == "rm" and ("r" in flags or "f" in flags or "--recursive" in rest or "--force" in rest))
            or head
            in (
                "shred",
                "mkfs",
                "wipefs",
            )
            or head == "rm"
            or head == "rmdir"
        ):
            effects.add("destructive", f"{prefix}{shown}")
        if head == "dd" and any(a.startswith("of=") for a in rest):
            effects.add("destructive", f"{prefix}{shown}")
        if head == "find" and "-delete" in rest:
            effects.add("destructive", f"{prefix}{shown}")
        if head == "git" and (
            (sub == "reset" and "--hard" in rest)
            or (sub == "clean" and any("f" in a for a in rest if a.startswith("-")))
            or (sub == "push" and any(a in ("-f", "--force") or a.startswith("--force") for a in rest))
        ):
            effects.add("destructive", f"{prefix}{shown}")
        if head in ("chown", "chroot", "su", "mount") or (head == "chmod" and "777" in rest):
            effects.add("privileged", f"{prefix}{shown}")
        if head in _WRITE_COMMANDS or (head == "sed" and any(a.startswith("-i") for a in rest)):
            effects.add("writes-files", f"{prefix}{shown}")
    return effects


# --- python
def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):  # requests.Session().get -> requests.Session.get
        return _dotted(node.func)
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _literal_command(call: ast.Call) -> str | None:
    if not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    if isinstance(first, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "X" for v in first.values)  # type: ignore[misc]
    if isinstance(first, ast.List | ast.Tuple):
        words = [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else "X" for e in first.elts]
        return shlex.join(words)
    return None


def _open_mode(call: ast.Call) -> str:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else "r"


def python_effects(source: str) -> Effects | None:
    """Effects of a Python script from its syntax tree; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    effects = Effects()
    aliases = _aliases(tree)

    def visit(node: ast.AST, scope: frozenset[str]) -> None:
        if isinstance(node, ast.If):
            words = frozenset(
                n.value for n in ast.walk(node.test) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
            visit(node.test, scope)
            for child in node.body:
                visit(child, scope | words)
            for child in node.orelse:
                visit(child, scope)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scope = scope | {node.name}
        if isinstance(node, ast.Call):
            _call_effects(node, aliases, effects, scope)
        for inner in ast.iter_child_nodes(node):
            visit(inner, scope)

    try:
        visit(tree, frozenset())
    except RecursionError:  # pathologically nested code: what was found so far, and a note
        effects.add("writes-files", "nesting too deep to analyse whole (treated as writing files)")
    return effects


def _call_effects(node: ast.Call, aliases: dict[str, str], effects: Effects, scope: frozenset[str]) -> None:
    raw = _dotted(node.func)
    if raw is None:
        return
    head, _, tail = raw.partition(".")
    name = aliases.get(head, head) + (f".{tail}" if tail else "")
    at = f"line {node.lineno}: {name}"
    if any(name == m or name.startswith(m + ".") for m in _NET_MODULES) and head in aliases:
        effects.add("network", at, scope)
    method = raw.rsplit(".", 1)[-1]
    if name in _DESTRUCTIVE_CALLS or (tail and method in _DESTRUCTIVE_METHODS):
        effects.add("destructive", at, scope)
    if name in _WRITE_CALLS or (tail and method in _WRITE_METHODS):
        effects.add("writes-files", at, scope)
    opens = name in ("open", "io.open", "codecs.open") or (tail and method == "open" and len(node.args) > 0)
    if opens and set(_open_mode(node)) & set("wax+"):
        effects.add("writes-files", f"{at}(mode {_open_mode(node)!r})", scope)
    if name in _PRIVILEGED_CALLS:
        effects.add("privileged", at, scope)
    if name in _SHELL_CALLS:
        command = _literal_command(node)
        if command is not None:
            effects.merge(shell_effects(command, f"line {node.lineno}"), scope=scope)


def _strip_js_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|(?<![:\"'])//[^\n]*", "", text, flags=re.S)


_JS_NET = re.compile(r"\b(?:fetch|axios(?:\.\w+)?|https?\.(?:get|request)|XMLHttpRequest|WebSocket)\s*\(")
_JS_DESTRUCTIVE = re.compile(r"\bfs\.(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync)\s*\(|\brimraf\s*\(")
_JS_WRITE = re.compile(
    r"\bfs\.(?:writeFile|writeFileSync|appendFile|appendFileSync|mkdir|mkdirSync|createWriteStream)\("
)


def js_effects(source: str) -> Effects:
    effects = Effects()
    code = _strip_js_comments(source)
    for pattern, flag in ((_JS_NET, "network"), (_JS_DESTRUCTIVE, "destructive"), (_JS_WRITE, "writes-files")):
        for m in pattern.finditer(code):
            effects.add(flag, f"line {code.count(chr(10), 0, m.start()) + 1}: {m.group(0).rstrip('(')}")  # type: ignore[arg-type]
    return effects


def code_effects(source: str, interpreter: str) -> Effects:
    """Effects of a script run by `interpreter` (python3, bash, node, ...)."""
    if interpreter.startswith("python"):
        parsed = python_effects(source)
        if parsed is not None:
            return parsed
    if interpreter in ("node", "npx tsx", "deno run"):
        return js_effects(source)
    return shell_effects(source)
