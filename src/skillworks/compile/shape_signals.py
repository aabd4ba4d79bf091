"""Document-structure signals for the shape classifier: how much of a SKILL.md is an ordered procedure,
how much is a menu of independent operations, and how much is left once boilerplate is set aside.

The body is cut into sections at its headings. A *procedure* is a run of step sections (`Step 2`, `Phase 1`,
`### 3. Run the tests` under a Workflow heading) or of imperative numbered items ("1. Run ...", not
"1. **Term**: definition" or "1. What is ...?"), outside setup sections (Installation, Prerequisites,
Quick start), whose steps set up the skill rather than do its task. A *menu* is a group of sibling sections
each of which brings its own callable (a TOOL_NAME, a command with its subcommand, a script) or is named by
an operation verb ("Create Pool", "List Jobs") over code; plus documented `--options` of one command.
Each is measured as a share of the body's words, so a long reference document with a short "Workflow"
section at its end stays a reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillworks.compile.features import Features, ListItem

_STEP_TITLE = re.compile(
    r"^(?:\**)(?:step|phase|stage|part)\s*[-#]?\s*\d+[a-z]?(?:\.\d+)?\b|^第[一二三四五六七八九十\d]+[步阶]|^步骤\s*\d+",
    re.I,
)
_NUMBERED_TITLE = re.compile(r"^(?:\d{1,2}|[a-z])[.)]\s+(\S+)", re.I)
_PROCEDURE_TITLE = re.compile(
    r"\b(?:workflow(?!s)|steps?|procedure|process(?!es)|how to|instructions|execution|methodology|run ?book|"
    r"playbook|routing logic|protocol|checklist|tutorial|walkthrough|pipeline(?!s))\b|执行步骤|流程|步骤",
    re.I,
)
_SETUP_TITLE = re.compile(
    r"\b(?:setup|set up|install(?:ation|ing)?|prerequisites?|requirements|getting started|quick ?start|"
    r"configuration|authentication|environment(?: variables)?|dependencies|before you start)\b|安装|设置|前置",
    re.I,
)
_ASIDE_TITLE = re.compile(
    r"^\W*(?:(?:common|key|known|additional|important|usage|general|final|more|further)\s+)?"
    r"(?:when to (?:use|activate|apply)|use (?:this skill )?when|do not use|don't use|overview|purpose|"
    r"description|about|limitations|related|see also|references?|resources|links?|license|credits|"
    r"changelog|version|metadata|triggers?|best practices|tips|pitfalls|troubleshooting|anti-patterns?|"
    r"examples?|notes?|faq|gotchas|output format|quick reference|cheat ?sheet)\b",
    re.I,
)
_STEP_LINE = re.compile(
    r"^\s*(?:[-*]\s*\[[ xX]?\]\s*|\*\*|#+\s*)?(?:step|phase|stage)\s*\d+[a-z]?(?:\.\d+)?\s*[:.—–-]", re.I
)
_MENU_TITLE = re.compile(
    r"\b(?:commands?|subcommands?|operations?|tools?|functions?|api|actions?|recipes|capabilities|endpoints?)\b",
    re.I,
)
_ROW = re.compile(r"^\s*(?:[-*+]\s|\d{1,2}[.)]\s|\|)")
_OPTION_ROW = re.compile(r"^\s*(?:\|\s*|[-*]\s+)`?(--?[a-zA-Z][\w-]*)")
_TOOL = re.compile(r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+){2,}\b")
_CONDITIONAL = re.compile(r"^\W*(?:if|for each|when|once|after|before|then|repeat|until|while)\b", re.I)
_ENV_SUFFIXES = frozenset(
    {"key", "token", "id", "url", "uri", "secret", "path", "dir", "host", "port", "env", "mode", "name", "level"}
)
_NOT_OPERATIONS = frozenset({"export", "cd", "source", "echo", "set", "mkdir", "cat", "ls", "which", "chmod", "unset"})
_INSTALLS = frozenset({"install", "add", "i", "init", "venv", "--version", "version", "login", "auth"})
_WRAPPERS = frozenset({"sudo", "npx", "uvx", "pnpx", "bunx", "python", "python3", "node", "bash", "sh", "uv", "run"})
_OP_VERB_WORDS = """
    add analyze analyse append apply archive assign attach audit backup batch build calculate call cancel
    capture chat check clean clone close commit compare compress configure connect convert copy count create
    crop deploy delete describe detect diff disable download draft dump edit enable encode estimate execute
    export extract fetch fill filter find format generate get grant import index insert inspect install
    invite invoke join label launch link list load log manage map merge migrate monitor move open optimize
    parse pause ping post preview print process publish pull push query read record redact refresh register
    reload remove rename render reply request reset resize restart restore resume retrieve review revoke
    rotate run sample save scale scan schedule scrape search send set share sign snapshot sort split start
    stop stream submit summarize sync tag terminate test track train transcribe transform translate trim
    update upload upsert validate verify view watch watermark write
