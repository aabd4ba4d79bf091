"""SkillPackage: one skill directory per the agentskills.io specification, parsed and content-hashed."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks._frontmatter import split_yaml_frontmatter
from skillworks.errors import SkillError

AssetKind = Literal["script", "reference", "asset", "other"]

SPEC_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
SKILL_MD_MAX_BYTES = 1 << 20  # a SKILL.md over 1 MiB is refused (it would flood every agent's context)
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
IGNORED_PARTS = frozenset({".git", "__pycache__", ".DS_Store", ".pytest_cache"})
_SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl", ".ps1"})


class SkillAsset(BaseModel):
    """A file of the package other than SKILL.md."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="POSIX path relative to the skill root")
    kind: AssetKind
    size: int
    sha256: str


class SkillPackage(BaseModel):
    """A parsed skill directory. `package_hash` covers SKILL.md and every asset."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    root: Path
    body: str = Field(description="SKILL.md without its frontmatter")
    frontmatter: dict[str, Any]
    assets: tuple[SkillAsset, ...]
    skill_md_sha256: str
    package_hash: str
    extra_keys: tuple[str, ...] = Field(default=(), description="frontmatter keys outside the spec")
    skipped_files: tuple[str, ...] = Field(
        default=(), description="named pipes, sockets and device files: not part of the package, never staged"
    )

    @property
    def short_hash(self) -> str:
        return self.package_hash[:12]


def split_frontmatter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """Split `---` YAML frontmatter from a SKILL.md body. Raises SkillError naming the file."""
    return split_yaml_frontmatter(
        text, path, error=SkillError, document="SKILL.md", not_mapping="frontmatter must be a YAML mapping"
    )


def name_problem(name: object) -> str | None:
    """The agentskills.io name rule broken by `name`, or None when it is valid."""
    if not isinstance(name, str) or not name:
        return "'name' is required and must be a non-empty string"
    if len(name) > NAME_MAX:
        return f"'name' is {len(name)} characters; at most {NAME_MAX} allowed"
    if not _NAME_RE.match(name):
        return (
            f"'name' {name!r} must be lowercase letters, digits and single hyphens, "
            "not starting or ending with a hyphen"
        )
    return None


def _asset_kind(rel: str) -> AssetKind:
    top = rel.split("/", 1)[0]
    if top == "scripts" or Path(rel).suffix in _SCRIPT_SUFFIXES:
        return "script"
    if top in ("references", "reference", "docs"):
        return "reference"
    if top in ("assets", "templates"):
        return "asset"
    return "other"


# a skill's scripts, references and assets: 64 MiB a file, 256 MiB in all (the public corpus's largest
# file is under 1 MiB); checked before a skill is read, hashed or staged
SKILL_FILE_MAX_BYTES = 64 * 1024 * 1024
SKILL_TOTAL_MAX_BYTES = 256 * 1024 * 1024


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def iter_package_files(root: Path) -> list[Path]:
    """Every regular file of a skill directory, sorted, without VCS/cache junk. Symlinks are not followed."""
    files: list[Path] = []
    for path in sorted(root.rglob("*")):
        rel_parts = path.relative_to(root).parts
        if any(part in IGNORED_PARTS for part in rel_parts):
            continue
        if path.is_file() and not path.is_symlink():
            files.append(path)
    return files


def hash_directory(root: Path) -> str:
    """Content hash of a skill directory: sha256 over sorted (relative path, file sha256) pairs."""
    digest = hashlib.sha256()
    for path in iter_package_files(root):
        rel = path.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0" + _sha256_file(path).encode() + b"\n")
    return digest.hexdigest()


def special_files(root: Path) -> list[str]:
    """Check a skill tree before anything copies or reads it: a symlink loop (a link that cannot be
    resolved, or a directory link to itself or an ancestor, which a copy following links would walk
    forever) is a SkillError naming the link; named pipes, sockets and device files (reading one
    blocks) are returned as relative paths, to be skipped. A file past SKILL_FILE_MAX_BYTES, or files
    past SKILL_TOTAL_MAX_BYTES in all, are a SkillError (sizes from lstat: nothing is read)."""
    skipped: list[str] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted([*dirnames, *filenames]):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            try:
                info = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                _check_link(path, rel)
            elif stat.S_ISREG(info.st_mode):
                # sizes from lstat, before any read or copy: a 2 GB sparse asset is refused, not staged
                if info.st_size > SKILL_FILE_MAX_BYTES:
                    raise SkillError(
                        f"{rel} is {info.st_size} bytes; a skill file may hold at most {SKILL_FILE_MAX_BYTES}", path
                    )
                total += info.st_size
                if total > SKILL_TOTAL_MAX_BYTES:
                    raise SkillError(f"the skill's files pass {SKILL_TOTAL_MAX_BYTES} bytes in all (at {rel})", path)
            elif not stat.S_ISDIR(info.st_mode):
                skipped.append(rel)
    return skipped


def _check_link(path: Path, rel: str) -> None:
    target = os.readlink(path)
    try:
        resolved = path.resolve(strict=True)
    except RuntimeError:
        raise SkillError(f"symlink loop: {rel} -> {target}", path) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SkillError(f"symlink loop: {rel} -> {target}", path) from None
        return  # dangling: reported by `skillworks check`, refused by the copy
    if resolved.is_dir():
        parent = os.path.realpath(path.parent)
        if parent == str(resolved) or parent.startswith(str(resolved).rstrip(os.sep) + os.sep):
            raise SkillError(f"symlink loop: {rel} -> {target} (a directory link to itself or an ancestor)", path)


def load_skill(root: Path | str) -> SkillPackage:
    """Load and validate a skill directory. Raises SkillError (one line, naming the file) when invalid."""
    root = Path(root)
    skill_md = root / "SKILL.md"
    if not root.is_dir():
        raise SkillError("not a skill directory", root)
    if not skill_md.is_file():
        raise SkillError("missing SKILL.md", root)
    size = skill_md.stat().st_size
    if size > SKILL_MD_MAX_BYTES:
        raise SkillError(
            f"SKILL.md is {size / 2**20:.1f} MiB; the limit is {SKILL_MD_MAX_BYTES // 2**20} MiB", skill_md
        )
    skipped = special_files(root)
    try:
        text = skill_md.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillError("SKILL.md is not valid UTF-8", skill_md) from None
    frontmatter, body = split_frontmatter(text, skill_md)
    name = frontmatter.get("name")
    problem = name_problem(name)
    if problem:
        raise SkillError(problem, skill_md)
    assert isinstance(name, str)
    if name != root.resolve().name:
        raise SkillError(f"skill name {name!r} does not match its directory name {root.resolve().name!r}", skill_md)
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("'description' is required and must be a non-empty string", skill_md)
    if len(description) > DESCRIPTION_MAX:
        raise SkillError(f"'description' is {len(description)} characters; at most {DESCRIPTION_MAX}", skill_md)
    compatibility = frontmatter.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or len(compatibility) > COMPATIBILITY_MAX):
        raise SkillError(f"'compatibility' must be a string of at most {COMPATIBILITY_MAX} characters", skill_md)
    metadata = frontmatter.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise SkillError("'metadata' must be a mapping", skill_md)

    assets = []
    for path in iter_package_files(root):
        rel = path.relative_to(root).as_posix()
        if rel == "SKILL.md":
            continue
        assets.append(SkillAsset(path=rel, kind=_asset_kind(rel), size=path.stat().st_size, sha256=_sha256_file(path)))
    return SkillPackage(
        name=name,
        description=description.strip(),
        root=root.resolve(),
        body=body,
        frontmatter=frontmatter,
        assets=tuple(assets),
        skill_md_sha256=_sha256_file(skill_md),
        package_hash=hash_directory(root),
        extra_keys=tuple(sorted(k for k in frontmatter if k not in SPEC_FIELDS)),
        skipped_files=tuple(skipped),
    )


def discover_skills(tree: Path | str) -> list[Path]:
    """Every directory under `tree` (or `tree` itself) that holds a SKILL.md, sorted."""
    tree = Path(tree)
    if (tree / "SKILL.md").is_file():
        return [tree]
    return sorted(p.parent for p in tree.rglob("SKILL.md") if p.is_file())
