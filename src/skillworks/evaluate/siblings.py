"""ACES workspaces: which skills a with-skill trial sees beside the target (``--workspace``).

- ``isolation``: the target skill alone (plus the support and decoy skills given explicitly);
- ``group``: the target together with its *sibling* skills — the other skills of the collection it belongs
  to — so the agent has to route to the target among them.

Siblings come from ``--sibling DIR`` (each a skill directory), or, when none is given, from the target's
own collection: every other directory beside the target that holds a SKILL.md. A skill already given as
support or decoy keeps that role and is not a sibling. Siblings stay visible in the target-withheld
baseline too (like support skills), so the paired lift still measures the target alone; the eval report's
routing table says which skill the agent loaded in each condition.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Literal

from skillworks.errors import SkillError, UserError
from skillworks.skills.package import SkillPackage, load_skill

WorkspaceMode = Literal["isolation", "group"]
WORKSPACE_MODES: tuple[WorkspaceMode, ...] = ("isolation", "group")


def _load_sibling(path: Path, target: SkillPackage) -> SkillPackage:
    if path.resolve() == target.root.resolve():
        raise UserError(f"--sibling: this is the target skill {target.name!r}, not a sibling", path)
    try:
        sibling = load_skill(path)
    except SkillError as exc:
        raise UserError(f"--sibling: {exc.message}", exc.path or path) from None
    if sibling.name == target.name:
        raise UserError(f"--sibling: skill {sibling.name!r} has the target skill's name", path)
    return sibling


def _load_found(path: Path) -> SkillPackage:
    try:
        return load_skill(path)
    except SkillError as exc:
        raise UserError(
            f"--workspace group: sibling skill cannot be loaded: {exc.message} (name the siblings with --sibling DIR)",
            exc.path or path,
        ) from None


def _collection(target: SkillPackage, taken: Collection[str]) -> list[SkillPackage]:
    root = target.root.resolve()
    found = [
        _load_found(d)
        for d in sorted(root.parent.iterdir())
        if d.is_dir() and d.resolve() != root and (d / "SKILL.md").is_file()
    ]
    return [s for s in found if s.name != target.name and s.name not in taken]


def find_siblings(
    target: SkillPackage, mode: str, explicit: Sequence[Path] = (), taken: Collection[str] = ()
) -> list[SkillPackage]:
    """The sibling skills of `target` for workspace `mode` ([] in isolation). `taken`: names of the
    support and decoy skills (an explicit sibling among them is an error; a found one is left out)."""
    if mode not in WORKSPACE_MODES:
        raise UserError(f"unknown --workspace {mode!r} (allowed: {', '.join(WORKSPACE_MODES)})")
    if mode == "isolation":
        if explicit:
            raise UserError("--sibling needs --workspace group (isolation stages the target alone)", explicit[0])
        return []
    if not explicit:
        siblings = _collection(target, taken)
        if not siblings:
            raise UserError(
                "--workspace group: no sibling skill beside the target (another directory here with a SKILL.md); "
                "give --sibling DIR",
                target.root.resolve().parent,
            )
        return siblings
    siblings = [_load_sibling(p, target) for p in explicit]
    seen: set[str] = set()
    for path, sibling in zip(explicit, siblings, strict=True):
        if sibling.name in seen:
            raise UserError(f"--sibling: two sibling skills are named {sibling.name!r}", path)
        if sibling.name in taken:
            raise UserError(f"--sibling: skill {sibling.name!r} is already given as a support or decoy skill", path)
        seen.add(sibling.name)
    return siblings
