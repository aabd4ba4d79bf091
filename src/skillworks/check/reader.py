"""A tolerant reader for skill directories: every problem becomes a Finding, nothing raises.

Unlike `skills.package.load_skill` (which stops at the first problem), this reader keeps going so a
scan over a messy tree reports everything. Frontmatter values are read the way a strict YAML loader
(and the reference validator) sees them: every scalar is a string.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from skillworks.check.model import Finding, Severity
from skillworks.check.rules import finding
from skillworks.skills.package import SKILL_MD_MAX_BYTES

TEXT_MAX_BYTES = 2 << 20  # other files larger than this are not read for content checks
_IGNORED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", "node_modules", ".venv", ".mypy_cache"})
_TEXT_SUFFIXES = frozenset(
    {
        ".md",
        ".txt",
        ".py",
        ".sh",
        ".bash",
        ".zsh",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".rb",
        ".pl",
        ".ps1",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".cfg",
        ".ini",
        ".csv",
        ".tsv",
        ".xml",
        ".html",
        ".htm",
        ".sql",
        ".r",
        ".go",
        ".rs",
        ".java",
        ".c",
        ".h",
        ".cpp",
        ".lua",
        ".php",
        ".env",
        ".rst",
        "",
    }
)
_SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1"})

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class SkillFile:
    """A file of the skill other than SKILL.md. `text` is None for binaries and unreadable files."""

    rel: str
    path: Path
    size: int
    text: str | None
    suffix: str = field(init=False)
    is_script: bool = field(init=False)
    is_reference: bool = field(init=False)

    def __post_init__(self) -> None:
        name = self.rel.rsplit("/", 1)[-1]
        dot = name.rfind(".")
        self.suffix = name[dot:].lower() if dot > 0 else ""
        self.is_script = self.rel.startswith("scripts/") or self.suffix in _SCRIPT_SUFFIXES
        top = self.rel.split("/", 1)[0]
        self.is_reference = self.suffix in (".md", ".txt", ".rst") and (
            top in ("references", "reference", "docs") or "/" not in self.rel
        )

    @property
    def language(self) -> str | None:
        if self.suffix == ".py":
            return "python"
        if self.suffix in (".sh", ".bash"):
            return "shell"
        if self.text is not None and self.suffix == "":
            first = self.text.split("\n", 1)[0]
            if first.startswith("#!"):
                if "python" in first:
                    return "python"
                if "bash" in first or first.rstrip().endswith("/sh"):
                    return "shell"
        return None


@dataclass
class SkillSource:
    """What the reader could make of one skill directory."""

    root: Path
    skill_md_rel: str | None = None
    text: str | None = None
    frontmatter: dict[str, Any] | None = None  # strings, lists and dicts of strings
    key_lines: dict[str, int] = field(default_factory=dict)  # frontmatter key -> 1-based line
    body: str = ""
    body_start_line: int = 1
    files: list[SkillFile] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    total_bytes: int = 0
    nested_skills: list[str] = field(default_factory=list)  # sub-directories that are skills of their own
    nested_files: set[str] = field(default_factory=set)  # their files: they resolve links, not checked here

    @property
    def readable(self) -> bool:
        """True when SKILL.md text is available for content checks."""
        return self.text is not None


_FLOW_STYLE = "flow-style collections ({...} or [...]) are not allowed"
_FLOW_STYLE_REASON = (
    "a warning: agent harnesses read flow-style YAML ({...}, [...]); the reference validator (skills-ref) "
    "rejects it, so it is an error with --strict"
)


def _node_value(node: yaml.Node, problems: list[tuple[str, int]], seen: set[int]) -> Any:
    """A strict-YAML view of a composed node: scalars as strings; flow style, anchors and
    duplicate keys are recorded in `problems` (message, 0-based line in the frontmatter)."""
    line = node.start_mark.line
    if id(node) in seen:
        problems.append(("anchors and aliases are not allowed", line))
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        return node.value
    if getattr(node, "flow_style", False):
        problems.append((_FLOW_STYLE, line))
    if isinstance(node, yaml.SequenceNode):
        return [_node_value(item, problems, seen) for item in node.value]
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _node_value(key_node, problems, seen)
            key = key if isinstance(key, str) else str(key)
            if key in out:
                problems.append((f"duplicate key {key!r}", key_node.start_mark.line))
            out[key] = _node_value(value_node, problems, seen)
        return out
    return None


def _parse_frontmatter(src: SkillSource, text: str) -> None:
    rel = src.skill_md_rel
    if not text.startswith("---"):
        src.findings.append(finding("frontmatter-missing", "SKILL.md does not start with '---'", rel, 1))
        src.body = text
        return
    lines = text.splitlines(keepends=True)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
    if end is None:
        src.findings.append(finding("frontmatter-unclosed", "no closing '---' line after the frontmatter", rel, 1))
        return
    raw = "".join(lines[1:end])
    src.body = "".join(lines[end + 1 :])
    src.body_start_line = end + 2
    try:
        node = yaml.compose(raw, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        evidence = lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else None
        src.findings.append(finding("frontmatter-invalid-yaml", f"invalid YAML: {problem}", rel, line, evidence))
        return
    if node is None or not isinstance(node, yaml.MappingNode):
        src.findings.append(finding("frontmatter-not-mapping", "frontmatter must be 'key: value' fields", rel, 2))
        return
    problems: list[tuple[str, int]] = []
    data = _node_value(node, problems, set())
    for message, line0 in problems:
        found = finding("frontmatter-not-strict-yaml", message, rel, line0 + 2, lines[line0 + 1].rstrip("\r\n"))
        if message == _FLOW_STYLE:  # lenient where harnesses are: their YAML parsers read flow style
            found = replace(found, severity=Severity.WARNING, reason=_FLOW_STYLE_REASON)
        src.findings.append(found)
    src.frontmatter = data
    src.key_lines = {str(k.value): k.start_mark.line + 2 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def _read_skill_md(src: SkillSource, path: Path) -> None:
    rel = src.skill_md_rel
    try:
        st = path.stat()
        if not path.is_file():
            raise IsADirectoryError("not a regular file")
        if st.st_size > SKILL_MD_MAX_BYTES:
            src.findings.append(
                finding(
                    "skill-md-too-large",
                    f"SKILL.md is {st.st_size / 2**20:.1f} MiB; "
                    f"files over {SKILL_MD_MAX_BYTES // 2**20} MiB are not parsed",
                    rel,
                )
            )
            return
        data = path.read_bytes()
    except OSError as exc:
        src.findings.append(finding("skill-md-unreadable", f"cannot read SKILL.md: {exc.strerror or exc}", rel))
        return
    if b"\0" in data[:8192]:
        src.findings.append(finding("skill-md-binary", "SKILL.md contains NUL bytes (binary file)", rel))
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        src.findings.append(
            finding("skill-md-not-utf8", f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8", rel, line)
        )
        text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
        src.findings.append(
            finding("skill-md-bom", "SKILL.md starts with a UTF-8 byte-order mark (read as if absent)", rel, 1)
        )
    src.text = text
    _parse_frontmatter(src, text)


def _read_file(path: Path, size: int) -> str | None:
    if size > TEXT_MAX_BYTES or path.suffix.lower() not in _TEXT_SUFFIXES:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _walk_files(src: SkillSource) -> None:
    root = src.root
    real_root = os.path.realpath(root)
    nested: str | None = None  # the nested skill directory being walked, if any
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_DIRS)
        base = Path(dirpath)
        base_rel = base.relative_to(root).as_posix()
        if nested is not None and not (base_rel + "/").startswith(nested + "/"):
            nested = None
        if nested is None and base_rel != "." and ("SKILL.md" in filenames or "skill.md" in filenames):
            nested = base_rel
            src.nested_skills.append(base_rel)
        for d in list(dirnames):
            p = base / d
            if p.is_symlink():
                dirnames.remove(d)
                _check_symlink(src, p, real_root)
        for name in sorted(filenames):
            path = base / name
            rel = path.relative_to(root).as_posix()
            if nested is not None:
                src.nested_files.add(rel)  # checked as a skill of its own
                continue
            if rel == src.skill_md_rel:
                continue
            if path.is_symlink() and not _check_symlink(src, path, real_root):
                continue
            try:
                info = path.stat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):  # a named pipe would block the read forever
                src.findings.append(finding("file-not-regular", "not a regular file (pipe, socket or device)", rel))
                continue
            size = info.st_size
            src.total_bytes += size
            text = _read_file(path, size)
            if (
                text is None
                and path.suffix.lower() in (".md", ".py", ".sh", ".bash", ".txt")
                and size <= TEXT_MAX_BYTES
            ):
                src.findings.append(finding("file-unreadable", "not UTF-8 text", rel))
            src.files.append(SkillFile(rel, path, size, text))


def _check_symlink(src: SkillSource, path: Path, real_root: str) -> bool:
    """Report problem links; True when the link is usable (resolves inside the skill)."""
    rel = path.relative_to(src.root).as_posix()
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        src.findings.append(finding("file-broken-symlink", "symlink is broken or loops", rel))
        return False
    if not str(target).startswith(real_root + os.sep):
        src.findings.append(finding("file-symlink-escape", f"symlink points outside the skill: {target}", rel))
        return False
    return not target.is_dir()


def _holds_skill_md(d: Path) -> bool:
    return (d / "SKILL.md").is_file() or (d / "skill.md").is_file()


def _outer_skill(root: Path, cache: dict[str, bool] | None = None) -> Path | None:
    """The nearest ancestor directory that is a skill itself (holds a SKILL.md), if any. `cache` (directory
    -> holds a SKILL.md) saves the lookups when many skills of one tree are read."""
    try:
        parents = root.resolve().parents
    except (OSError, RuntimeError):
        return None
    for p in parents:
        key = str(p)
        found = cache.get(key) if cache is not None else None
        if found is None:
            found = _holds_skill_md(p)
            if cache is not None:
                cache[key] = found
        if found:
            return p
    return None


def read_skill(root: Path, *, outer_cache: dict[str, bool] | None = None) -> SkillSource:
    """Read one skill directory tolerantly. Never raises on bad content. `outer_cache` lets the reads of
    one scan share the look-ups of ancestor directories (see `_outer_skill`)."""
    src = SkillSource(root=root)
    skill_md = root / "SKILL.md"
    if not (skill_md.exists() or skill_md.is_symlink()):
        lower = root / "skill.md"
        if lower.exists() or lower.is_symlink():
            skill_md = lower
            src.findings.append(finding("skill-md-lowercase-name", "the file is named skill.md", "skill.md"))
        else:
            src.findings.append(finding("skill-md-missing", "no SKILL.md in the directory"))
            _walk_files(src)
            return src
    src.skill_md_rel = skill_md.name
    outer = _outer_skill(root, outer_cache)
    if outer is not None:
        src.findings.append(
            finding("skill-nested", f"this skill sits inside the skill at {outer}", skill_md.name, None, str(outer))
        )
    _read_skill_md(src, skill_md)
    if src.text is not None:
        src.total_bytes += len(src.text.encode("utf-8", errors="replace"))
    _walk_files(src)
    return src


def discover_skill_dirs(path: Path) -> list[Path]:
    """Every directory at or under `path` holding a SKILL.md (or skill.md) entry, even a broken one, including
    skills nested inside other skills."""

    def has_skill_md(d: Path) -> bool:
        return any((d / n).exists() or (d / n).is_symlink() for n in ("SKILL.md", "skill.md"))

    found: list[Path] = [path] if has_skill_md(path) else []
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_DIRS)
        if dirpath != str(path) and ("SKILL.md" in filenames or "skill.md" in filenames):
            found.append(Path(dirpath))  # nested skills too: each is checked, and its nesting reported
    return sorted(found)
