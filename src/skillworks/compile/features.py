"""Structural features of a SKILL.md body: headings, ordered steps, fenced code, command lines, script
references, function signatures, setup and verification cues. Pure text analysis, offline and
deterministic; line numbers are 1-based in SKILL.md (frontmatter included)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skillworks.check.tokens import estimate_tokens
from skillworks.compile.executables import is_executable
from skillworks.skills.package import SkillPackage

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_ORDERED = re.compile(r"^(\s{0,3})(\d{1,2})[.)]\s+(.*)$")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_SIGNATURE = re.compile(
    r"\b(?:def|function|fn|func)\s+[A-Za-z_]\w*\s*\(|^\s*[A-Za-z_][\w.]*\([^()]*\)\s*(?:->|:)\s*\w",
    re.MULTILINE,
)
_SHELL_LANGS = frozenset({"sh", "bash", "shell", "console", "zsh", ""})
_COMMAND_START = re.compile(
    r"^(?:\$\s*)?(?:sudo\s+)?(?:python3?|bash|sh|node|npx|npm|pip3?|uv|git|curl|wget|make|docker|podman|gawk|awk|"
    r"sed|grep|jq|find|cat|ls|mkdir|cp|mv|rm|tar|unzip|zip|psql|sqlite3|ffmpeg|convert|pandoc|go|cargo|"
    r"ruby|perl|Rscript|java|kubectl|terraform|gh|tmux|obsidian|gws|aws|gcloud|az|helm|yarn|pnpm|deno|bun|ollama|"
    r"dotnet|mvn|gradle|railway|vercel|supabase|firebase|wrangler|flyctl|heroku|brew|apt-get|apt|"
    r"scripts/|\./)\S*"
)
_SETUP = re.compile(
    r"\b(?:pip3? install|npm (?:install|i)\b|apt(?:-get)? install|brew install|cargo install|go install|"
    r"requirements\.txt|prerequisites?|setup|installation|install(?:ed)? first|requires? (?:python|node))",
    re.IGNORECASE,
)
_VERIFY = re.compile(
    r"\b(?:verif(?:y|ication)|validat(?:e|ion)|sanity[- ]check|check (?:that|the result|the output)|assert|"
    r"confirm that|tests? pass)\b",
    re.IGNORECASE,
)
_SHELL_WORD = re.compile(r"^(?:\$\s*)?[a-z][\w.-]*(?:\s+\S|$)")
_NUMBERED_HEADING = re.compile(r"^(?:step|phase|stage)\s*\d+[a-z]?\b", re.I)
_PERSONA = re.compile(
    r"\byou are (?:an? |the )?(?:\w+ ){0,3}(?:expert|specialist|engineer|architect|strategist|manager)\b|"
    r"\byour (?:identity|core mission|personality)\b|\bagent personality\b",
    re.I,
)
_TOOL_NAME = re.compile(r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+){2,}\b")
_PROGRAM_LANGS = frozenset(
    {
        "python",
        "py",
        "javascript",
        "js",
        "typescript",
        "ts",
        "tsx",
        "jsx",
        "java",
        "csharp",
        "cs",
        "c#",
        "go",
        "rust",
        "kotlin",
        "swift",
        "cpp",
        "c",
        "ruby",
        "php",
        "scala",
        "r",
        "sql",
        "html",
        "css",
        "xml",
    }
)
_STEP_HEADINGS = re.compile(r"\b(?:workflow|steps?|procedure|how to|process|instructions|quick ?start)\b", re.I)
_DISPATCH_HEADINGS = re.compile(r"\b(?:commands?|operations?|subcommands?|usage|api|functions?|tools?)\b", re.I)
_REFERENCE_HEADINGS = re.compile(
    r"\b(?:reference|glossary|conventions?|rules?|guidelines?|table|cheat ?sheet|overview|background|faq)\b", re.I
)


@dataclass(frozen=True)
class Heading:
    level: int
    title: str
    line: int


@dataclass(frozen=True)
class CodeBlock:
    lang: str
    text: str
    line_start: int  # the opening fence
    line_end: int  # the closing fence
    section: str


@dataclass(frozen=True)
class ListItem:
    number: int
    text: str  # the item with its continuation lines
    line_start: int
    line_end: int
    section: str


@dataclass(frozen=True)
class CommandLine:
    text: str
    line: int
    section: str
    in_block: bool


@dataclass
class Features:
    """What the classifier and the lowerings read. `offset` maps body line i (0-based) to SKILL.md line
    i + offset + 1."""

    words: int
    tokens: int
    description: str = ""  # the frontmatter description (its wording is a shape cue)
    headings: list[Heading] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    ordered: list[ListItem] = field(default_factory=list)
    bullets: int = 0
    commands: list[CommandLine] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # package scripts
    scripts_referenced: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # package reference files
    links: int = 0
    table_rows: int = 0
    signatures: int = 0
    setup_cues: int = 0
    verify_cues: int = 0
    step_sections: int = 0
    dispatch_sections: int = 0
    reference_sections: int = 0
    longest_run: int = 0  # the longest run of consecutively numbered items
    step_headings: int = 0  # headings such as "Step 2: ..." / "Phase 1" / "Stage 3"
    persona_cues: int = 0  # "You are an expert ...", "Your Identity", "Use this skill when" boilerplate
    program_blocks: int = 0  # fenced code in a programming language (library usage, not commands)
    tool_names: int = 0  # distinct TOOL_NAME_IDENTIFIERS (an MCP tool menu)
    offset: int = 0
    body: str = ""  # the SKILL.md body the features were read from


def _body_offset(package: SkillPackage) -> int:
    """Number of SKILL.md lines before the body (frontmatter)."""
    text = (package.root / "SKILL.md").read_text(encoding="utf-8", errors="replace")
    head = text[: len(text) - len(package.body)] if text.endswith(package.body) else ""
    return head.count("\n")


def _runs(items: list[ListItem]) -> int:
    best = run = 0
    previous: ListItem | None = None
    for item in items:
        if previous is not None and item.number == previous.number + 1 and item.section == previous.section:
            run += 1
        else:
            run = 1
        best = max(best, run)
        previous = item
    return best


def extract_features(package: SkillPackage) -> Features:
    offset = _body_offset(package)
    lines = package.body.splitlines()
    feats = Features(
        words=len(package.body.split()),
        tokens=estimate_tokens(package.body),
        description=package.description,
        offset=offset,
        body=package.body,
    )
    feats.scripts = [a.path for a in package.assets if is_executable(package.root, a.path)]
    feats.references = [a.path for a in package.assets if a.kind == "reference"]
    section = ""
    fence: tuple[str, str, int] | None = None  # (marker, lang, start index)
    block_lines: list[str] = []
    item: list[str] = []
    item_meta: tuple[int, int, int] | None = None  # (number, start index, indent)

    def close_item(end: int) -> None:
        nonlocal item, item_meta
        if item_meta is not None:
            number, start, _ = item_meta
            feats.ordered.append(
                ListItem(number, " ".join(t.strip() for t in item), start + offset + 1, end + offset + 1, section)
            )
        item, item_meta = [], None

    for i, line in enumerate(lines):
        if fence is not None:
            if line.strip().startswith(fence[0]) and line.strip().strip(fence[0][0]) == "":
                text = "\n".join(block_lines)
                feats.code_blocks.append(CodeBlock(fence[1], text, fence[2] + offset + 1, i + offset + 1, section))
                if fence[1].lower() in _SHELL_LANGS:
                    shell = fence[1].lower() in ("sh", "bash", "shell", "zsh", "console")
                    for j, code_line in enumerate(block_lines):
                        stripped = code_line.strip()
                        # in a block marked as shell any `word args` line is a command (gh, tmux, obsidian...)
                        head_ok = _COMMAND_START.match(stripped) or (shell and _SHELL_WORD.match(stripped))
                        if stripped and not stripped.startswith("#") and head_ok:
                            feats.commands.append(
                                CommandLine(stripped.removeprefix("$ "), fence[2] + j + offset + 2, section, True)
                            )
                feats.signatures += len(_SIGNATURE.findall(text))
                if fence[1].lower() in _PROGRAM_LANGS:
                    feats.program_blocks += 1
                fence, block_lines = None, []
                if item_meta is not None:
                    item.append(text)
            else:
                block_lines.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = (opened.group(1), opened.group(2) or "", i)
            continue
        heading = _HEADING.match(line)
        if heading:
            close_item(i - 1)
            section = heading.group(2).strip()
            feats.headings.append(Heading(len(heading.group(1)), section, i + offset + 1))
            if _STEP_HEADINGS.search(section):
                feats.step_sections += 1
            if _NUMBERED_HEADING.match(section):
                feats.step_headings += 1
            if _DISPATCH_HEADINGS.search(section):
                feats.dispatch_sections += 1
            if _REFERENCE_HEADINGS.search(section):
                feats.reference_sections += 1
            continue
        ordered = _ORDERED.match(line)
        if ordered and len(ordered.group(1)) <= 1:
            close_item(i - 1)
            item, item_meta = [ordered.group(3)], (int(ordered.group(2)), i, len(ordered.group(1)))
        elif item_meta is not None and line.strip() and (line.startswith("   ") or line.startswith("\t")):
            item.append(line)
        elif item_meta is not None and not line.strip():
            pass  # a blank line inside an item; the item ends at the next non-indented line
        else:
            close_item(i - 1)
        if _BULLET.match(line) and not ordered:
            feats.bullets += 1
        if _TABLE_ROW.match(line):
            feats.table_rows += 1
        feats.links += len(_LINK.findall(line))
        for span in _INLINE_CODE.findall(line):
            if _COMMAND_START.match(span.strip()) and " " in span.strip():
                feats.commands.append(CommandLine(span.strip(), i + offset + 1, section, False))
        feats.signatures += len(_SIGNATURE.findall(" ".join(_INLINE_CODE.findall(line))))
        feats.setup_cues += len(_SETUP.findall(line))
        feats.verify_cues += len(_VERIFY.findall(line))
    close_item(len(lines) - 1)
    body = package.body
    feats.scripts_referenced = [s for s in feats.scripts if s in body or s.rsplit("/", 1)[-1] in body]
    feats.longest_run = _runs(feats.ordered)
    feats.persona_cues = len(_PERSONA.findall(body))
    feats.tool_names = len(set(_TOOL_NAME.findall(body)))
    return feats
