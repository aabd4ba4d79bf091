"""Package lifecycle hooks: code a package manager runs the moment a skill's package is installed.

- npm: the `preinstall`, `install`, `postinstall` and `prepare` scripts of every `package.json` (and their
  `pre`/`post` companions of `prepare`). The command is analysed as shell code; a local file it runs
  (`node scripts/install.js`, `python3 x.py`, `sh x.sh`) is read and judged too.
- Python: a `setup.py` whose `setup(cmdclass=...)` names custom install/develop/egg_info/build commands (their
  methods are what runs), and statements at the module level of `setup.py` that run commands or reach the
  network (every `pip install` of an sdist runs them).

A hook is judged by what it runs, never by its name: remote execution, network access, persistence,
exfiltration or decoded code -> `sec-lifecycle-script` error with the evidence; a hook that runs a command
with none of these (`tsc`, `husky install`) is a warning; a custom command class that runs no command and no
network call is not reported."""

from __future__ import annotations

import ast
import json
import posixpath
import re
import shlex
from dataclasses import dataclass

from skillworks.check._pyparse import parse_python
from skillworks.check.js_flow import analyse_js
from skillworks.check.model import Confidence, Context, Finding
from skillworks.check.python_flow import analyse_python
from skillworks.check.reader import SkillFile, SkillSource
from skillworks.check.severity import Assessment, security_finding
from skillworks.check.shell_flow import analyse_shell
from skillworks.threat_words import INTERPRETERS, NETWORK_TOOLS, persistence_target

RULE = "sec-lifecycle-script"
NPM_HOOKS = ("preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare")
_SETUP_COMMANDS = frozenset(
    {"install", "develop", "egg_info", "build", "build_py", "build_ext", "sdist", "bdist_wheel"}
)
_BLOCKING = frozenset(
    {"sec-remote-exec", "sec-exfiltration", "sec-persistence", "sec-obfuscation", "sec-permission-tampering"}
)
_NET_CALL = re.compile(
    r"\b(?:requests|httpx|urllib3?|urllib\.request|http\.client|socket|aiohttp|smtplib|ftplib)\.\w+|"
    r"\burlopen\s*\(|\burlretrieve\s*\("
)
_JS_NET = re.compile(
    r"\b(?:fetch|axios(?:\.\w+)?|https?\.(?:get|request)|net\.connect|XMLHttpRequest|WebSocket|dns\.lookup)\s*\(|"
    r"require\(\s*['\"](?:https?|net|dgram|axios|node-fetch|got)['\"]\s*\)|from\s+['\"](?:https?|net|axios|node-fetch)['\"]"
)
_JS_ENV_DUMP = re.compile(
    r"JSON\.stringify\(\s*process\.env\s*\)|\{\s*\.\.\.process\.env\s*\}|Object\.\w+\(process\.env\)"
)
_JS_STRING = re.compile(r"`([^`]{4,})`|'([^'\n]{4,})'|\"([^\"\n]{4,})\"")
_RUNNERS = frozenset({"node", "python", "python3", "sh", "bash", "zsh", "deno", "bun", "tsx", "ts-node"})


@dataclass(frozen=True)
class _Verdict:
    """What one hook runs: the strongest reason found, and whether it blocks."""

    what: str
    blocks: bool
    line: int | None = None  # where, in a Python file


def _shell_verdict(command: str) -> _Verdict | None:
    for hit in analyse_shell(command):
        if hit.rule_id in _BLOCKING and hit.high:
            return _Verdict(hit.message, True)
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    inline = _inline_verdict(words)
    if inline is not None:
        return inline
    for w in words:
        base = w.rsplit("/", 1)[-1]
        if base in NETWORK_TOOLS - {"http", "https"}:
            return _Verdict(f"reaches the network ({base})", True)
        if persistence_target(w):
            return _Verdict(f"touches a {persistence_target(w)} ({w})", True)
    return None


_JS_RUNTIMES = frozenset({"node", "deno", "bun", "nodejs"})
_INLINE_FLAGS = frozenset({"-e", "--eval", "-p", "--print", "-c"})


