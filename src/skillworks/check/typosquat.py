"""Typosquatted dependencies: a package a skill installs or declares whose name is one slip away from a far
more popular package (`reqeusts` for requests, `python-dateutils` for python-dateutil, `crossenv` for
cross-env).

Where names come from: `pip`/`uv`/`poetry`/`pipx` and `npm`/`yarn`/`pnpm`/`bun`/`npx` commands in scripts
and in SKILL.md's and references' code (fenced blocks and inline code), requirements files, pyproject.toml
and package.json. What they are compared with: the generated lists in `data/` (PyPI's most-downloaded
projects; npm's high-impact packages; see scripts/make_popular_packages.py), most popular first.

A name is a near miss of a popular target when, after the registry's own normalisation, it is one edit away
(insert, delete, substitute, swap two neighbours; names of at least five letters), differs only in
separators (`crossenv`, `cross_env`), or reads the same after look-alike characters are folded (`0`/`o`,
`1`/`l`, `rn`/`m`, Cyrillic letters). Never flagged: a name that is itself on the popular list, and the
skill's own declared names (frontmatter name, package.json/pyproject name, its directories)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from skillworks.check.model import Confidence, Context, Finding
from skillworks.check.reader import SkillSource
from skillworks.check.severity import Assessment, security_finding

_DATA = Path(__file__).parent / "data"
_TARGETS = 5000  # compared against the most popular names only: a near miss of a rank-14,000 name is common
_MIN_EDIT_LEN = 5  # below this, one edit lands on another real short name too often
_MIN_SUBST_LEN = 6  # from five letters only a swap of two neighbours counts
_SEP = re.compile(r"[-_.]+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"`([^`\n]+)`")
_REQ_FILE = re.compile(r"(^|/)(requirements|constraints)[^/]*\.(txt|in)$|(^|/)requirements/[^/]+\.(txt|in)$")
# where a command starts: a line (after a prompt or RUN), a shell operator, a quote, or "run"/"then"/"sudo"
_START = r"(?:^\s*(?:[$>!%]\s*)?(?:RUN\s+)?|(?:&&|\|\||[;|(`'\"\[,])\s*|\b(?:run|then|do|sudo|exec)\s+|(?<![\w-])-m\s+)"
_LIST_SEP = re.compile(r"[\"']\s*,\s*[\"']")  # ["pip", "install", "x"]: an argument list written in code
_PY_INSTALL = re.compile(
    _START + r"(?:sudo\s+)?(?:(?:python[\d.]*|py)\s+-m\s+)?"
    r"(?:pip[\d.]*\s+install|uv\s+pip\s+install|uv\s+add|uv\s+tool\s+install|poetry\s+add|pdm\s+add|"
    r"pipx\s+install|pipenv\s+install|uvx|pipx\s+run)\b(?P<args>.*)",
    re.I,
)
_NPM_INSTALL = re.compile(
    _START + r"(?:sudo\s+)?"
    r"(?:npm\s+(?:install|i|add)|yarn\s+(?:global\s+)?add|pnpm\s+(?:add|install|i)|bun\s+(?:add|install|i)|"
    r"npx|pnpm\s+dlx|bunx)\b(?P<args>.*)",
    re.I,
)
_CODE_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".ps1", ".rb", ".mk"})
_RUNNERS = ("uvx", "pipx run", "npx", "pnpm dlx", "bunx")  # first package argument only: the rest are its args
_VALUE_FLAGS = frozenset(  # options whose value is the next word (a file, URL or group, not a package)
    {"-r", "-c", "-e", "-i", "-f", "-t", "-p", "-w", "-C", "-F", "--requirement", "--constraint", "--editable"}
    | {"--index-url", "--extra-index-url", "--find-links", "--target", "--prefix", "--root", "--python"}
    | {"--platform", "--python-version", "--implementation", "--abi", "--src", "--cache-dir", "--trusted-host"}
    | {"--upgrade-strategy", "--progress-bar", "--log", "--proxy", "--timeout", "--retries", "--exists-action"}
    | {"--cert", "--client-cert", "--only-binary", "--no-binary", "--config-settings", "--group", "--extra"}
    | {"--optional", "--registry", "--save-prefix", "--tag", "--workspace", "--omit", "--include", "--package"}
    | {"--from", "--with", "--spec", "--index", "--default-index", "--directory", "--project", "--filter"}
)
_STOP = re.compile(r"^(&&|\|\|?|;|>>?|2>.*|<|#.*|\)|`)$")
# names as written (any letters: a look-alike letter from another script is what a homoglyph squat uses)
_PIP_NAME = re.compile(r"^([^\W_](?:[\w.-]*[^\W_])?)(\[[^\]]*\])?\s*([<>=!~;@ ].*)?$")
_NPM_NAME = re.compile(r"^([^\W_][\w.-]*)(@[^/]*)?$")
_FOLD = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "5": "s", "3": "e", "_": "-", ".": "-"})
_CONFUSABLE = str.maketrans("аеорсхуіјԁһӏո", "aeopcxyijdhln")  # Cyrillic/Armenian letters that read as Latin


@dataclass(frozen=True)
class Dependency:
    """One package name a skill installs or declares, with where it was found."""

    name: str
    ecosystem: str  # "pypi" | "npm"
    file: str
    line: int
    evidence: str
    context: Context
    declared: bool = False  # in a manifest (requirements, pyproject, package.json), not a command


def _normalise(name: str, ecosystem: str) -> str:
    low = unicodedata.normalize("NFKC", name).lower()
    return _SEP.sub("-", low) if ecosystem == "pypi" else low


@cache
def _ranks(ecosystem: str) -> dict[str, int]:
    text = (_DATA / f"popular-{ecosystem}.txt").read_text(encoding="utf-8")
    names = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    ranks: dict[str, int] = {}
    for rank, name in enumerate(names):
        ranks.setdefault(_normalise(name, ecosystem), rank)
    return ranks


def _deletes(name: str) -> set[str]:
    return {name[:i] + name[i + 1 :] for i in range(len(name))}


class _DeleteIndex:
    """The one-deletion variants of the popular names (and the names themselves), as sorted 64-bit hashes
    beside the index of the name each came from: about 6 MiB for the 5,000 names of each list, where a dict
    of the variant strings held 31 MiB in every scan process. A hash match is only a candidate (every
    candidate is checked with `_one_edit`), so a collision can add a candidate but never lose one."""

    def __init__(self, names: list[str]) -> None:
        hashes: list[int] = []
        owners: list[int] = []
        for i, name in enumerate(names):
            for key in {name, *_deletes(name)}:
                hashes.append(hash(key))
                owners.append(i)
        order = np.argsort(np.array(hashes, dtype=np.int64), kind="stable")
        self._hashes = np.array(hashes, dtype=np.int64)[order]
        self._owners = np.array(owners, dtype=np.int32)[order]
        self._names = names

    def candidates(self, keys: Iterable[str]) -> set[str]:
        wanted = np.array([hash(k) for k in keys], dtype=np.int64)
        lo = np.searchsorted(self._hashes, wanted, side="left")
        hi = np.searchsorted(self._hashes, wanted, side="right")
        return {self._names[int(j)] for a, b in zip(lo, hi, strict=True) for j in self._owners[a:b]}


@cache
def _index(ecosystem: str) -> tuple[_DeleteIndex, dict[str, str], dict[str, str]]:
    """For the most popular names: one-deletion variants, separator-free forms and folded look-alike forms."""
    edit_targets: list[str] = []
    by_bare: dict[str, str] = {}
    by_fold: dict[str, str] = {}
    for name, rank in _ranks(ecosystem).items():
        if rank >= _TARGETS:
            continue
        by_bare.setdefault(_SEP.sub("", name), name)
        by_fold.setdefault(_fold(name), name)
        if len(name) >= _MIN_EDIT_LEN:
            edit_targets.append(name)
    return _DeleteIndex(edit_targets), by_bare, by_fold


def _fold(name: str) -> str:
    return _SEP.sub("", name.translate(_CONFUSABLE).replace("rn", "m").replace("vv", "w").translate(_FOLD))


def _one_edit(a: str, b: str) -> bool:
    """Optimal-string-alignment distance of exactly one (insert, delete, substitute, adjacent swap)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _edit_counts(name: str, target: str) -> bool:
    """One edit of a short name, or inside a short part of a name (`google-cloud-iap` / `-iam`), lands on
    another real package too often: there only a swap of two neighbours counts (`nupmy`)."""
    a, b = name.split("-"), target.split("-")
    if len(a) == len(b):
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        if len(diff) == 1 and min(len(diff[0][0]), len(diff[0][1])) < 4:
            return False
    if len(name) >= _MIN_SUBST_LEN:
        return True
    return len(name) == len(target) and sorted(name) == sorted(target)