"""
_OTHER_IMPERATIVE_WORDS = """
    aggregate ask assess back be bump choose clarify collect compile confirm construct decide define design
    determine discover document draft ensure establish evaluate examine explore follow gather go identify
    implement inform keep locate look make navigate note obtain outline pick plan prepare present prioritize
    produce propose prune re-run rerun report resolve retry return select show specify stage store summarise
    tell try use wait work write
"""
_OP_VERBS = frozenset(_OP_VERB_WORDS.split())
_IMPERATIVE = _OP_VERBS | frozenset(_OTHER_IMPERATIVE_WORDS.split())


@dataclass(frozen=True)
class ShapeSignals:
    words: int  # body words under headings and before the first
    substantive_words: int  # outside aside sections (When to use, Overview, Related, ...)
    steps: int  # step sections plus the longest run of imperative numbered items in the procedure
    step_sections: int  # `Step N` / `Phase N` headings, or numbered headings under a procedure heading
    procedure_share: float  # share of the words inside the procedure
    step_spans: tuple[tuple[int, int, str], ...]  # step sections: first and last SKILL.md line, title
    procedure_runs_scripts: bool  # a command in the procedure runs one of the skill's executables
    menu_sections: int  # sibling sections that each bring their own operation
    menu_share: float
    options: int  # documented --options
    command_rows: int  # rows of a list/table under a Commands/Operations/Tools heading that carry a command
    subcommands: int  # distinct subcommands of one script outside setup and procedure
    menu_callables: tuple[str, ...]


def _first_word(text: str) -> str:
    word = re.sub(r"^[\s*_`\[(\"']+", "", text).split(" ", 1)[0]
    return re.sub(r"[^a-z-]", "", word.lower())


def is_imperative(text: str) -> bool:
    """A numbered item that tells the agent to do something, not a definition or a question."""
    stripped = text.strip()
    if stripped.endswith("?"):
        return False
    bold = re.match(r"^\*\*([^*]+)\*\*\s*[:\-—–]", stripped)
    if bold and _first_word(bold.group(1)) not in _IMPERATIVE:
        return False  # "**Term**: definition"
    return _first_word(stripped) in _IMPERATIVE


def _command_key(text: str) -> str:
    words = [w for w in re.split(r"\s+", text.strip()) if w]
    while words and (words[0] in _WRAPPERS or words[0].startswith("-")):
        words = words[1:]
    key: list[str] = []
    for w in words[:4]:
        if w.startswith(("-", "<", "[", "{", "$", '"', "'", "/", ".")) or "=" in w or "|" in w:
            break
        if w.rsplit("/", 1)[-1]:
            key.append(w.rsplit("/", 1)[-1])
    if not key or key[0] in _NOT_OPERATIONS or not key[0][0].isalpha() or (len(key) > 1 and key[1] in _INSTALLS):
        return ""  # setting up (export X=, cd, pip install), not an operation of the skill
    return " ".join(key[:3])


def _is_tool(name: str, line: str) -> bool:
    """A TOOL_NAME to call (GMAIL_SEND_EMAIL), not an environment variable (API_KEY, $X, X=...)."""
    parts = name.lower().split("_")
    if not any(p in _OP_VERBS for p in parts) or parts[-1] in _ENV_SUFFIXES:
        return False
    return not re.search(rf"(?:\$\{{?|env\.|getenv\(\W*|environ\W+){name}\b|\b{name}\s*=", line)


def shape_signals(feats: Features, body: str) -> ShapeSignals:
    lines = body.splitlines()
    heads = feats.headings
    n = len(heads)
    # section k covers body lines [start_k, end_k); section -1 (the preamble) is the text before the first heading
    starts = [h.line - feats.offset - 1 for h in heads]
    bounds = [(starts[k] + 1, starts[k + 1] if k + 1 < n else len(lines)) for k in range(n)]
    own_words = [sum(len(lines[i].split()) for i in range(a, b)) for a, b in bounds]
    preamble = sum(len(lines[i].split()) for i in range(0, starts[0] if heads else len(lines)))
    total = max(1, preamble + sum(own_words))
    # the subtree of section k: k..end_of[k]-1
    end_of = []
    for k in range(n):
        j = k + 1
        while j < n and heads[j].level > heads[k].level:
            j += 1
        end_of.append(j)
    parent: list[int | None] = []
    for k in range(n):
        p = k - 1
        while p >= 0 and heads[p].level >= heads[k].level:
            p -= 1
        parent.append(p if p >= 0 else None)

    def under(k: int, pattern: re.Pattern[str]) -> bool:
        p: int | None = k
        while p is not None:
            if pattern.search(heads[p].title):
                return True
            p = parent[p]
        return False

    def section_of(line: int) -> int:
        k = -1
        for j, h in enumerate(heads):
            if h.line <= line:
                k = j
        return k

    def is_setup(k: int) -> bool:
        title = heads[k].title
        own_procedure = bool(_PROCEDURE_TITLE.search(title)) and not _STEP_TITLE.match(title)
        return under(k, _SETUP_TITLE) and not own_procedure

    setup = [is_setup(k) for k in range(n)]
    aside = [under(k, _ASIDE_TITLE) for k in range(n)]
    substantive = preamble + sum(w for k, w in enumerate(own_words) if not aside[k] and not setup[k])

    # procedure: step sections, numbered headings under a procedure heading, imperative numbered runs
    in_procedure = [False] * n
    step_sections = 0
    step_spans: list[tuple[int, int, str]] = []  # (first, last SKILL.md line, title) of each step section
    for k, h in enumerate(heads):
        if setup[k]:
            continue
        numbered = _NUMBERED_TITLE.match(h.title)
        parent_title = heads[parent[k]].title if parent[k] is not None else ""  # type: ignore[index]
        numbered_step = bool(numbered) and bool(_PROCEDURE_TITLE.search(parent_title))
        numbered_step = numbered_step and _first_word(numbered.group(1)) in _IMPERATIVE  # type: ignore[union-attr]
        if _STEP_TITLE.match(h.title) or numbered_step:
            step_sections += 1
            last = heads[end_of[k]].line - 1 if end_of[k] < n else len(lines) + feats.offset
            if not (step_spans and step_spans[-1][1] >= h.line):  # a step inside a step is part of it
                step_spans.append((h.line, last, h.title))
            for j in range(k, end_of[k]):
                in_procedure[j] = True
    step_lines = 0
    for i, line in enumerate(lines):
        if _STEP_LINE.match(line) and not line.lstrip().startswith("#"):
            k = section_of(i + feats.offset + 1)
            if k < 0 or not setup[k]:
                step_lines += 1
                if k >= 0:
                    in_procedure[k] = True
    # numbered runs (consecutive numbers in one section): a procedure when most items say what to do
    runs: list[list[ListItem]] = []
    for item in feats.ordered:
        if runs and runs[-1][-1].section == item.section and item.number == runs[-1][-1].number + 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    command_lines = [c.line for c in feats.commands]
    best_run = 0
    preamble_procedure = False
    for items in runs:
        k = section_of(items[0].line_start)
        if len(items) < 3 or (k >= 0 and (setup[k] or aside[k])):
            continue
        acting = sum(
            1
            for i in items
            if is_imperative(i.text)
            or _CONDITIONAL.match(i.text)
            or any(i.line_start <= line <= i.line_end for line in command_lines)
        )
        if acting * 2 < len(items):
            continue
        best_run = max(best_run, len(items))
        if k >= 0:
            in_procedure[k] = True
        else:
            preamble_procedure = True
    procedure_words = sum(w for k, w in enumerate(own_words) if in_procedure[k])
    procedure_words += preamble if preamble_procedure else 0
    script_names = {path.rsplit("/", 1)[-1] for path in feats.scripts}
    runs_scripts = any(
        in_procedure[k] and any(name in c.text for name in script_names)
        for c in feats.commands
        if (k := section_of(c.line)) >= 0
    )
    steps = max(step_sections, step_lines) + (best_run if best_run >= 3 else 0)

    # menu: sibling groups of sections each bringing a new callable
    callables: list[set[str]] = [set() for _ in range(n)]
    code_in: list[bool] = [False] * n
    for c in feats.commands:
        k = section_of(c.line)
        if k >= 0:
            key = _command_key(c.text)
            if key:
                callables[k].add(key)
    for block in feats.code_blocks:
        k = section_of(block.line_start)
        if k >= 0:
            code_in[k] = True
    for i, line in enumerate(lines):
        k = section_of(i + feats.offset + 1)
        if k >= 0:
            callables[k].update(t for t in _TOOL.findall(line) if _is_tool(t, line))
    best_group: list[int] = []
    groups: dict[int | None, list[int]] = {}
    for k in range(n):
        groups.setdefault(parent[k], []).append(k)
    menu_keys: set[str] = set()
    for members in groups.values():
        seen: set[str] = set()
        ops: list[int] = []
        keys: set[str] = set()
        for k in members:
            if setup[k] or aside[k] or _STEP_TITLE.match(heads[k].title):
                continue
            sub = set().union(*(callables[j] for j in range(k, end_of[k])))
            new = sub - seen
            has_code = any(code_in[j] for j in range(k, end_of[k]))
            verb = _first_word(re.sub(r"^\d{1,2}[.)]\s*", "", heads[k].title)) in _OP_VERBS
            if new or (verb and has_code):
                ops.append(k)
                keys |= new
            seen |= sub
        if len(ops) > len(best_group):
            best_group, menu_keys = ops, keys
    menu_words = sum(own_words[j] for k in best_group for j in range(k, end_of[k]))
    options = sum(1 for line in lines if _OPTION_ROW.match(line))
    # a menu inside one section: list or table rows that each carry a command; subcommands of one tool
    rows: dict[int, set[str]] = {}
    heads_of: dict[str, set[str]] = {}
    for c in feats.commands:
        k = section_of(c.line)
        if k >= 0 and (setup[k] or in_procedure[k]):
            continue
        line = lines[c.line - feats.offset - 1] if 0 <= c.line - feats.offset - 1 < len(lines) else ""
        if not c.in_block and _ROW.match(line) and k >= 0 and _MENU_TITLE.search(heads[k].title):
            rows.setdefault(k, set()).add(c.text)
        words = _command_key(c.text).split()
        if len(words) >= 2 and "." in words[0]:  # a bundled script's subcommands (tool.py create / list / ...)
            heads_of.setdefault(words[0], set()).add(words[1])
    command_rows = max((len(v) for v in rows.values()), default=0)
    subcommands = max((len(v) for v in heads_of.values()), default=0)
    return ShapeSignals(
        words=total,
        substantive_words=substantive,
        steps=steps,
        step_sections=max(step_sections, step_lines),
        procedure_share=round(min(1.0, procedure_words / max(1, substantive)), 3),
        step_spans=tuple(step_spans),
        procedure_runs_scripts=runs_scripts,
        menu_sections=len(best_group),
        menu_share=round(min(1.0, menu_words / max(1, substantive)), 3),
        options=options,
        command_rows=command_rows,
        subcommands=subcommands,
        menu_callables=tuple(sorted(menu_keys)),
    )