def _inline_verdict(words: list[str]) -> _Verdict | None:
    """Code given inline to an interpreter (`node -e CODE`, `python3 -c CODE`, `sh -c CODE`), judged as code."""
    for i, w in enumerate(words[:-1]):
        if w not in _INLINE_FLAGS or i == 0:
            continue
        program = words[i - 1].rsplit("/", 1)[-1]
        code = words[i + 1]
        if program in _JS_RUNTIMES:
            found = _js_verdict(code)
        elif program.startswith("python"):
            found = _python_verdict(code)
        elif program in INTERPRETERS:
            found = _shell_verdict(code)
        else:
            continue
        if found is not None:
            return _Verdict(f"runs inline {program} code that {found.what}", found.blocks)
    return None


def _python_verdict(text: str, lines: set[int] | None = None) -> _Verdict | None:
    """What Python code does: a blocking flow, a network call or a command with a blocking verdict, limited to
    `lines` when given (the hook's own code)."""
    for hit in analyse_python(text):
        if hit.rule_id in _BLOCKING and (lines is None or hit.line in lines):
            return _Verdict(hit.message, True, hit.line)
    for n, line in enumerate(text.splitlines(), 1):
        if lines is not None and n not in lines:
            continue
        code = line.split("#", 1)[0]
        m = _NET_CALL.search(code)
        if m:
            return _Verdict(f"reaches the network ({m.group().strip()})", True, n)
    return None


def _js_verdict(text: str) -> _Verdict | None:
    m = _JS_NET.search(text)
    if m and _JS_ENV_DUMP.search(text):
        return _Verdict("sends the environment over the network (process.env)", True)
    for hit in analyse_js(text):  # the data flow (js_flow) names what reaches which sink
        if hit.rule_id in _BLOCKING and hit.high:
            return _Verdict(hit.message, True)
    if m:
        return _Verdict(f"reaches the network ({m.group().strip()})", True)
    for groups in _JS_STRING.findall(text):
        literal = next(g for g in groups if g)
        found = _shell_verdict(literal) if any(t in literal for t in (" ", "/")) else None
        if found is not None:
            return found
    return None


def _file_verdict(f: SkillFile) -> _Verdict | None:
    if f.text is None:
        return None
    if f.suffix == ".py" or f.language == "python":
        return _python_verdict(f.text)
    if f.suffix in (".js", ".mjs", ".cjs", ".ts"):
        return _js_verdict(f.text)
    if f.language == "shell" or f.suffix in (".sh", ".bash", ".zsh"):
        blocking = [h for h in analyse_shell(f.text) if h.rule_id in _BLOCKING and h.high]
        return _Verdict(blocking[0].message, True) if blocking else _shell_verdict(f.text)
    return None


