"""Which staged skills an agent was shown, read, invoked, and whose scripts it ran — from tool calls only.

Only tool calls count: a skill name in the agent's prose, reasoning or in tool *output* is not use.
- read: a read-type tool whose path argument, or a shell command whose text, names
  `<skill dir>/<name>/SKILL.md` where the skill dir is the staged location or any skills dir (`.../skills/`,
  `.../skill/`), for a staged skill `<name>`; a shell command only when the file reached the agent: its output
  shows the SKILL.md (the `name: <skill>` line or a distinctive body line) and the command runs something that
  prints files (`cat`, `head`, `sed`, …, an interpreter), or, with no output recorded, it runs such a command:
  `test -f`, `ls -l`, `wc -c`, `stat` name the file but are no read;
- invoked: read ∪ skills loaded through a skill tool (Claude Code `Skill {"skill"|"command": name}`, the
  builtin agent's and OpenCode's `skill {"name"}`, Gemini CLI `activate_skill {"name"}`, OpenHands
  `invoke_skill {"name"}`, the opencode-skills plugin's `skills_<name>` tools) — only when the load
  succeeded: its result is in the trajectory and not marked as an error (`extra.is_error`, or an
  `extra.status` of error/failed, as the converters record them);
- failed: skills a skill-tool load of which failed (an error result, or no result at all), a read-type
  tool's read of whose SKILL.md returned an error, or a shell command naming whose SKILL.md failed without
  printing it (no `name: <skill>` frontmatter line in its output: e.g. `cat` of a wrong path); a skill can be
  both invoked and failed (a retry worked). A failed skill-tool load of a name that was not staged (a misspelt
  or made-up skill), or a failed read of its `.../skills/<name>/SKILL.md`, is recorded too, under the name the
  agent gave; a successful load of a skill the harness brought itself is not task-skill use;
- scripts_run: `<name>/<relative path>` for shell commands that execute a file under a staged skill's
  `scripts/` or any of its script assets (run directly or through an interpreter; `cd` is followed), and
  for scripts used as a library: Python code (in a shell command, or in a file the agent wrote and then
  ran) that puts the skill's directory on the module path and imports one of its scripts
  (`sys.path.append(skill_dir)` + `from tool import …`; see `skill_imports`);
- read also counts a skill's script read as a file (a read-type tool, or `cat`/`head`/`tail`/`less` in a
  shell command, on a script under the skill's directory): reading the code is using the skill.

Compiled skills (the `compiled` condition) are used through their runtime handle `run_<skill>` instead, as
the agent's harness names it (`run_x` for the builtin agent, `mcp__skillworks__run_x` for Claude Code and
Codex, `skillworks_run_x` for OpenCode); a handle counts as listed, and a call of it that was answered (not an
error) as invoked; an answer `execute` of a script operator adds `<skill>/<script>` to scripts_run, and the
`get_skill_asset` fallback on SKILL.md counts as read, and so does a shell command naming the SKILL.md of the
runtime's staged capsule (`.../compiled/<skill>/capsule/SKILL.md`). A call without an answer, or an error, is
failed.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from skillworks.results import SkillUse
from skillworks.skills.package import SkillPackage
from skillworks.trajectory.models import ObservationResult, ToolCall, Trajectory
from skillworks.trajectory.skill_imports import imported_scripts

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "run_shell_command",
        "command_execution",
        "exec_command",
        "local_shell",
        "terminal",
        "execute_bash",
        "run_command",
        "container.exec",
    }
)
READ_TOOLS = frozenset(
    {
        "read",
        "read_file",
        "readfile",
        "read_many_files",
        "view",
        "cat",
        "open_file",
        "str_replace_based_edit_tool",
        "str_replace_editor",
        "file_read",
        "get_file_contents",
    }
)
SKILL_TOOLS = {
    "skill": ("skill", "command", "name"),
    "activate_skill": ("name", "skill_name", "skill"),
    "invoke_skill": ("name", "skill_name", "skill"),  # OpenHands
}
_PATH_KEYS = (
    "file_path",
    "path",
    "absolute_path",
    "filePath",
    "filepath",
    "file",
    "target_file",
    "paths",
    "file_paths",
)
_INTERPRETERS = re.compile(
    r"^(python(\d+(\.\d+)?)?|bash|sh|zsh|dash|node|nodejs|deno|bun|ruby|perl|php|Rscript|pwsh|tsx|ts-node|"
    r"osascript|lua)$"
)
_WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "exec", "command", "timeout", "stdbuf", "xargs"})
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("npx",),
    ("bunx",),
    ("pnpm", "exec"),
    ("deno", "run"),
    ("bun", "run"),
    ("conda", "run"),
}
_SKILL_MD = re.compile(r"([^\s'\"`=<>|;&(){}]*?)/?([A-Za-z0-9][A-Za-z0-9._-]*)/SKILL\.md\b")


@dataclass(frozen=True)
class StagedSkillRef:
    """A skill staged for a trial: its name, where it is visible inside the sandbox, its script assets."""

    name: str
    path: str | None = None  # e.g. /root/.claude/skills/pdf
    scripts: tuple[str, ...] = ()  # relative paths of script assets, e.g. ("scripts/fill.py",)
    # distinctive lines of its SKILL.md body: a shell command's output holding one shows the content
    body_lines: tuple[str, ...] = ()

    @classmethod
    def from_package(cls, package: SkillPackage, path: str | None = None) -> StagedSkillRef:
        scripts = tuple(a.path for a in package.assets if a.kind == "script")
        return cls(package.name, path, scripts, _distinctive_lines(package.body))


_MIN_LINE = 16  # shorter body lines ("# Usage", "---") are too common to show that the file was printed


def _distinctive_lines(body: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line.strip() for line in body.splitlines() if len(line.strip()) >= _MIN_LINE))


@dataclass(frozen=True)
class SkillHandleRef:
    """A compiled skill the agent reached through a runtime tool: the skill, its handle (`run_<skill>`), and the
    package script each operator runs."""

    skill: str
    handle: str
    operator_scripts: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_record(cls, entry: dict[str, Any]) -> SkillHandleRef:
        """From one entry of a compiled-skills record (`compiled-skills.json` `compiled`)."""
        scripts = entry.get("operator_scripts") or {}
        return cls(
            str(entry["skill"]), str(entry["handle"]), tuple(sorted((str(k), str(v)) for k, v in scripts.items()))
        )


def detect_skill_use(
    traj: Trajectory,
    staged: Sequence[StagedSkillRef],
    skills_dir: str | None,
    listed: Sequence[str] | None,
    *,
    unanswered_ok: bool = False,
    handles: Sequence[SkillHandleRef] = (),
) -> SkillUse:
    """Skill use in `traj`, counted against the skills that were staged (a harness's bundled skills never count).

    `listed` is what the harness reported showing the agent (e.g. Claude Code's init `skills`); None means
    the harness does not report it, and the staged skills (audited as visible) are taken as listed.
    `unanswered_ok`: a skill-tool call without a result counts as a load (for views of single calls that
    carry no results); by default it is a failed load. `handles`: compiled skills offered as runtime tools.
    """
    by_name = {s.name: s for s in staged}
    names = list(by_name)
    shown = names if listed is None else _unique(n for n in listed if n in by_name)
    roots = _roots(staged, skills_dir)
    read: list[str] = []
    via_tool: list[str] = []
    scripts: list[str] = []
    failed: list[str] = []
    written: dict[str, str] = {}  # files the agent wrote: path -> content

    def locate(directory: str) -> tuple[str, str] | None:
        return _locate(directory, by_name, roots)

    def is_script(skill: str, rel: str) -> bool:
        return rel.startswith("scripts/") or rel in by_name[skill].scripts

    def is_known_script(skill: str, rel: str) -> bool:  # an import must name a real script, not `sys`
        return rel in by_name[skill].scripts

    for call, result in _calls(traj):
        fname = call.function_name
        lname = fname.lower()
        handle = _handle_of(lname, handles)
        if handle is not None:
            _handle_use(handle, call.arguments, result, unanswered_ok, read, via_tool, scripts, failed)
            continue
        skill: str | None = None
        content = _written_content(lname, call.arguments)
        if content is not None:
            for path in _path_args(call.arguments)[:1]:
                written[posixpath.normpath(path)] = content
        if lname in SKILL_TOOLS:
            skill = _skill_tool_target(call, SKILL_TOOLS[lname])
        elif lname.startswith("skills_") and len(lname) > 7:  # opencode-skills plugin: one tool per skill
            skill = next((n for n in by_name if n.replace("-", "_").lower() == lname[7:]), None)
        if lname in SKILL_TOOLS or skill is not None:
            ok = _succeeded(result) if result is not None else unanswered_ok
            if skill in by_name:
                (via_tool if ok else failed).append(skill)
            elif skill is not None and not ok:
                failed.append(skill)  # a load of a skill that was never staged (a wrong or made-up name)
            continue
        if lname in SHELL_TOOLS:
            text = _command_text(call.arguments)
            if result is not None and not _succeeded(result):  # a failed read of a skill never staged
                failed += [n for n in _unstaged_skill_mds(text, by_name) if not _printed_frontmatter(result, n)]
            # a compiled skill's raw text read past its handle, in the runtime's staged capsule
            read += [h.skill for h in handles if f"compiled/{h.skill}/" in text and "SKILL.md" in text]
            for code in _written_files_run(text, written):
                scripts += imported_scripts(code, locate, is_known_script)
            if not any(n in text for n in by_name) and not any(r in text for r in roots):
                continue  # cheap pre-filter: every match names the skill or its staged root
            mentioned = _skill_md_mentions(text, by_name, roots) + _skill_md_after_cd(text, by_name, roots)
            if result is not None:  # read only what reached the agent: `test -f`, `ls -l`, `wc -c`, `stat` do not
                prints = _prints_files(text)  # and an `echo "name: x"` beside an `ls` is no read
                shown_md = [n for n in mentioned if prints and _printed_content(result, by_name[n])]
                if not _succeeded(result):
                    failed += [n for n in mentioned if n not in shown_md]
                mentioned = shown_md
            else:  # no output recorded: a command that prints files counts, a test or listing does not
                mentioned = [n for n in mentioned if _prints_files(text)]
            read += mentioned
            read += _scripts_read_in_shell(text, locate, is_script)
            scripts += _scripts_run(text, by_name, roots)
            scripts += imported_scripts(text, locate, is_known_script)
        elif _is_read_tool(fname, call.arguments):
            found = [s for path in _path_args(call.arguments) for s in _skill_md_mentions(path, by_name, roots)]
            found += [s for path in _path_args(call.arguments) if (s := _script_file(path, locate, is_script))]
            if result is not None and not _succeeded(result):
                failed += found
                failed += [n for path in _path_args(call.arguments) for n in _unstaged_skill_mds(path, by_name)]
            else:
                read += found
    read_u = _unique(read)
    return SkillUse(
        listed=_unique([*shown, *(h.skill for h in handles)]),
        read=read_u,
        invoked=_unique([*read_u, *via_tool]),
        scripts_run=_unique(scripts),
        failed=_unique(failed),
    )


_FAILED_STATUSES = frozenset({"error", "failed", "failure", "declined", "rejected", "cancelled"})


def _handle_of(lname: str, handles: Sequence[SkillHandleRef]) -> SkillHandleRef | None:
    """The compiled skill whose handle this tool is: the handle itself, or it behind a harness's MCP prefix."""
    for h in handles:
        handle = h.handle.lower()
        if lname == handle or lname.endswith("__" + handle) or lname.endswith("_" + handle):
            return h
    return None


def _handle_use(
    handle: SkillHandleRef,
    arguments: dict[str, Any],
    result: ObservationResult | None,
    unanswered_ok: bool,
    read: list[str],
    invoked: list[str],
    scripts: list[str],
    failed: list[str],
) -> None:
    if isinstance(arguments.get("arguments"), dict) and "tool" in arguments:  # Codex: {server, tool, arguments}
        arguments = arguments["arguments"]
    if result is None:
        (invoked if unanswered_ok else failed).append(handle.skill)
        return
    if not _succeeded(result):
        failed.append(handle.skill)
        return
    invoked.append(handle.skill)
    status = _envelope_status(result)
    operator = arguments.get("operator")
    if status == "execute" and isinstance(operator, str):
        script = dict(handle.operator_scripts).get(operator)
        if script is not None:
            scripts.append(f"{handle.skill}/{script}")
    inputs = arguments.get("inputs")
    asset = inputs.get("path") if isinstance(inputs, dict) else None
    if operator == "get_skill_asset" and asset == "SKILL.md" and status == "guidance":
        read.append(handle.skill)


def _envelope_status(result: ObservationResult) -> str | None:
    """The `status` of the runtime's answer (its envelope, as JSON text), if the result holds one."""
    text = _result_text(result)
    try:
        data = json.loads(text)
    except ValueError:
        match = re.search(r'"status"\s*:\s*"(\w+)"', text)
        return match.group(1) if match else None
    return str(data.get("status")) if isinstance(data, dict) and data.get("status") else None


def _succeeded(result: ObservationResult) -> bool:
    """Whether a tool's result says it worked: not flagged as an error by the converter that recorded it."""
    extra = result.extra or {}
    if extra.get("is_error") is True:
        return False
    status = extra.get("status")
    return not (isinstance(status, str) and status.lower() in _FAILED_STATUSES)


def tool_result_failed(result: ObservationResult) -> bool:
    """Whether a tool's result is marked as a failure (`extra.is_error`, or an `extra.status` of error/failed...)."""
    return not _succeeded(result)


def _result_text(result: ObservationResult) -> str:
    content = result.content
    return content if isinstance(content, str) else "".join(getattr(p, "text", None) or "" for p in content or [])


def _printed_frontmatter(result: ObservationResult, skill: str) -> bool:
    """Whether a tool's output shows the skill's SKILL.md (its `name:` frontmatter line)."""
    text = _result_text(result)
    return re.search(rf"(?m)^\s*name:\s*['\"]?{re.escape(skill)}['\"]?\s*$", text) is not None


def _printed_content(result: ObservationResult, ref: StagedSkillRef) -> bool:
    """Whether a shell command's output shows the skill's SKILL.md: its `name:` line or a distinctive body line."""
    if _printed_frontmatter(result, ref.name):
        return True
    text = _result_text(result)
    return any(line in text for line in ref.body_lines)


_PRINTERS = frozenset(
    {
        *("cat", "head", "tail", "less", "more", "nl", "bat", "batcat", "view", "sed", "awk", "grep", "rg", "tac"),
        *("cut", "strings", "xxd", "od", "jq", "python", "python3", "node"),
    }
)


def _prints_files(text: str) -> bool:
    """Whether a shell command runs a command that can print a file's content (a reader, a filter, or an
    interpreter); without one, text in its output that looks like the SKILL.md was not read from it."""
    for words in _simple_commands(text):
        while words and (posixpath.basename(words[0]) in _WRAPPERS or "=" in words[0] or words[0].isdigit()):
            words = words[1:]  # `sudo cat`, `timeout 5 head`, `LC_ALL=C sed`
        head = posixpath.basename(words[0]) if words else ""
        if head in _PRINTERS:
            return True
        if head in ("bash", "sh", "zsh", "dash") and any("c" in w for w in words[1:] if w.startswith("-")):
            inner = next((w for w in words[1:] if not w.startswith("-")), "")  # `bash -lc '<script>'`
            if _prints_files(inner):
                return True
    return False


def _is_read_tool(name: str, arguments: dict[str, Any]) -> bool:
    """A tool that reads files: a known reader, or one whose name has the word `read` (`mcp__fs__read_text_file`,
    `readFile`); an editor tool only for its `view` command."""
    lname = name.lower()
    if lname.startswith("str_replace"):
        return arguments.get("command") == "view"
    if lname in READ_TOOLS:
        return True
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    return "read" in words and "write" not in words


def _calls(traj: Trajectory) -> Iterable[tuple[ToolCall, ObservationResult | None]]:
    """Every tool call of an agent step with its result (None when the trajectory holds none)."""
    for step in traj.steps:
        if step.source == "agent":
            results = {r.source_call_id: r for r in (step.observation.results if step.observation else [])}
            for call in step.tool_calls or ():
                yield call, results.get(call.tool_call_id)
    for sub in traj.subagent_trajectories or ():
        yield from _calls(sub)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _roots(staged: Sequence[StagedSkillRef], skills_dir: str | None) -> dict[str, str]:
    """Known skill directories (normalised) -> skill name."""
    roots: dict[str, str] = {}
    for s in staged:
        if s.path:
            roots[posixpath.normpath(s.path)] = s.name
        if skills_dir:
            roots[posixpath.normpath(f"{skills_dir}/{s.name}")] = s.name
    return roots


def _skill_of_dir(directory: str, by_name: dict[str, StagedSkillRef], roots: dict[str, str]) -> str | None:
    """The staged skill whose root is `directory` (a known root, or `<...>/skills/<name>`)."""
    norm = posixpath.normpath(directory) if directory else directory
    if norm in roots:
        return roots[norm]
    parent, name = posixpath.split(norm)
    if name in by_name and posixpath.basename(parent) in ("skills", "skill"):
        return name
    return None


def _skill_md_mentions(text: str, by_name: dict[str, StagedSkillRef], roots: dict[str, str]) -> list[str]:
    found = []
    for match in _SKILL_MD.finditer(text):
        prefix, name = match.group(1), match.group(2)
        directory = f"{prefix}/{name}" if prefix else name
        skill = _skill_of_dir(directory, by_name, roots)
        if skill is not None:
            found.append(skill)
    return found


def _unstaged_skill_mds(text: str, by_name: dict[str, StagedSkillRef]) -> list[str]:
    """Names of skills that were not staged whose SKILL.md `text` names in a skills dir (`.../skills/<name>/`)."""
    found = []
    for match in _SKILL_MD.finditer(text):
        prefix, name = match.group(1), match.group(2)
        if name not in by_name and posixpath.basename(prefix.rstrip("/")) in ("skills", "skill"):
            found.append(name)
    return found


def _skill_md_after_cd(text: str, by_name: dict[str, StagedSkillRef], roots: dict[str, str]) -> list[str]:
    """SKILL.md named by a relative path after `cd` (e.g. `cd ~/.claude/skills && cat pdf/SKILL.md`)."""
    found: list[str] = []
    cwd = ""
    for words in _simple_commands(text):
        if words and words[0] == "cd":
            dest = words[1] if len(words) > 1 else ""
            cwd = dest if dest.startswith(("/", "~", "$")) or not cwd else posixpath.join(cwd, dest)
            continue
        if words and posixpath.basename(words[0]) in ("bash", "sh", "zsh", "dash") and len(words) > 2:
            inner = next((w for w in words[1:] if not w.startswith("-")), "")
            found += _skill_md_after_cd(inner, by_name, roots)
            continue
        if not cwd:
            continue
        for word in words:
            if word.endswith("SKILL.md") and not word.startswith(("/", "~", "$")):
                resolved = posixpath.normpath(posixpath.join(cwd, word))
                found += _skill_md_mentions(resolved, by_name, roots)
    return found


def _skill_tool_target(call: ToolCall, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = call.arguments.get(key)
        if isinstance(value, str) and value.strip():
            target = value.strip().lstrip("/")
            return target.split(":")[-1].split()[0] if target else None
    return None


def _command_text(arguments: dict[str, Any]) -> str:
    for key in ("command", "cmd", "script", "commands", "input"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return shlex.join(value)
    return ""


def _path_args(arguments: dict[str, Any]) -> list[str]:
    paths: list[str] = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            paths.append(value)
        elif isinstance(value, list):
            paths += [v for v in value if isinstance(v, str)]
    return paths


def _scripts_run(text: str, by_name: dict[str, StagedSkillRef], roots: dict[str, str]) -> list[str]:
    runs: list[str] = []
    cwd = ""
    for words in _simple_commands(text):
        while words and ("=" in words[0] and not words[0].startswith(("/", "."))):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        if words[0] == "cd":
            dest = words[1] if len(words) > 1 else ""
            cwd = dest if dest.startswith(("/", "~", "$")) or not cwd else posixpath.join(cwd, dest)
            continue
        if posixpath.basename(words[0]) in ("bash", "sh", "zsh", "dash"):
            flags = [w for w in words[1:] if w.startswith("-")]
            if any("c" in f for f in flags if not f.startswith("--")):
                inner = next((w for w in words[1:] if not w.startswith("-")), "")
                runs += _scripts_run(inner, by_name, roots)
                continue
        target = _executed_file(words)
        if target is None:
            continue
        if cwd and not target.startswith(("/", "~", "$")):
            target = posixpath.join(cwd, target)
        hit = _script_of(posixpath.normpath(target), by_name, roots)
        if hit is not None:
            runs.append(hit)
    return runs


def _simple_commands(text: str) -> list[list[str]]:
    """Split a shell command line into simple commands (at ;, &&, ||, |, newlines, parentheses)."""
    lexer = shlex.shlex(text.replace("\n", "\n;"), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and set(token) <= set(";&|()"):
                commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:  # unbalanced quotes: fall back to whitespace words
        return [line.split() for line in re.split(r"&&|\|\||[;|\n]", text)]
    return [c for c in commands if c]


def _executed_file(words: list[str]) -> str | None:
    """The file a simple command executes: the command itself, or the script given to an interpreter."""
    i = 0
    while i < len(words) and posixpath.basename(words[i]) in _WRAPPERS:
        i += 1
        while i < len(words) and (words[i].startswith("-") or "=" in words[i] or words[i].isdigit()):
            i += 1
    if i >= len(words):
        return None
    for runner in _RUNNERS:
        if tuple(words[i : i + len(runner)]) == runner:
            i += len(runner)
            while i < len(words) and words[i].startswith("-"):
                i += 1
            break
    if i >= len(words):
        return None
    head = posixpath.basename(words[i])
    if _INTERPRETERS.match(head):
        j = i + 1
        while j < len(words) and words[j].startswith("-"):
            if words[j] in ("-m", "-c", "-e", "--eval"):
                return None  # a module or inline code, not a file
            j += 1
        return words[j] if j < len(words) else None
    return words[i]


def _script_of(path: str, by_name: dict[str, StagedSkillRef], roots: dict[str, str]) -> str | None:
    """`<skill>/<rel>` if `path` is a script of a staged skill, else None."""
    parts = path.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        skill = _skill_of_dir("/".join(parts[:cut]), by_name, roots)
        if skill is None:
            continue
        rel = "/".join(parts[cut:])
        ref = by_name[skill]
        if rel.startswith("scripts/") or rel in ref.scripts:
            return f"{skill}/{rel}"
        return None
    return None


_WRITE_TOOLS = frozenset({"write", "write_file", "create_file", "file_write", "writefile"})
_READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "view"})


def _written_content(lname: str, arguments: dict[str, Any]) -> str | None:
    """The content of a file a write tool creates (None for other tools)."""
    if lname.startswith("str_replace"):
        value = arguments.get("file_text") if arguments.get("command") == "create" else None
    elif lname in _WRITE_TOOLS:
        value = arguments.get("content", arguments.get("contents", arguments.get("file_text")))
    else:
        return None
    return value if isinstance(value, str) else None


def _written_files_run(text: str, written: dict[str, str]) -> list[str]:
    """The contents of files the agent wrote that this shell command runs."""
    if not written:
        return []
    codes = []
    for words in _simple_commands(text):
        target = _executed_file(words)
        if target is None:
            continue
        norm = posixpath.normpath(target)
        for path, content in written.items():
            if path == norm or (not norm.startswith("/") and path.endswith("/" + norm)):
                codes.append(content)
                break
    return codes


def _locate(directory: str, by_name: dict[str, StagedSkillRef], roots: dict[str, str]) -> tuple[str, str] | None:
    """(skill, path inside it) for a directory at or under a staged skill's directory."""
    parts = posixpath.normpath(directory).split("/")
    for cut in range(len(parts), 0, -1):
        skill = _skill_of_dir("/".join(parts[:cut]), by_name, roots)
        if skill is not None:
            return skill, "/".join(parts[cut:])
    return None


def _script_file(
    path: str, locate: Callable[[str], tuple[str, str] | None], is_script: Callable[[str, str], bool]
) -> str | None:
    """The skill whose script `path` is, or None."""
    head, name = posixpath.split(posixpath.normpath(path))
    place = locate(head)
    if place is None:
        return None
    skill, inside = place
    rel = posixpath.join(inside, name) if inside else name
    return skill if is_script(skill, rel) else None


def _scripts_read_in_shell(
    text: str, locate: Callable[[str], tuple[str, str] | None], is_script: Callable[[str, str], bool]
) -> list[str]:
    found = []
    for words in _simple_commands(text):
        if words and posixpath.basename(words[0]) in _READERS:
            found += [s for w in words[1:] if not w.startswith("-") and (s := _script_file(w, locate, is_script))]
    return found
