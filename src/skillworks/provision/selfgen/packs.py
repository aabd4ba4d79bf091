"""What a creator session produced: the generated packs, each loaded, hashed, checked with `skillworks check`
and run through the leakage audit against the task's verifier and oracle.

A pack is *staged* for the solver only when it loads as a skill (valid SKILL.md), is within the limits,
and passes the gate (`skillworks.provision.gate`: no error-severity `check` finding, no blocking security
finding, no symlink, not an answer key). An answer key is a pack with an error-severity `leak-*` finding
against the task's verifier or oracle: it measures copying, not skill use, so it is withheld from the
solver and reported per trial and in the report. Warning-severity leakage findings are recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks.errors import SkillError
from skillworks.skills.package import SkillPackage, load_skill
from skillworks.tasks.model import Task

MAX_PACKS = 10
MAX_PACK_BYTES = 2 * 1024 * 1024

PackStatus = Literal["staged", "invalid", "check_failed", "answer_key", "over_limit"]


class GeneratedPack(BaseModel):
    """One directory the creator left under the generated-skills dir, and what became of it."""

    model_config = ConfigDict(extra="forbid")

    dir: str = Field(description="directory name under generated-skills/")
    name: str | None = None
    package_hash: str | None = None
    status: PackStatus
    reason: str | None = None
    check_score: int | None = None
    check_errors: list[str] = Field(default_factory=list, description="error-severity `skillworks check` findings")
    leakage: list[str] = Field(default_factory=list, description="leakage-audit findings ('rule: message')")

    @property
    def answer_key(self) -> bool:
        return self.status == "answer_key"


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _symlink(root: Path) -> Path | None:
    return next((p for p in root.rglob("*") if p.is_symlink()), None)


async def review_packs(generated: Path, task: Task) -> tuple[list[GeneratedPack], list[SkillPackage]]:
    """Every pack under `generated` (host copy of the creator's generated-skills dir), reviewed; and the
    packages that may be staged for the solver."""
    from skillworks.provision.gate import gate_skill, joint_rejections

    reviews: list[GeneratedPack] = []
    staged: list[SkillPackage] = []
    if not generated.is_dir():
        return reviews, staged
    dirs = sorted(p for p in generated.iterdir() if p.is_dir() or p.is_symlink())  # a stray file is no pack
    for i, root in enumerate(dirs):
        if root.is_symlink():
            reviews.append(GeneratedPack(dir=root.name, status="invalid", reason="is a symlink"))
            continue
        if i >= MAX_PACKS:
            reviews.append(GeneratedPack(dir=root.name, status="over_limit", reason=f"more than {MAX_PACKS} packs"))
            continue
        link = _symlink(root)
        if link is not None:
            reason = f"contains a symlink ({link.relative_to(root).as_posix()})"
            reviews.append(GeneratedPack(dir=root.name, status="invalid", reason=reason))
            continue
        size = _size(root)
        if size > MAX_PACK_BYTES:
            reason = f"{size} bytes; at most {MAX_PACK_BYTES}"
            reviews.append(GeneratedPack(dir=root.name, status="over_limit", reason=reason))
            continue
        try:
            package = load_skill(root)
        except SkillError as exc:
            reviews.append(GeneratedPack(dir=root.name, status="invalid", reason=exc.message))
            continue
        verdict = await gate_skill(package, [task])
        errors = [r for r in verdict.reasons if not r.startswith("leak-")]
        leakage = [r for r in (*verdict.reasons, *verdict.warnings) if r.startswith("leak-")]
        status: PackStatus = "answer_key" if verdict.answer_key else "check_failed" if errors else "staged"
        why: str | None = (
            "names values the verifier checks or the oracle's commands (an answer key, not a skill): "
            + next(r for r in verdict.reasons if r.startswith("leak-"))
            if verdict.answer_key
            else "rejected by the gate: " + errors[0]
            if errors
            else None
        )
        reviews.append(
            GeneratedPack(
                dir=root.name,
                name=package.name,
                package_hash=package.package_hash,
                status=status,
                reason=why,
                check_score=verdict.check_score,
                check_errors=errors,
                leakage=leakage,
            )
        )
        if status == "staged":
            staged.append(package)
    # the staged packs side by side, as the solver sees them: an answer key split between packs is one too
    joint = joint_rejections(staged, [task])
    for i, reason in joint.items():
        review = next(r for r in reviews if r.package_hash == staged[i].package_hash and r.status == "staged")
        review.status, review.leakage = "answer_key", [*review.leakage, reason]
        review.reason = "holds, with the other staged packs, values the verifier checks (an answer key): " + reason
    return reviews, [p for i, p in enumerate(staged) if i not in joint]
