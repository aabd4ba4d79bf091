"""Rules over SKILL.md's description and body and the package's references: links that resolve,
discoverability of the description, reliability of the instructions, and efficiency budgets."""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

from skillworks.check.context import TextMap
from skillworks.check.lowered import CaselessPattern, lower_same_offsets
from skillworks.check.model import Finding
from skillworks.check.reader import SkillFile, SkillSource
from skillworks.check.rules import finding
from skillworks.check.tokens import estimate_tokens

TOKEN_BUDGET = 5000
LINE_BUDGET = 500
BUNDLE_MAX = 10 * 1024 * 1024
FILE_MAX = 1024 * 1024
REFERENCE_TOC_LINES = 300

_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_BARE_PATH = re.compile(r"(?<![\w/.-])((?:scripts|references|reference|assets|templates|docs)/[\w./-]*\w)")
_WHEN = re.compile(
    r"\b(use (it |this )?(when|for|if|to|whenever|on)|when(ever)?\b|trigger|invoke|if the user|for tasks?|"
    r"applies to|useful for|asks? (to|for|about))",
    re.I,
)
_GENERIC = re.compile(
    r"\b(helps? (you )?with (various|many|different|general|all kinds of)|various tasks|general[- ]purpose|"
    r"a (useful|helpful|handy) (skill|tool)|does (many|various) things|misc(ellaneous)?\b|utility skill)",
    re.I,
)
_FIRST_PERSON = re.compile(r"^\s*(i |i'm |i can|i will|we |you can|you should|this skill lets you)", re.I)
_MARKUP = re.compile(r"<[a-zA-Z/][^>]*>")
_GENERIC_NAMES = frozenset(
    {
        "helper",
        "helpers",
        "utils",
        "util",
        "utility",
        "utilities",
        "tools",
        "tool",
        "skill",
        "my-skill",
        "misc",
        "general",
        "assistant",
        "stuff",
        "test",
        "example",
        "documents",
        "data",
        "files",
        "code",
    }
)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "use",
        "used",
        "uses",
        "using",
        "when",
        "with",
        "which",
        "you",
        "your",
        "will",
        "what",
        "whenever",
        "should",
        "skill",
        "skills",
        "task",
        "tasks",
        "user",
        "users",
        "asks",
        "ask",
        "help",
        "helps",
        "any",
        "all",
        "also",
        "etc",
    ]
)
# searched case-insensitively (see lowered.py): SKILL.md and long reference files, for every skill
_ERROR_GUIDANCE = CaselessPattern(
    r"\b(if (it|this|that|the \w+|\w+) (fails?|errors?|is missing|does not|doesn't|cannot|can't)|on (failure|error)|"
    r"troubleshoot\w*|error handling|errors?\b.{0,40}\b(retry|fall ?back|instead)|fall ?back|when .{0,40}fails?|"
    r"common (errors|problems|issues)|if .{0,60}(not found|missing|invalid|fails?|errors?)|"
    r"exits? with (a )?(non-zero|status [1-9])|^#{1,6}\s.*\b(errors?|troubleshooting|failures?|fallbacks?|recovery)\b)",
    re.M,
)
_VALIDATION = CaselessPattern(
    r"\b(verify|verif(y|ies|ied|ication)|validat\w+|check (that|the (output|result))|sanity[- ]check|"
    r"confirm (that|the)|run the tests?|assert|make sure|double-check)"
)
_LIMITATIONS = CaselessPattern(
    r"\b(limitations?|do not use|don't use|not suitable|not for\b|caveats?|known issues|out of scope|"
    r"when not to use|does not (support|handle|work)|unsupported|cannot handle)"
)
_HOME_PATH = re.compile(r"(?<![\w.])(/Users/[A-Za-z][\w.-]*|/home/(?!user\b)[a-z][\w.-]*|C:\\\\?Users\\\\?\w+)")
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv pip|python3? -m pip) install ((?:[^\n;&|#`]*))")
_NPM_INSTALL = re.compile(r"\bnpm (?:install|i)(?: -g| --global| -D| --save-dev)* ((?:[^\n;&|#`]*))")
_PIP_PINNED = re.compile(r"(==|~=|\.whl$|^-|^\.|/|\[)")
_NPM_PINNED = re.compile(r"(^-|.@\d|^\.|/)")


# words before a bare path that make it a file of the user's project, not of the skill ("save the plan to docs/...")
_OUTPUT_CUE = re.compile(
    r"\b(save|saves|saved|write|writes|written|create|creates|created|generate|generates|output|outputs|export|"
    r"exports|store|stores|commit|in the (?:user'?s|project|repo\w*))\W*(?:\S+\s+){0,3}$",
    re.I,
)
_SKILL_DIRS = ("scripts/", "references/", "reference/", "assets/")


def _links(text: str, own_dirs: frozenset[str] = frozenset()) -> set[str]:
    """Relative file targets of the skill linked or named in Markdown text (no URLs, no anchors). A bare path
    (not a link) names the skill's own file when its top directory exists in the skill or is one the
    specification gives skills (scripts/, references/, assets/), and it is not the target of an output verb
    ("save the plan to docs/plans/plan.md" names a file of the user's project)."""
    out: set[str] = set()
    for m in _LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-zA-Z][a-zA-Z+.-]*:", target) or target.startswith(("#", "/", "~")):
            continue
        out.add(target.split("#", 1)[0])
    for m in _BARE_PATH.finditer(text):
        path = m.group(1)
        if path.split("/", 1)[0] in own_dirs or path.startswith(_SKILL_DIRS):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if not _OUTPUT_CUE.search(text[line_start : m.start()]):
                out.add(path)
    return {t for t in out if t}


# a path presented as an example for some other skill, not as a file of this one: a list item that starts
# "Examples:", a path right after "e.g." or "for example", a path followed by "would be" in its sentence
# ("A `references/schema.md` file documenting the tables would be helpful")
_EXAMPLE_ITEM = re.compile(r"^\W*examples?\W{0,4}:", re.I)
_EXAMPLE_JUST_BEFORE = re.compile(r"\b(?:e\.g\.|for (?:example|instance))[,:]?\s*[`\"']?$", re.I)
_HYPOTHETICAL_AFTER = re.compile(r"^[^.!?\n]*\b(?:would|could) be\b", re.I)


def _only_as_example(body: str, target: str) -> bool:
    """True when every mention of `target` as a link or a path presents it as an example: a Markdown link
    inside a fenced code block (a sample SKILL.md or template: code blocks are not rendered), or a path
    (not a link) in a list item that starts "Examples:", right after "e.g." / "for example", or followed
    by "would be" in its sentence. A bare path inside a code block (`python scripts/run.py`) is a command
    that uses the skill's own file, and a Markdown link in prose claims the file exists: both still count."""
    tm: TextMap | None = None
    pos = body.find(target)
    mentions = 0
    while pos >= 0:
        line_start = body.rfind("\n", 0, pos) + 1
        line_end = body.find("\n", pos)
        before = body[line_start:pos]
        after = body[pos + len(target) : len(body) if line_end < 0 else line_end]
        link = before.endswith("](") or before.endswith("](<")
        if link or "/" in target:  # a mention the rule reads (a bare file name is not)
            mentions += 1
            tm = tm or TextMap(body, None)
            if link:
                if not tm.in_fence(pos):
                    return False
            elif not (
                _EXAMPLE_ITEM.search(before) or _EXAMPLE_JUST_BEFORE.search(before) or _HYPOTHETICAL_AFTER.search(after)
            ):
                return False
        pos = body.find(target, pos + len(target))
    return mentions > 0


def _norm(rel: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath(rel).parts:
        if part == "..":
            if parts:
                parts.pop()
            else:
                return ""
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _line_of(text: str, needle: str, start_line: int) -> int | None:
    pos = text.find(needle)
    return None if pos < 0 else start_line + text.count("\n", 0, pos)


def _imported(rel: str, python: list[tuple[str, str]]) -> bool:
    """`rel` is a package's `__init__.py` or a module another Python file of the skill imports: it is
    reached through the scripts that import it, so SKILL.md need not name it."""
    path = PurePosixPath(rel)
    if path.name == "__init__.py":
        return True
    stem = re.escape(path.stem)
    pattern = re.compile(
        rf"^\s*(?:from\s+[\w.]*\b{stem}\b[\w.]*\s+import\b"  # from pkg.stem import x, from .stem import x
        rf"|from\s+[\w.]+\s+import\s+(?:\([\w\s,]*|[ \t\w,]*)\b{stem}\b"  # from pkg import stem
        rf"|import\s+[ \t\w.,]*\b{stem}\b)",  # import pkg.stem, import a, stem
        re.M,
    )
    return any(pattern.search(text) for other, text in python if other != rel and path.stem in text)


def check_references(src: SkillSource) -> list[Finding]:
    """reference-missing, reference-nested, reference-orphan, script-unreferenced."""
    out: list[Finding] = []
    rel = src.skill_md_rel
    files = {f.rel: f for f in src.files}
    dirs = {str(parent) for f in (*files, *src.nested_files) for parent in PurePosixPath(f).parents}
    own_dirs = frozenset(d for d in dirs if "/" not in d and d != ".")
    direct: set[str] = set()
    for target in sorted(_links(src.body, own_dirs)):
        path = _norm(target)
        if not path:
            continue
        if path in src.nested_files:
            continue  # a file of a nested skill
        if path in files or path.rstrip("/") in dirs:
            direct.add(path)
            continue
        if any(ch in path for ch in "*<>{}$") or path.endswith("/"):
            continue  # a pattern or placeholder, not a file
        if _only_as_example(src.body, target):
            continue  # a sample path for another skill, or a link in a sample SKILL.md
        out.append(
            finding(
                "reference-missing",
                f"linked file {target!r} does not exist",
                rel,
                _line_of(src.body, target, src.body_start_line),
                target,
            )
        )
    nested: dict[str, str] = {}
    for f in src.files:
        if f.rel in direct and f.text is not None and f.is_reference:
            base = str(PurePosixPath(f.rel).parent)
            for target in _links(f.text, own_dirs):
                path = _norm(f"{base}/{target}" if base != "." else target)
                if path in files and path not in direct and path != f.rel:
                    nested.setdefault(path, f.rel)
    for path, via in sorted(nested.items()):
        if files[path].is_reference:
            out.append(finding("reference-nested", f"{path} is linked only from {via}, not from SKILL.md", path))
    mentioned = src.body
    python = [(f.rel, f.text) for f in src.files if f.language == "python" and f.text is not None]
    for f in src.files:
        if f.rel in direct or f.rel in nested:
            continue
        name = PurePosixPath(f.rel).name
        if f.is_script and f.language is not None:
            if name not in mentioned and not (f.language == "python" and _imported(f.rel, python)):
                out.append(finding("script-unreferenced", f"{f.rel} is not mentioned in SKILL.md", f.rel))
        elif f.is_reference and f.rel.split("/", 1)[0] in ("references", "reference", "docs") and name not in mentioned:
            out.append(finding("reference-orphan", f"{f.rel} is not linked from SKILL.md", f.rel))
    return out


def check_description(src: SkillSource) -> list[Finding]:
    fm = src.frontmatter or {}
    desc, name = fm.get("description"), fm.get("name")
    rel, line = src.skill_md_rel, src.key_lines.get("description")
    out: list[Finding] = []
    if isinstance(name, str) and name.strip():
        n = name.strip().lower()
        if n in _GENERIC_NAMES:
            out.append(
                finding(
                    "name-generic", f"'name' {n!r} does not say what the skill does", rel, src.key_lines.get("name")
                )
            )
        if "anthropic" in n or "claude" in n:
            out.append(
                finding("name-reserved-word", f"'name' {n!r} contains a reserved word", rel, src.key_lines.get("name"))
            )
    if not isinstance(desc, str) or not desc.strip():
        return out
    text = " ".join(desc.split())
    if len(text) < 60:
        out.append(finding("description-too-short", f"description is {len(text)} characters", rel, line, text))
    elif len(text) > 600:
        out.append(finding("description-long", f"description is {len(text)} characters", rel, line))
    if not _WHEN.search(text):
        out.append(finding("description-no-when", "description does not say when to use the skill", rel, line, text))
    m = _GENERIC.search(text)
    if m:
        out.append(finding("description-generic", f"generic phrase {m.group()!r}", rel, line, text))
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9+#.-]{2,}", text)} - _STOP
    if len(words) < 5:
        out.append(finding("description-no-keywords", f"only {len(words)} distinct content words", rel, line, text))
    if _FIRST_PERSON.search(text):
        out.append(finding("description-first-person", "write the description in third person", rel, line, text))
    m = _MARKUP.search(text)
    if m:
        out.append(finding("description-markup", f"markup {m.group()!r} in the description", rel, line, m.group()))
    return out


def _strip_code(body: str) -> str:
    return re.sub(r"```.*?```", " ", body, flags=re.S)


def _indented_or_example(prose: str) -> bool:
    return bool(re.search(r"^(    |\t)\S", prose, re.M) or re.search(r"\bexample", prose, re.I))


def check_body(src: SkillSource) -> list[Finding]:
    """body-empty, body-no-structure, reliability guidance in the prose, home paths, pinned installs."""
    rel, body = src.skill_md_rel, src.body
    if src.frontmatter is None:
        return []
    if len(body.strip()) < 20:
        return [finding("body-empty", "SKILL.md has no instructions below the frontmatter", rel, src.body_start_line)]
    out: list[Finding] = []
    texts = [body, *(f.text for f in src.files if f.text is not None and f.is_reference)]
    lows: dict[int, str | None] = {}  # lower-cased texts, made when first searched

    def anywhere(regex: CaselessPattern) -> bool:  # SKILL.md first: most skills answer there, refs are long
        for i, t in enumerate(texts):
            if i not in lows:
                lows[i] = lower_same_offsets(t)
            if regex.search(t, lows[i]):
                return True
        return False

    if not re.search(r"^#{1,6} \S", body, re.M):
        out.append(finding("body-no-structure", "no Markdown headings in SKILL.md", rel))
    if not anywhere(_ERROR_GUIDANCE):
        out.append(finding("no-error-guidance", "no guidance on what to do when a step fails", rel))
    if not anywhere(_VALIDATION):
        out.append(finding("no-validation-step", "no step verifies the result", rel))
    if not anywhere(_LIMITATIONS):
        out.append(finding("no-limitations", "no limitations or 'when not to use' stated", rel))
    if not any("```" in t for t in texts) and not _indented_or_example(_strip_code(body)):
        out.append(finding("no-examples", "no example or code block", rel))
    for f in [None, *src.files]:
        text = body if f is None else f.text
        if text is None or (f is not None and not (f.is_script or f.is_reference)):
            continue
        frel = rel if f is None else f.rel
        start = src.body_start_line if f is None else 1
        m = _HOME_PATH.search(text) if "/home/" in text or "Users" in text else None  # literals of every match
        if m:
            out.append(
                finding(
                    "script-hardcoded-path",
                    f"hard-coded home path {m.group()!r}",
                    frel,
                    start + text.count("\n", 0, m.start()),
                    m.group(),
                )
            )
        out.extend(_unpinned_installs(text, frel, start))
    for f in src.files:
        if PurePosixPath(f.rel).name.startswith("requirements") and f.suffix == ".txt" and f.text is not None:
            for i, raw in enumerate(f.text.splitlines(), 1):
                line = raw.split("#", 1)[0].strip()
                if line and not line.startswith("-") and not re.search(r"(==|~=|===|@ )", line):
                    out.append(finding("deps-unpinned", f"requirement {line!r} has no pinned version", f.rel, i, raw))
    return out


def _unpinned_installs(text: str, rel: str | None, start: int) -> list[Finding]:
    out: list[Finding] = []
    for literal, regex, pinned in (
        (" install ", _PIP_INSTALL, _PIP_PINNED),
        ("npm i", _NPM_INSTALL, _NPM_PINNED),
    ):
        if literal not in text:  # every match holds this literal: skip the regex pass over the text
            continue
        for m in regex.finditer(text):
            pkgs = [p.strip("\"'") for p in m.group(1).split()]
            if "-r" in pkgs or "--requirement" in pkgs:
                continue
            loose = [p for p in pkgs if p and not pinned.search(p) and not p.startswith("$")]
            if loose:
                line = start + text.count("\n", 0, m.start())
                out.append(
                    finding(
                        "deps-unpinned",
                        f"installs {', '.join(loose[:3])} without a version",
                        rel,
                        line,
                        m.group().strip(),
                    )
                )
                break
    return out


def check_efficiency(src: SkillSource) -> tuple[list[Finding], int]:
    """Token/line budgets, duplicates, bundle size. Returns findings and SKILL.md's token estimate."""
    out: list[Finding] = []
    rel, text = src.skill_md_rel, src.text or ""
    tokens = estimate_tokens(text)
    if tokens > TOKEN_BUDGET:
        out.append(finding("skill-md-token-budget", f"SKILL.md is about {tokens} tokens (budget {TOKEN_BUDGET})", rel))
    n_lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    if n_lines > LINE_BUDGET:
        out.append(finding("skill-md-too-many-lines", f"SKILL.md has {n_lines} lines (budget {LINE_BUDGET})", rel))
    out.extend(_duplicates(src))
    if src.total_bytes > BUNDLE_MAX:
        out.append(finding("bundle-too-large", f"bundle is {src.total_bytes / 1e6:.1f} MB", None))
    for f in src.files:
        if f.size > FILE_MAX:
            out.append(finding("file-too-large", f"{f.rel} is {f.size / 1e6:.1f} MB", f.rel))
        if f.is_reference and f.text is not None and f.text.count("\n") > REFERENCE_TOC_LINES:
            head = f.text[:3000].lower()
            if "contents" not in head and "toc" not in head and len(re.findall(r"^\s*[-*] \[", head, re.M)) < 3:
                out.append(
                    finding(
                        "reference-no-toc", f"{f.rel} has {f.text.count(chr(10))} lines and no contents list", f.rel
                    )
                )
    return out, tokens


def _paragraph_hashes(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for para in re.split(r"\n\s*\n", text):
        norm = " ".join(para.split())
        if len(norm) >= 160:
            out[hashlib.blake2b(norm.encode(), digest_size=12).hexdigest()] = norm
    return out


def _duplicates(src: SkillSource) -> list[Finding]:
    body = _paragraph_hashes(src.body)
    if not body:
        return []
    out: list[Finding] = []
    refs: list[SkillFile] = [f for f in src.files if f.is_reference and f.text is not None]
    for f in refs:
        assert f.text is not None
        common = body.keys() & _paragraph_hashes(f.text).keys()
        if common:
            sample = body[sorted(common)[0]]
            out.append(
                finding(
                    "duplicated-content",
                    f"{len(common)} paragraph(s) of SKILL.md repeated in {f.rel}",
                    src.skill_md_rel,
                    _line_of(src.body, sample[:40], src.body_start_line),
                    sample,
                )
            )
    return out