def _runs_file(command: str, here: str, files: dict[str, SkillFile]) -> list[SkillFile]:
    """The skill's own files a hook command runs (`node scripts/x.js`, `python3 x.py`, `./x.sh`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    out: list[SkillFile] = []
    for i, w in enumerate(words):
        prev = words[i - 1].rsplit("/", 1)[-1] if i else ""
        if prev in _RUNNERS or prev in INTERPRETERS or w.startswith("./"):
            rel = posixpath.normpath(posixpath.join(here, w))
            if rel in files:
                out.append(files[rel])
    return out


def _finding(rel: str, line: int, hook: str, command: str, verdict: _Verdict | None) -> Finding:
    if verdict is not None and verdict.blocks:
        message = f"{hook} runs at install time and {verdict.what}"
        a = Assessment(Context.SCRIPT, Confidence.HIGH, True, ["a package install hook (judged on what it runs)"])
    else:
        message = f"{hook} runs a command at install time"
        a = Assessment(Context.SCRIPT, Confidence.MEDIUM, True, ["a package install hook that runs nothing known bad"])
    return security_finding(RULE, message, rel, line, command.strip()[:200], a)


_NPM_RUN = re.compile(r"\b(?:npm\s+(?:run(?:-script)?|run)|yarn(?:\s+run)?|pnpm(?:\s+run)?|bun\s+run)\s+([\w:.-]+)")


def _command_verdict(
    command: str, scripts: dict[str, object], here: str, files: dict[str, SkillFile], depth: int = 0
) -> _Verdict | None:
    """What a hook command runs: itself as shell, the skill's files it runs, and the package scripts it
    calls (`npm run setup` runs `scripts.setup`)."""
    verdict = _shell_verdict(command)
    if verdict is not None:
        return verdict
    for target in _runs_file(command, here, files):
        inner = _file_verdict(target)
        if inner is not None:
            return _Verdict(f"runs {target.rel}, which {inner.what}", inner.blocks)
    for name in _NPM_RUN.findall(command):
        called = scripts.get(name)
        if isinstance(called, str) and depth < 3:
            inner = _command_verdict(called, scripts, here, files, depth + 1)
            if inner is not None:
                return _Verdict(f"runs script {name!r}, which {inner.what}", inner.blocks)
    return None


def _npm(f: SkillFile, files: dict[str, SkillFile]) -> list[Finding]:
    try:
        data = json.loads(f.text or "")
    except ValueError:
        return []  # a malformed package.json is npm's error, reported when it is installed
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return []
    here = posixpath.dirname(f.rel)
    out = []
    text = f.text or ""
    for hook in NPM_HOOKS:
        command = scripts.get(hook)
        if not isinstance(command, str) or not command.strip():
            continue
        verdict = _command_verdict(command, scripts, here, files)
        pos = text.find(f'"{hook}"')
        line = text.count("\n", 0, pos) + 1 if pos >= 0 else 1
        out.append(_finding(f.rel, line, f"npm {hook} script", command, verdict))
    return out


def _hook_classes(tree: ast.Module) -> set[str]:
    """Classes `setup(cmdclass={...})` names, and classes deriving from a setuptools/distutils command."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "cmdclass" and isinstance(node.value, ast.Dict):
            names |= {v.id for v in node.value.values if isinstance(v, ast.Name)}
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                last = (base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")).lstrip("_")
                if last in _SETUP_COMMANDS:
                    names.add(node.name)
    return names


def _lines(node: ast.AST) -> set[int]:
    return set(range(getattr(node, "lineno", 1), (getattr(node, "end_lineno", None) or 1) + 1))


def _setup_py(f: SkillFile) -> list[Finding]:
    text = f.text or ""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    regions: list[tuple[str, ast.AST]] = []
    hooks = _hook_classes(tree)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in hooks:
            regions.append((f"setup.py command class {node.name}", node))
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom):
            regions.append(("setup.py module-level code", node))
    out = []
    for what, region in regions:
        lines = _lines(region)
        verdict = _python_verdict(text, lines)
        runs = [
            sub
            for sub in ast.walk(region)
            if isinstance(sub, ast.Call)
            and re.match(r"(?:os\.(?:system|popen)|subprocess\.\w+)$", ast.unparse(sub.func))
        ]
        if verdict is None and not runs:
            continue  # setup() arguments; a command class that runs no command and reaches no network
        first = min((getattr(s, "lineno", 1) for s in runs), default=getattr(region, "lineno", 1))
        spot = verdict.line if verdict is not None and verdict.line else first
        source_lines = text.splitlines()
        evidence = source_lines[spot - 1] if 0 < spot <= len(source_lines) else ""
        out.append(_finding(f.rel, spot, what, evidence, verdict))
    return out


def scan_lifecycle(src: SkillSource) -> list[Finding]:
    """`sec-lifecycle-script` findings of every package.json and setup.py of the skill."""
    files = {f.rel: f for f in src.files}
    out: list[Finding] = []
    for f in src.files:
        if f.text is None:
            continue
        name = f.rel.rsplit("/", 1)[-1]
        if name == "package.json":
            out.extend(_npm(f, files))
        elif name == "setup.py":
            out.extend(_setup_py(f))
    return out


__all__ = ["NPM_HOOKS", "scan_lifecycle"]
