"""Where a piece of skill text sits: the kind of file, fenced example or prose, inside a quotation, next
to words that present it as an attack or a warning. The security scan uses this to tell a skill that
*gives* a dangerous instruction from one that *describes* it."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import PurePosixPath

from skillworks.check.model import Context

_SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1"})
_SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".ps1"})
_DOC_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".mdx"})
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "fixtures", "testdata", "test_data", "spec", "evals", "e2e"})
_ASSET_DIRS = frozenset({"assets", "templates", "template", "static", "public"})
# Claude Code's settings files: shipped in a skill (`.claude/settings.json`, an asset to copy into place) they
# are configuration the agent obeys, not a document
_AGENT_SETTINGS = frozenset({"settings.json", "settings.local.json"})
_TEST_NAME = re.compile(r"^(test_.*|.*_test\.\w+|.*\.(?:test|spec)\.\w+|conftest\.py)$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.M)

# words that present the surrounding text as something to avoid, detect or study rather than do
CUE = re.compile(
    r"\b(avoid\w*|never|don'?t|do not|must not|should not|instead of|rather than|e\.g\.|for example|such as|"
    r"attack(?:s|er|ers)?|malicious|injections?|jailbreaks?|red[- ]team\w*|payloads?|exploit\w*|detect\w*|"
    r"block(?:s|ed|ing)?|flag(?:s|ged)?|warn\w*|vulnerab\w*|phishing|adversar\w*|suspicious|dangerous|"
    r"insecure|unsafe|bad|wrong|anti-?pattern|guardrails?|sanitiz\w*|reject\w*|refuse\w*|pentest\w*|xss|ssrf)\b",
    re.I,
)

# "Do not skip this step", "never forget to": a negation that insists on the step rather than warns against it
_EMPHASIS = re.compile(r"\s+(?:skip|forget|omit|miss|hesitate|fail|neglect)\b", re.I)


def file_context(rel: str | None) -> Context:
    """The context of a whole file, from its path inside the skill (None is SKILL.md)."""
    if rel is None:
        return Context.PROSE
    path = PurePosixPath(rel)
    parts = {p.lower() for p in path.parts[:-1]}
    suffix = path.suffix.lower()
    # a test by its name only where a test runner picks it up (not a shell script, not under scripts/):
    # the name is the author's choice, so `scripts/test_env.sh` is still a script the agent runs
    named_test = bool(_TEST_NAME.match(path.name.lower())) and suffix not in _SHELL_SUFFIXES
    if parts & _TEST_DIRS or (named_test and path.parts[0] != "scripts"):
        return Context.TEST
    if path.name.lower() == "package.json":
        return Context.SCRIPT  # npm runs its lifecycle scripts (preinstall, postinstall) on install
    if path.name.lower() in _AGENT_SETTINGS:
        return Context.SCRIPT  # the agent's own settings: its permission mode and hooks take effect once installed
    if suffix in _SCRIPT_SUFFIXES or (path.parts[0] == "scripts" and suffix not in _DOC_SUFFIXES):
        return Context.SCRIPT
    if parts & _ASSET_DIRS or suffix not in _DOC_SUFFIXES:
        return Context.ASSET
    return Context.PROSE


@dataclass(frozen=True)
class Spot:
    """Where one match sits."""

    context: Context
    line: int
    line_text: str
    quoted: bool
    cue: str | None  # a word next to the match that presents it as an attack or a warning


class TextMap:
    """Line starts and fenced-code spans of one text, for locating many matches cheaply."""

    def __init__(self, text: str, rel: str | None, start_line: int = 1) -> None:
        self.text = text
        self.start_line = start_line
        self.base = file_context(rel)
        # built on first use: most texts have no match at all, and these passes cost more than the search
        self._starts: list[int] | None = None
        self._fence_spans: list[tuple[int, int]] | None = None

    @property
    def _line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0, *(m.end() for m in re.finditer("\n", self.text))]
        return self._starts

    @property
    def _fences(self) -> list[tuple[int, int]]:
        if self._fence_spans is None:
            text, fences = self.text, []
            if self.base is Context.PROSE and ("```" in text or "~~~" in text):
                opened: tuple[int, str] | None = None
                for m in _FENCE.finditer(text):
                    mark = m.group(1)
                    if opened is None:
                        opened = (m.start(), mark)
                    elif mark[0] == opened[1][0] and len(mark) >= len(opened[1]):
                        fences.append((opened[0], m.end()))
                        opened = None
                if opened is not None:
                    fences.append((opened[0], len(text)))
            self._fence_spans = fences
        return self._fence_spans

    def line_index(self, pos: int) -> int:
        return bisect_right(self._line_starts, pos) - 1

    def line(self, pos: int) -> int:
        return self.start_line + self.line_index(pos)

    def line_text(self, pos: int) -> str:
        i = self.line_index(pos)
        begin = self._line_starts[i]
        end = self._line_starts[i + 1] - 1 if i + 1 < len(self._line_starts) else len(self.text)
        return self.text[begin:end]

    def in_fence(self, pos: int) -> bool:
        return any(a <= pos < b for a, b in self._fences)

    def fence_at(self, pos: int) -> tuple[int, int, str] | None:
        """The fenced block holding `pos`: where its body starts and ends, and its info string's first word
        (the language, lower case; "" when untagged)."""
        for a, b in self._fences:
            if a <= pos < b:
                open_end = self.text.find("\n", a, b)
                if open_end < 0:
                    return None
                info = self.text[a:open_end].strip().lstrip("`~").strip().split()
                last = self.text.rfind("\n", open_end, b) + 1  # the closing marker's line, if closed
                body_end = last if last > open_end + 1 and _FENCE.match(self.text, last) else b
                return open_end + 1, max(open_end + 1, body_end), (info[0].lower() if info else "")
        return None

    def spot(self, start: int, end: int, *, cue_lines: int = 1, backticks_quote: bool = True) -> Spot:
        """Locate text[start:end]: its context, whether it is quoted, and a warning word around it (on its
        line outside the match, or in the `cue_lines` lines before). With `backticks_quote` false, inline
        code (`...`) is not quoting: a command in backticks is still the command to run."""
        i = self.line_index(start)
        line_begin = self._line_starts[i]
        line_text = self.line_text(start)
        context = self.base
        if context is Context.PROSE and self.in_fence(start):
            context = Context.EXAMPLE
        before = line_text[: start - line_begin]
        after = line_text[end - line_begin :]
        quoted = _is_quoted(before, after, backticks_quote)
        # a command in a script's string literal (os.system("..."), ["crontab", f]) is still what runs; and
        # in a fenced block quotes are the code's syntax (a JSON value, an echo'd line written to a file),
        # not a sentence quoting someone: `spot.quoted` says so, for the phrase rules (severity.assess)
        if quoted and (context is Context.PROSE or (context is Context.SCRIPT and backticks_quote)):
            context = Context.QUOTED
        around = before + " " + after
        if cue_lines:
            first = max(0, i - cue_lines)
            around = self.text[self._line_starts[first] : line_begin] + " " + around
        cue = next((m.group().lower() for m in CUE.finditer(around) if not _EMPHASIS.match(around, m.end())), None)
        return Spot(context, self.start_line + i, line_text.strip(), quoted, cue)


_OPEN_CLOSE = (("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u00ab", "\u00bb"))


def _is_quoted(before: str, after: str, backticks: bool = True) -> bool:
    """True when the match is enclosed in quotes (or backticks) on its line."""
    for q in ('"', "`") if backticks else ('"',):
        if before.count(q) % 2 == 1 and q in after:
            return True
    for opening, closing in _OPEN_CLOSE:
        if before.rfind(opening) > before.rfind(closing) and closing in after:
            return True
    # single quotes: only when the quote opens right before a word (not an apostrophe in "don't")
    m = re.search(r"(?:^|[\s(\[:=,])'[^']*$", before)
    return bool(m) and "'" in after
