"""`.skillworks-ignore`: an author's reviewed false alarms, suppressed with a reason.

The file sits beside SKILL.md (paths relative to the skill) or at a root given to `check` (paths relative to
that root, so `pdf-tools/scripts/*.py`). YAML (a list of entries, or `suppress:` holding one) or TOML
(`[[suppress]]` tables). Each entry names a `rule` (an id, or a glob such as `sec-*`), a `path` glob (`*` and
`?` stay within one directory, `**` crosses them), a `reason` (required) and an optional `expires` date
(YYYY-MM-DD): from that day on the entry stops suppressing and the report warns about it.

A matching finding leaves the findings (it no longer scores or blocks) and is listed among the skill's
suppressed findings with the reason and the file that suppressed it. A malformed file is a `UserError`
naming the file. The produced-skills gate reads these files only for authored skills (see
`provision/gate.py`): a produced skill must not suppress its own findings."""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from skillworks.check.model import Finding, Suppressed
from skillworks.check.rules import RULES
from skillworks.errors import UserError

IGNORE_FILE = ".skillworks-ignore"
_MAX_BYTES = 1 << 20


class IgnoreEntry(BaseModel):
    """One suppression: findings of `rule` in files matching `path`, for `reason`, until `expires`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: str
    path: str
    reason: str
    expires: dt.date | None = None

    @field_validator("rule", "path", "reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        if not any(c in value for c in "*?[") and value not in RULES:
            raise ValueError(f"unknown rule {value!r}")
        return value


@dataclass(frozen=True)
class IgnoreFile:
    """A parsed `.skillworks-ignore`: its entries and the directory their paths are relative to."""

    path: Path
    entries: tuple[IgnoreEntry, ...]

    @property
    def base(self) -> Path:
        return self.path.parent


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 1)) > i:
            out.append(fnmatch.translate(pattern[i : end + 1])[4:-3])  # the class alone, as fnmatch writes it
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return _glob_regex(pattern.removeprefix("./"))


def _raw_entries(path: Path, text: str) -> Any:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    if first.startswith("["):
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"not valid TOML: {exc}", path) from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise UserError(f"not valid YAML{where}: {getattr(exc, 'problem', None) or exc}", path) from None
    if data is None:
        return []
    if isinstance(data, dict):
        if set(data) - {"suppress"}:
            raise UserError(f"unknown key(s) {', '.join(sorted(set(data) - {'suppress'}))}; expected 'suppress'", path)
        data = data.get("suppress", [])
    if not isinstance(data, list):
        raise UserError("expected a list of entries (rule, path, reason, expires)", path)
    return data


def load_ignore_file(path: Path) -> IgnoreFile:
    """Parse one ignore file; UserError (one line, naming the file) when it cannot be used."""
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise UserError(f"larger than {_MAX_BYTES} bytes", path)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", path) from None
    entries = []
    for n, raw in enumerate(_raw_entries(path, text), 1):
        if not isinstance(raw, dict):
            raise UserError(f"entry {n}: expected a mapping with rule, path and reason", path)
        try:
            entries.append(IgnoreEntry.model_validate(raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "entry"
            what = "is required" if err["type"] == "missing" else err["msg"].removeprefix("Value error, ")
            raise UserError(f"entry {n}: {field} {what}", path) from None
    return IgnoreFile(path, tuple(entries))


def ignore_files_for(skill_dirs: Sequence[Path], roots: Sequence[Path]) -> list[list[IgnoreFile]]:
    """For each skill directory, the ignore files that apply to it: its own, then those of the given roots
    it sits under. Each file is parsed once; a malformed one raises UserError before anything is scanned."""
    cache: dict[Path, IgnoreFile | None] = {}

    def load(d: Path) -> IgnoreFile | None:
        p = d / IGNORE_FILE
        if p not in cache:
            cache[p] = load_ignore_file(p) if p.is_file() else None
        return cache[p]

    out: list[list[IgnoreFile]] = []
    root_dirs = [r for r in roots if r.is_dir()]
    for d in skill_dirs:
        found = [f for f in [load(d)] if f is not None]
        for r in root_dirs:
            if r != d and d.is_relative_to(r) and (f := load(r)) is not None and f not in found:
                found.append(f)
        out.append(found)
    return out


def apply_ignores(
    skill_dir: Path, findings: list[Finding], files: Sequence[IgnoreFile], today: dt.date | None = None
) -> tuple[list[Finding], list[Suppressed], list[str]]:
    """Split `findings` into those that stay and those an entry suppresses; the warnings (expired entries, and
    entries of the skill's own file that match no finding)."""
    today = today or dt.datetime.now(dt.UTC).date()
    warnings: list[str] = []
    live: list[tuple[IgnoreFile, IgnoreEntry, str]] = []  # file, entry, prefix of the skill under its base
    for f in files:
        try:
            prefix = skill_dir.relative_to(f.base).as_posix()
        except ValueError:
            continue
        prefix = "" if prefix == "." else prefix + "/"
        for n, entry in enumerate(f.entries, 1):
            if entry.expires is not None and entry.expires <= today:
                warnings.append(
                    f"{f.path}: entry {n} ({entry.rule} {entry.path}) expired on {entry.expires}; "
                    "it no longer suppresses"
                )
                continue
            live.append((f, entry, prefix))
    if not live:
        return findings, [], warnings
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    used: set[int] = set()
    for finding in findings:
        rel = finding.file or "SKILL.md"
        match = next(
            (
                (i, f, e)
                for i, (f, e, prefix) in enumerate(live)
                if fnmatch.fnmatchcase(finding.rule_id, e.rule) and _compiled(e.path).match(prefix + rel)
            ),
            None,
        )
        if match is None:
            kept.append(finding)
        else:
            i, f, e = match
            used.add(i)
            suppressed.append(Suppressed(finding, e.reason, str(f.path), e.expires))
    for i, (f, e, prefix) in enumerate(live):
        if i not in used and not prefix:  # a skill's own file (a root's entries may be for other skills)
            n = f.entries.index(e) + 1
            warnings.append(f"{f.path}: entry {n} ({e.rule} {e.path}) matches no finding; remove it if it is stale")
    return kept, suppressed, warnings


__all__ = ["IGNORE_FILE", "IgnoreEntry", "IgnoreFile", "apply_ignores", "ignore_files_for", "load_ignore_file"]
