"""Source-to-sink analysis of shell code on its syntax tree (tree-sitter-bash): what flows from credential
files, the environment, downloads and decoders into network tools, interpreters and start-up files,
across lines (`\\` continuations, heredocs, variables, temporary files) within one script or code block.

bashlex was tried first and rejected: it failed on all 15 shell scripts of the shared corpus (arithmetic
expansion, `$OSTYPE` in `[[ ]]`, heredocs); tree-sitter-bash parses all of them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from skillworks.threat_words import (
    INTERPRETERS,
    NETWORK_TOOLS,
    SENSITIVE_PATH,
    SHELLS,
    persistence_target,
    plain_rc_content,
)

SECRET, DOWNLOAD, DECODED = "secret", "download", "decoded"
_MAX_BYTES = 400_000  # larger files are left to the line-based patterns
_DECODE_ARGS = frozenset({"-d", "--decode", "-D", "-r", "-rp", "-r -p"})
_FILTERS = frozenset(
    {
        "base64",
        "gzip",
        "gunzip",
        "xxd",
        "tr",
        "sed",
        "awk",
        "head",
        "tail",
        "tee",
        "cat",
        "jq",
        "openssl",
        "rev",
        "zcat",
    }
)
_ENV_DUMP = frozenset({"env", "printenv", "set", "declare", "export"})
_VAR_REF = re.compile(r"\$\{?([A-Za-z_]\w*)")


@dataclass(frozen=True)
class ShellHit:
    rule_id: str
    message: str
    start: int  # character offsets in the analysed text
    end: int
    high: bool = True  # False: reported, but not confident enough to block


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


_AUTH_FLAGS = frozenset({"-H", "--header", "-u", "--user", "--oauth2-bearer", "--proxy-user"})


def _sent_args(base: str, args: list[Node], words: list[str]) -> list[Node]:
    """The arguments whose data a network tool sends as content. A credential held in a variable and given as
    a header or `--user` of curl/wget authenticates the request to that host (the skill calling its own
    service's API, as `requests.get(url, headers=...)` does in python_flow); such an argument is left out unless
    it reads a credential file or runs a command itself."""
    if base not in ("curl", "wget"):
        return args
    out: list[Node] = []
    for i, a in enumerate(args):
        flag = words[i - 1] if i else ""
        own = words[i]
        inline = own.startswith(("--header=", "--user=")) or (own[:2] in ("-H", "-u") and len(own) > 2)
        plain = not SENSITIVE_PATH.search(own) and "$(" not in own and "`" not in own
        if plain and (flag in _AUTH_FLAGS or inline or _address_only(own)):
            continue
        out.append(a)
    return out


_LEADING_VAR = re.compile(r"^[\"']?(?:\$[A-Za-z_]\w*|\$\{[A-Za-z_]\w*\})")


def _address_only(word: str) -> bool:
    """True for a URL argument whose variable is only its base address (`"$BASE/v2/users"`, the host the
    skill was configured with): no variable reaches the path or the query, so no data rides on it."""
    m = _LEADING_VAR.match(word)
    return m is not None and not _VAR_REF.search(word[m.end() :])


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text.removeprefix("$'").removesuffix("'") if text.startswith("$'") else text


@dataclass
class _State:
    vars: dict[str, set[str]] = field(default_factory=dict)
    files: dict[str, set[str]] = field(default_factory=dict)
    hits: list[ShellHit] = field(default_factory=list)
    consts: dict[str, str] = field(default_factory=dict)  # variables bound to a literal string (a held command)


_HELD = re.compile(r"^\"?\$\{?([A-Za-z_]\w*)\}?\"?$")
_MAX_HELD_DEPTH = 3


class _Analysis:
    def __init__(self, data: bytes, depth: int = 0) -> None:
        self.data = data
        self.state = _State()
        self._chars: list[int] | None = None
        self.depth = depth

    # --- offsets ---------------------------------------------------------------------------------------
    def char(self, byte: int) -> int:
        if self.data.isascii():
            return byte
        return len(self.data[:byte].decode("utf-8", errors="ignore"))

    def hit(self, rule: str, message: str, node: Node, high: bool = True) -> None:
        self.state.hits.append(ShellHit(rule, message, self.char(node.start_byte), self.char(node.end_byte), high))

    @staticmethod
    def text(node: Node) -> str:
        return (node.text or b"").decode("utf-8", errors="replace")

    # --- what a word carries ---------------------------------------------------------------------------
    def word_kinds(self, node: Node) -> set[str]:
        kinds: set[str] = set()
        text = self.text(node)
        if SENSITIVE_PATH.search(text):
            kinds.add(SECRET)
        for name in _VAR_REF.findall(text):
            kinds |= self.state.vars.get(name, set())
        if _unquote(text) in self.state.files or _unquote(text).lstrip("@") in self.state.files:
            kinds |= self.state.files.get(_unquote(text).lstrip("@"), set())
        for sub in _descendants(node, ("command_substitution", "process_substitution")):
            kinds |= self.output_kinds(sub)
        return kinds

    def output_kinds(self, node: Node) -> set[str]:
        """What the stdout of a statement carries."""
        if node.type in ("command_substitution", "process_substitution", "subshell", "compound_statement"):
            kinds: set[str] = set()
            for child in node.named_children:
                kinds |= self.output_kinds(child)
            return kinds
        if node.type == "pipeline":
            kinds = set()
            for child in node.named_children:
                kinds = self.command_output(child, kinds)
            return kinds
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            return self.output_kinds(body) if body is not None else set()
        if node.type == "list":
            kinds = set()
            for child in node.named_children:
                kinds |= self.output_kinds(child)
            return kinds
        if node.type == "command":
            return self.command_output(node, set())
        return set()

    def command_output(self, node: Node, stdin: set[str]) -> set[str]:
        if node.type != "command":
            return self.output_kinds(node) | stdin
        name, args = _argv(node)
        held = self.held(name)
        if held is not None and self.depth < _MAX_HELD_DEPTH:  # `$FETCH | sh`: what the held command prints
            sub = self.sub(held)
            root = _parser().parse(sub.data).root_node
            return set().union(*(sub.output_kinds(c) for c in root.named_children)) | stdin
        base = name.rsplit("/", 1)[-1]
        words = [self.text(a) for a in args]
        kinds: set[str] = set()
        if base in ("curl", "wget") and not _writes_file(base, words):
            kinds.add(DOWNLOAD)
        if base in _ENV_DUMP and not [w for w in words if not w.startswith("-")]:
            kinds.add(SECRET)
        if base in ("base64", "xxd", "openssl") and any(w in _DECODE_ARGS for w in words):
            kinds.add(DECODED)
        if base in ("cat", "tar", "zip", "base64", "gzip", "head", "tail", "xxd", "openssl", "gpg", "echo", "printf"):
            for a in args:
                kinds |= self.word_kinds(a)
        if base in _FILTERS or base in ("echo", "printf"):
            kinds |= stdin
        return kinds

    # --- statements in order ---------------------------------------------------------------------------
    def run(self, root: Node) -> None:
        for node in _walk(root):
            if node.type == "variable_assignment":
                name = node.child_by_field_name("name")
                value = node.child_by_field_name("value")
                if name is not None and value is not None:
                    kinds = self.word_kinds(value)
                    if value.type in ("command_substitution",):
                        kinds |= self.output_kinds(value)
                    self.state.vars[self.text(name)] = kinds
                    if value.type in ("string", "raw_string", "word") and not _descendants(
                        value, ("command_substitution", "process_substitution")
                    ):
                        self.state.consts[self.text(name)] = _unquote(self.text(value))
                    else:
                        self.state.consts.pop(self.text(name), None)
            elif node.type == "pipeline":
                self.pipeline(node)
            elif node.type == "command":
                self.command(node)

    def pipeline(self, node: Node) -> None:
        stages = node.named_children
        flowing: set[str] = set()
        for stage in stages:
            cmd = stage.child_by_field_name("body") if stage.type == "redirected_statement" else stage
            if cmd is not None and cmd.type == "command" and flowing:
                name, args = _argv(cmd)
                base = name.rsplit("/", 1)[-1]
                words = [self.text(a) for a in args]
                if base in NETWORK_TOOLS and SECRET in flowing:
                    self.hit("sec-exfiltration", "secret data is piped into a network tool", node)
                if _runs_stdin(base, words):
                    if DOWNLOAD in flowing:
                        self.hit("sec-remote-exec", "downloaded code is piped into an interpreter", node)
                    elif DECODED in flowing:
                        self.hit("sec-obfuscation", "decoded data is piped into an interpreter", node)
                if base == "crontab" and (not words or words[-1] == "-"):
                    self.hit("sec-persistence", "installs a cron table from a pipe", node)
            flowing = self.command_output(cmd, flowing) if cmd is not None else flowing

    def command(self, node: Node) -> None:
        name, args = _argv(node)
        base = name.rsplit("/", 1)[-1]
        words = [_unquote(self.text(a)) for a in args]
        redirects = _redirects(node)
        # downloads and decoders that write a file
        target = _output_file(base, words)
        for op, dest in redirects:
            if op in (">", ">>", "&>", ">|"):
                target = dest
        out = self.command_output(node, set())
        if base in ("curl", "wget") and target:
            out |= {DOWNLOAD}
        if target and out:
            self.state.files.setdefault(target, set()).update(out)
        if base in ("cp", "mv", "install") and len(words) >= 2:
            src_kinds = self.state.files.get(words[-2], set())
            if src_kinds:
                self.state.files.setdefault(words[-1], set()).update(src_kinds)
        # secrets into a network tool
        if base in NETWORK_TOOLS and (
            any(SECRET in self.word_kinds(a) for a in _sent_args(base, args, words))
            or any(
                SECRET in self.state.files.get(d, set()) or SENSITIVE_PATH.search(d) for op, d in redirects if op == "<"
            )
        ):
            self.hit("sec-exfiltration", f"{base} sends credential data or the environment", node)
        # running what was downloaded or decoded
        self.exec_sink(node, base, args, words)
        self.persistence(node, base, words, redirects)

    def exec_sink(self, node: Node, base: str, args: list[Node], words: list[str]) -> None:
        ran: set[str] = set()
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            self.run_held(self.text(name_node), node)
        if base == "eval":
            for a in args:
                self.run_held(self.text(a), node)
        if base in SHELLS and "-c" in words and words.index("-c") + 1 < len(args):
            self.run_held(self.text(args[words.index("-c") + 1]), node)
        if name_node is not None:
            ran |= self.state.files.get(_unquote(self.text(name_node)).removeprefix("./"), set())
            ran |= self.state.files.get(_unquote(self.text(name_node)), set())
            ran |= {k for k in self.word_kinds(name_node) if k != SECRET}
        if base in INTERPRETERS or base in ("source", ".", "eval", "exec"):
            script_args = [a for a in args if not self.text(a).startswith("-")]
            for a in script_args[:1] if base not in ("eval",) else script_args:
                ran |= self.word_kinds(a) - {SECRET}
                w = _unquote(self.text(a))
                ran |= self.state.files.get(w, set()) | self.state.files.get(w.removeprefix("./"), set())
            if "-c" in words:
                i = words.index("-c")
                if i + 1 < len(args):
                    ran |= self.word_kinds(args[i + 1]) - {SECRET}
                    self.nested(args[i + 1])
        if DOWNLOAD in ran:
            self.hit("sec-remote-exec", "runs code downloaded from the network", node)
        elif DECODED in ran:
            self.hit("sec-obfuscation", "runs code it decoded", node)

    def held(self, word: str) -> str | None:
        """The command a word runs when it is only a variable bound to a literal (`"$CMD"`, `${CMD}`)."""
        m = _HELD.match(word)
        return self.state.consts.get(m.group(1)) if m else None

    def sub(self, text: str) -> _Analysis:
        """An analysis of a held command that sees this script's variables and files so far."""
        sub = _Analysis(text.encode("utf-8", errors="replace")[:_MAX_BYTES], self.depth + 1)
        sub.state.vars, sub.state.consts, sub.state.files = (
            dict(self.state.vars),
            dict(self.state.consts),
            self.state.files,
        )
        return sub

    def run_held(self, word: str, node: Node) -> None:
        """A command held in a variable and run (`eval "$CMD"`, `bash -c "$CMD"`, `$CMD args`) is analysed as the
        shell code it holds, with the variables of the script around it."""
        held = self.held(word)
        if held is None or self.depth >= _MAX_HELD_DEPTH:
            return
        sub = self.sub(held)
        sub.run(_parser().parse(sub.data).root_node)
        for h in sub.state.hits:
            self.state.hits.append(
                ShellHit(
                    h.rule_id,
                    h.message + " (a command held in a variable)",
                    self.char(node.start_byte),
                    self.char(node.end_byte),
                    h.high,
                )
            )

    def nested(self, node: Node) -> None:
        """A command string (`sh -c "..."`) is analysed as shell code of its own."""
        inner = _unquote(self.text(node))
        for h in analyse_shell(inner):
            self.hit(h.rule_id, h.message, node, h.high)

    def persistence(self, node: Node, base: str, words: list[str], redirects: list[tuple[str, str]]) -> None:
        dests = [d for op, d in redirects if op in (">", ">>", "&>", ">|")]
        if base == "tee":
            dests += [w for w in words if not w.startswith("-")]
        if base in ("cp", "mv", "install", "ln") and len(words) >= 2:
            dests.append(words[-1])
        if base == "sed" and any(w.startswith("-i") for w in words) and words:
            dests.append(words[-1])
        for dest in dests:
            kind = persistence_target(dest)
            if not kind:
                continue
            content = _heredoc(node) or " ".join(words)
            plain = kind == "shell start-up file" and plain_rc_content(content)
            self.hit("sec-persistence", f"writes to a {kind} ({dest})", node, high=not plain and kind != "systemd unit")
            return
        installs = bool(words) and words[-1] not in ("-l", "-e", "-r", "-i") and "-l" not in words
        if base == "crontab" and (installs or _heredoc(node)):
            self.hit("sec-persistence", "installs a cron table", node)
        elif base in ("launchctl",) and any(w in ("load", "bootstrap", "submit") for w in words):
            self.hit("sec-persistence", "loads a launch agent", node)
        elif base == "git" and "config" in words and "core.hooksPath" in words:
            self.hit("sec-persistence", "redirects git hooks", node)


def _walk(root: Node) -> list[Node]:
    """Every node in document order (pre-order)."""
    out: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _descendants(node: Node, types: tuple[str, ...]) -> list[Node]:
    return [n for n in _walk(node) if n.type in types and n is not node] + ([node] if node.type in types else [])


def _argv(node: Node) -> tuple[str, list[Node]]:
    name_node = node.child_by_field_name("name")
    name = _unquote((name_node.text or b"").decode("utf-8", errors="replace")) if name_node is not None else ""
    args = [c for c in node.named_children if c.type not in ("command_name", "variable_assignment", "file_redirect")]
    if name in ("sudo", "env", "nohup", "exec", "time", "command", "xargs") and args:
        # the command that really runs: skip options and VAR=value words
        rest = [a for a in args if not (a.text or b"").startswith(b"-") and b"=" not in (a.text or b"")]
        if rest:
            first = rest[0]
            return _unquote((first.text or b"").decode("utf-8", errors="replace")), args[args.index(first) + 1 :]
    return name, args


def _redirects(node: Node) -> list[tuple[str, str]]:
    parent = node.parent
    holders = [node]
    if parent is not None and parent.type == "pipeline" and parent.named_children[-1] == node:
        parent = parent.parent  # `a | b > file`: the redirect belongs to the pipeline's last stage
    if parent is not None and parent.type == "redirected_statement":
        holders.append(parent)
    out: list[tuple[str, str]] = []
    for holder in holders:
        for child in holder.children:
            if child.type == "file_redirect":
                op = next((c.type for c in child.children if not c.is_named), "")
                dest = child.child_by_field_name("destination")
                if dest is None and child.named_children:
                    dest = child.named_children[-1]
                if dest is not None:
                    out.append((op, _unquote((dest.text or b"").decode("utf-8", errors="replace"))))
    return out


def _heredoc(node: Node) -> str:
    parent = node.parent
    if parent is None or parent.type != "redirected_statement":
        return ""
    bodies = [n for n in _walk(parent) if n.type == "heredoc_body"]
    return "\n".join((b.text or b"").decode("utf-8", errors="replace") for b in bodies)


def _writes_file(base: str, words: list[str]) -> bool:
    return _output_file(base, words) is not None


def _output_file(base: str, words: list[str]) -> str | None:
    flags = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}.get(base)
    if not flags:
        return None
    for i, w in enumerate(words):
        if w in flags and i + 1 < len(words):
            dest = _unquote(words[i + 1])
            return None if dest == "-" else dest
        if base == "wget" and w.startswith("-") and w.endswith("O-"):
            return None
        if base == "wget" and w.startswith("-O") and len(w) > 2:
            return None if w[2:] == "-" else w[2:]
    if base == "wget" and not any(w.startswith("-") and "O" in w for w in words):
        urls = [w for w in words if "://" in w]
        if urls:
            return urls[-1].rstrip("/").rsplit("/", 1)[-1] or None
    if base == "curl" and any(w in ("-O", "--remote-name") or (w.startswith("-") and "O" in w[1:]) for w in words):
        urls = [w for w in words if "://" in w]
        if urls:
            return urls[-1].rstrip("/").rsplit("/", 1)[-1] or None
    return None


def _runs_stdin(base: str, words: list[str]) -> bool:
    if base not in INTERPRETERS:
        return False
    if base in SHELLS:
        return "-c" not in words
    opts = [w for w in words if w.startswith("-") and w != "-"]
    return not [w for w in words if not w.startswith("-")] and not ({"-c", "-m", "-e"} & set(opts))


def analyse_shell(text: str) -> list[ShellHit]:
    """Every flow finding in one piece of shell code."""
    data = text.encode("utf-8", errors="replace")
    if len(data) > _MAX_BYTES or not data.strip():
        return []
    tree = _parser().parse(data)
    analysis = _Analysis(data)
    analysis.run(tree.root_node)
    seen: set[tuple[str, int]] = set()
    out = []
    for h in analysis.state.hits:
        if (h.rule_id, h.start) not in seen:
            seen.add((h.rule_id, h.start))
            out.append(h)
    return out