def near_miss(name: str, ecosystem: str) -> tuple[str, str] | None:
    """The popular package `name` imitates and how (`one edit`, `separators`, `look-alike characters`), or
    None. A name on the popular list itself is never a near miss."""
    norm = _normalise(name, ecosystem)
    if norm in _ranks(ecosystem):
        return None
    by_delete, by_bare, by_fold = _index(ecosystem)
    bare = _SEP.sub("", norm)
    if bare in by_bare and by_bare[bare] != norm:
        return by_bare[bare], "separators"
    if not norm.isascii() or any(c in norm for c in "01|"):
        folded = _fold(norm)
        if folded in by_fold:
            return by_fold[folded], "look-alike characters"
    if len(norm) >= _MIN_EDIT_LEN:
        found = by_delete.candidates((norm, *_deletes(norm)))
        ranks = _ranks(ecosystem)
        hits = sorted((t for t in found if _one_edit(norm, t) and _edit_counts(norm, t)), key=lambda t: ranks[t])
        if hits:
            return hits[0], "one edit"
    return None


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined."""
    buf: list[str] = []
    start = 1
    for n, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = n
        if line.rstrip().endswith("\\"):
            buf.append(line.rstrip()[:-1])
            continue
        buf.append(line)
        yield start, " ".join(buf)
        buf = []
    if buf:
        yield start, " ".join(buf)


def _code_lines(text: str) -> Iterator[tuple[int, str, Context]]:
    """The code in Markdown: fenced blocks line by line (continuations joined) and inline code spans."""
    fenced: list[str] = []
    fence_start = 0
    in_fence = False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            if in_fence:
                for k, joined in _logical_lines("\n".join(fenced)):
                    yield fence_start + k, joined, Context.EXAMPLE
                fenced = []
            in_fence, fence_start = not in_fence, n
            continue
        if in_fence:
            fenced.append(line)
        else:
            for m in _INLINE.finditer(line):
                yield n, m.group(1), Context.QUOTED
    if in_fence:
        for k, joined in _logical_lines("\n".join(fenced)):
            yield fence_start + k, joined, Context.EXAMPLE


def _tokens(args: str) -> list[str]:
    cleaned = re.sub(r"[,()]", " ", args)
    try:
        return shlex.split(cleaned, comments=False)
    except ValueError:
        return cleaned.replace('"', " ").replace("'", " ").split()


def _command_packages(line: str) -> Iterator[tuple[str, str]]:
    """(ecosystem, package name) for each package an install or run command on `line` names. The arguments
    end where the command does: a shell operator, a closing quote or backtick, a parenthesis, a comment, the
    end of a sentence, or the first word that cannot be a package name."""
    line = _LIST_SEP.sub(" ", line)
    for ecosystem, pattern in (("pypi", _PY_INSTALL), ("npm", _NPM_INSTALL)):
        for m in pattern.finditer(line):
            runner = any(re.search(rf"\b{r}\b", m.group(0), re.I) for r in _RUNNERS)
            opener = m.group(0).lstrip()[:1]
            args = m.group("args")
            for end in ("`", "(", ")", " #", *((opener,) if opener in "'\"" else ())):
                args = args.split(end, 1)[0]
            skip_next = False
            for raw in _tokens(args):
                if skip_next:
                    skip_next = False
                    continue
                if _STOP.match(raw) or raw.startswith(("&&", "||", ";", "|", "#", ">")):
                    break
                if raw.startswith("-"):
                    skip_next = raw in _VALUE_FLAGS
                    continue
                tok = raw.strip("\"'")
                last = tok.endswith(("]", ".", ":", ";", ",", "!", "?")) and "[" not in tok  # a list or sentence ends
                tok = tok.rstrip("]").strip("\"'") if "[" not in tok else tok
                tok = tok.rstrip(".:;,!?")
                name = _package_name(tok, ecosystem)
                if name is None:
                    break
                if name:
                    yield ecosystem, name
                if runner or last:
                    break  # a runner takes one package; punctuation ends the sentence


def _package_name(tok: str, ecosystem: str) -> str | None:
    """The registry name in one command argument; "" for an argument installed by path or URL, a scoped npm
    name, a variable or a placeholder (skipped); None for a word no package can be called (the end)."""
    head = re.split(r"[<>=!~;\[]" if ecosystem == "pypi" else r"(?<=.)@", tok, maxsplit=1)[0]
    if not head or any(c in head for c in "/\\$<>{}*%:") or head.startswith((".", "~", "@")):
        return ""
    if head.endswith((".whl", ".gz", ".zip", ".txt", ".toml", ".tgz", ".py", ".js", ".json")):
        return ""
    m = (_PIP_NAME if ecosystem == "pypi" else _NPM_NAME).match(tok)
    return m.group(1) if m else None


def _requirement_name(spec: str) -> str | None:
    spec = spec.split("#", 1)[0].strip()
    if not spec or spec.startswith(("-", ".", "/", "git+", "http")) or "://" in spec:
        return None
    m = _PIP_NAME.match(spec)
    if not m or "@" in (m.group(3) or "").split(";", 1)[0]:
        return None  # a direct reference (`name @ url`) installs from that URL, not by name
    return m.group(1)


def _line_of(text: str, name: str) -> tuple[int, str]:
    pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", re.I)
    for n, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            return n, line.strip()
    return 1, name


def _table(data: object, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _strings(items: object) -> list[str]:
    return [i for i in items if isinstance(i, str)] if isinstance(items, list) else []


def _pyproject_names(data: dict[str, Any]) -> tuple[list[str], set[str]]:
    """Dependency names (PEP 621, dependency groups, build requires, Poetry tables) and the project's own."""
    project, poetry = _table(data, "project"), _table(data, "tool", "poetry")
    own = {t["name"] for t in (project, poetry) if isinstance(t.get("name"), str)}
    specs = _strings(project.get("dependencies")) + _strings(_table(data, "build-system").get("requires"))
    for group in (_table(project, "optional-dependencies"), _table(data, "dependency-groups")):
        for items in group.values():
            specs.extend(_strings(items))
    names = [n for n in map(_requirement_name, specs) if n]
    tables = [_table(poetry, "dependencies"), *(_table(g, "dependencies") for g in _table(poetry, "group").values())]
    names.extend(k for t in tables for k in t if k.lower() != "python")
    return names, own


