"""Reading a skill directory for compilation, tolerantly: a package that breaks the spec (a 1,068-character
description, a name that does not match its directory, bad YAML) is still read, with its problem as a
diagnostic, so a tree compiles whole and the invalid skill becomes `insufficient` instead of aborting it."""

from __future__ import annotations

import re
from pathlib import Path

from skillworks.errors import SkillError
from skillworks.skills.package import (
    SkillAsset,
    SkillPackage,
    _asset_kind,
    _sha256_file,
    hash_directory,
    iter_package_files,
    load_skill,
    name_problem,
    split_frontmatter,
)


def _slug_name(text: str) -> str:
    value = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return value[:64].strip("-") or "skill"


def _frontmatter(skill_md: Path) -> tuple[dict[str, object], str]:
    text = skill_md.read_bytes().decode("utf-8", errors="replace")
    try:
        frontmatter, body = split_frontmatter(text, skill_md)
    except SkillError:
        return {}, text
    return (frontmatter if isinstance(frontmatter, dict) else {}), body


def _name_of(frontmatter: dict[str, object], root: Path, hint: str | None = None) -> str:
    name = frontmatter.get("name")
    if isinstance(name, str) and not name_problem(name):
        return name
    if hint is not None:
        return hint
    return _slug_name(name if isinstance(name, str) and name else root.resolve().name)


def skill_name(root: Path) -> str:
    """The name a compile gives the skill at `root` (its valid frontmatter name, else a slug), cheaply."""
    skill_md = root / "SKILL.md"
    return _name_of(_frontmatter(skill_md)[0], root) if skill_md.is_file() else _slug_name(root.name)


def read_package(root: Path, name_hint: str | None = None) -> tuple[SkillPackage, str | None]:
    """The package at `root` and, when it breaks the skill spec, that problem as one line (else None). Raises
    SkillError only when there is nothing to read (no directory, no SKILL.md). `name_hint` names a package
    without a valid name (a capsule re-read under the name it was compiled as)."""
    try:
        return load_skill(root), None
    except SkillError as exc:
        problem = str(exc)
    skill_md = root / "SKILL.md"
    if not root.is_dir() or not skill_md.is_file():
        raise SkillError("missing SKILL.md", root)
    frontmatter, body = _frontmatter(skill_md)
    name = _name_of(frontmatter, root, name_hint)
    description = frontmatter.get("description")
    description = description.strip() if isinstance(description, str) and description.strip() else body[:200]
    assets = []
    for path in iter_package_files(root):
        rel = path.relative_to(root).as_posix()
        if rel != "SKILL.md":
            assets.append(
                SkillAsset(path=rel, kind=_asset_kind(rel), size=path.stat().st_size, sha256=_sha256_file(path))
            )
    package = SkillPackage(
        name=name,
        description=description or name,
        root=root.resolve(),
        body=body,
        frontmatter=frontmatter,
        assets=tuple(assets),
        skill_md_sha256=_sha256_file(skill_md),
        package_hash=hash_directory(root),
    )
    return package, problem