def _manifest_dependencies(rel: str, text: str) -> tuple[list[Dependency], set[str]]:
    """Dependencies and own names declared in a requirements file, pyproject.toml or package.json."""
    deps: list[Dependency] = []
    own: set[str] = set()
    base = rel.rsplit("/", 1)[-1]
    if _REQ_FILE.search(rel):
        for n, line in _logical_lines(text):
            name = _requirement_name(line)
            if name:
                deps.append(Dependency(name, "pypi", rel, n, line.strip(), Context.SCRIPT, True))
    elif base == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return deps, own
        names, own = _pyproject_names(data)
        for name in names:
            n, line = _line_of(text, name)
            deps.append(Dependency(name, "pypi", rel, n, line, Context.SCRIPT, True))
    elif base == "package.json":
        try:
            data = json.loads(text)
        except ValueError:
            return deps, own
        if not isinstance(data, dict):
            return deps, own
        if isinstance(data.get("name"), str):
            own.add(data["name"])
        for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
            table = data.get(key)
            if not isinstance(table, dict):
                continue
            for name, version in table.items():
                if isinstance(version, str) and version.startswith(("file:", "link:", "workspace:", "git", "http")):
                    continue  # not installed from the registry by this name
                n, line = _line_of(text, f'"{name}"')
                deps.append(Dependency(name, "npm", rel, n, line, Context.SCRIPT, True))
    return deps, own


def dependencies(src: SkillSource) -> tuple[list[Dependency], set[str]]:
    """Every package name the skill installs or declares, and the names it declares as its own."""
    deps: list[Dependency] = []
    own: set[str] = set()
    name = (src.frontmatter or {}).get("name")
    if isinstance(name, str):
        own.add(name)
    own.add(src.root.name)
    texts: list[tuple[str, str, bool]] = []
    if src.text is not None and src.skill_md_rel:
        texts.append((src.skill_md_rel, src.text, True))
    for f in src.files:
        if f.text is None:
            continue
        own.update(part for part in f.rel.split("/")[:-1])
        found, names = _manifest_dependencies(f.rel, f.text)
        deps.extend(found)
        own.update(names)
        if found:
            continue
        if f.suffix in (".md", ".mdx", ".rst"):
            texts.append((f.rel, f.text, True))
        elif f.suffix in _CODE_SUFFIXES or f.rel.rsplit("/", 1)[-1] in ("Dockerfile", "Makefile"):
            texts.append((f.rel, f.text, False))
    for rel, text, markdown in texts:
        lines: Iterable[tuple[int, str, Context]] = (
            _code_lines(text) if markdown else ((n, t, Context.SCRIPT) for n, t in _logical_lines(text))
        )
        for n, line, context in lines:
            if "install" not in line and "add" not in line and "npx" not in line and "uvx" not in line:
                continue  # the cheap test first: most lines name no command
            for ecosystem, pkg in _command_packages(line):
                deps.append(Dependency(pkg, ecosystem, rel, n, line.strip(), context))
    return deps, own


def check_typosquats(src: SkillSource) -> list[Finding]:
    """A `sec-typosquat` finding for each installed or declared name that imitates a far more popular one."""
    deps, own = dependencies(src)
    own_norm = {_normalise(n, e) for n in own for e in ("pypi", "npm")}
    out: list[Finding] = []
    seen: set[tuple[str, str, int]] = set()
    for dep in deps:
        norm = _normalise(dep.name, dep.ecosystem)
        if norm in own_norm or (dep.file, norm, dep.line) in seen:
            continue
        hit = near_miss(dep.name, dep.ecosystem)
        if hit is None:
            continue
        seen.add((dep.file, norm, dep.line))
        target, how = hit
        registry = "PyPI" if dep.ecosystem == "pypi" else "npm"
        where = "declared" if dep.declared else "installed"
        a = Assessment(dep.context, Confidence.HIGH, True, [f"{where} dependency, judged on its name"])
        message = (
            f"{registry} package {dep.name!r} imitates the popular {target!r} ({how}); "
            f"typosquats like it install malware"
        )
        out.append(security_finding("sec-typosquat", message, dep.file, dep.line, dep.evidence[:200], a))
    return out
