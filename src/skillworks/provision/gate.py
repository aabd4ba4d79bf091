"""The one gate every produced skill passes before anything is staged.

Whatever produces skills for a trial — a self-generated creator session, an evolve patch, a `--seed-skills`
library, a `--skills-from` replay, the packages the compiler turns into capsules — hands each package to
`gate_skill` with the tasks the skill will be used on. It is rejected, with its reason, when:

- it does not load as a skill, or holds a symlink;
- `skillworks check` reports an error-severity finding for it;
- the security scan finds downloaded code being run, local data sent away, or persistence installed: any
  finding of the rule families in `BLOCKING_SECURITY_PREFIXES`, whatever severity the scan gave it (a
  produced skill has no author to vouch for it; a rule added later to one of these families blocks too);
- (for a produced skill) a `.skillworks-ignore` inside it is never read: a produced skill must not suppress
  its own findings. Only an authored skill (`authored=True`: a library a person wrote and vouches for, such
  as evolve's seed library or a task's curated skills) has its reviewed false alarms suppressed;
- the leakage audit finds an error-severity `leak-*` finding against the verifier and oracle of any of
  those tasks (an answer key measures copying, not skill use);
- it passed on its own but, side by side with the other skills the same trial or library gets, holds an
  answer key split between them (`joint_rejections`: each skill below the share that makes one a key).

Verdicts are cached per (package hash, task ids) in this process: the same pack reviewed by its source and
again by the trial costs one scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillworks.errors import SkillError, UserError
from skillworks.skills.package import SkillPackage, load_skill
from skillworks.tasks.model import Task

# rule families of the security scan that block a produced skill (prefixes of rule ids)
BLOCKING_SECURITY_PREFIXES = ("sec-remote-exec", "sec-exfiltration", "sec-persistence")
_CACHE_MAX = 512


@dataclass(frozen=True)
class GateVerdict:
    """What the gate said of one skill: `reasons` is empty when it passed; each reason starts with the rule
    id that decided it (``leak-expected-value: ...``, ``sec-remote-exec: ...``, ``check: ...``)."""

    skill: str
    package_hash: str | None
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    check_score: int | None = None

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def answer_key(self) -> bool:
        return any(r.startswith("leak-") for r in self.reasons)

    def to_record(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "package_hash": self.package_hash,
            "passed": self.passed,
            "reasons": list(self.reasons),
            "warnings": list(self.warnings),
            "tasks": list(self.tasks),
        }


@dataclass
class GateOutcome:
    kept: list[SkillPackage] = field(default_factory=list)
    verdicts: list[GateVerdict] = field(default_factory=list)

    @property
    def rejected(self) -> list[GateVerdict]:
        return [v for v in self.verdicts if not v.passed]

    def to_record(self) -> dict[str, Any]:
        return {
            "passed": [f"{v.skill}@{(v.package_hash or '')[:12]}" for v in self.verdicts if v.passed],
            "rejected": [v.to_record() for v in self.rejected],
        }


_cache: dict[tuple[str, tuple[str, ...], bool], GateVerdict] = {}


def _symlink(root: Path) -> Path | None:
    return next((p for p in root.rglob("*") if p.is_symlink()), None)


def blocks_security(rule_id: str) -> bool:
    return rule_id.startswith(BLOCKING_SECURITY_PREFIXES)


async def gate_skill(skill: SkillPackage | Path, tasks: Sequence[Task], *, authored: bool = False) -> GateVerdict:
    """The gate's verdict on one skill (a package, or a directory to load) for use on `tasks`. Only with
    `authored` is the skill's `.skillworks-ignore` honoured (a person wrote the skill and reviewed the
    alarms it suppresses); a produced skill's is ignored."""
    from skillworks.check.leakage import audit_task_leakage
    from skillworks.check.model import Severity
    from skillworks.check.scan import check_skills_async

    task_ids = tuple(t.id for t in tasks)
    if isinstance(skill, Path):
        root = skill
        if root.is_symlink():
            return GateVerdict(root.name, None, ("invalid: the skill directory is a symlink",), tasks=task_ids)
        try:
            package = load_skill(root)
        except SkillError as exc:
            return GateVerdict(root.name, None, (f"invalid: {exc.message}",), tasks=task_ids)
    else:
        package, root = skill, skill.root
    key = (package.package_hash, task_ids, authored)
    if key in _cache:
        return _cache[key]
    link = _symlink(root)
    if link is not None:
        reason = f"invalid: contains a symlink ({link.relative_to(root).as_posix()})"
        return GateVerdict(package.name, package.package_hash, (reason,), tasks=task_ids)
    reasons: list[str] = []
    warnings: list[str] = []
    try:
        report = (await check_skills_async([root], lint=False, ignore_files=authored)).skills[0]
    except UserError as exc:  # an authored skill's malformed .skillworks-ignore: the skill is not usable as is
        return GateVerdict(package.name, package.package_hash, (f"invalid: {exc}",), tasks=task_ids)
    for f in report.findings:
        where = f" ({f.file}:{f.line})" if f.file and f.line else f" ({f.file})" if f.file else ""
        if blocks_security(f.rule_id):
            reasons.append(f"{f.rule_id}: {f.message}{where}")
        elif f.severity is Severity.ERROR:
            reasons.append(f"check: {f.rule_id}: {f.message}{where}")
    for x in report.suppressed:  # an authored skill's reviewed false alarms stay on the record
        where = f" ({x.finding.file}:{x.finding.line})" if x.finding.file and x.finding.line else ""
        warnings.append(f"suppressed {x.finding.rule_id}{where}: {x.reason} [{x.source}]")
    warnings.extend(report.ignore_warnings)
    seen: set[str] = set()
    for task in tasks:
        for f in audit_task_leakage(task, [package]):
            if not f.rule_id.startswith("leak-"):
                continue
            text = f"{f.rule_id}: {f.message} [task {task.id}, {f.file}:{f.line}]"
            if text in seen:
                continue
            seen.add(text)
            (reasons if f.severity is Severity.ERROR else warnings).append(text)
    verdict = GateVerdict(package.name, package.package_hash, tuple(reasons), tuple(warnings), task_ids, report.overall)
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[key] = verdict
    return verdict


def joint_rejections(skills: Sequence[SkillPackage], tasks: Sequence[Task]) -> dict[int, str]:
    """Skills that hold an answer key together (audited side by side, as an agent sees them), by index into
    `skills`, with the reason: each skill that holds a part of the evidence. Empty for fewer than two."""
    from skillworks.check.leakage import audit_task_leakage
    from skillworks.check.model import Severity

    out: dict[int, str] = {}
    if len(skills) < 2:
        return out
    roots = [p.root.resolve() for p in skills]
    for task in tasks:
        for f in audit_task_leakage(task, skills, together=True):
            if not f.rule_id.startswith("leak-") or f.severity is not Severity.ERROR or not f.file:
                continue
            where = Path(f.file) if Path(f.file).is_absolute() else task.root / f.file
            for i, root in enumerate(roots):
                if i not in out and root in where.resolve().parents:
                    out[i] = f"{f.rule_id}: {f.message} (held jointly) [task {task.id}, {f.file}:{f.line}]"
    return out


def _reject_jointly(outcome: GateOutcome, tasks: Sequence[Task]) -> GateOutcome:
    joint = joint_rejections(outcome.kept, tasks)
    if not joint:
        return outcome
    out = {id(outcome.kept[i]): reason for i, reason in joint.items()}
    hashes = {outcome.kept[i].package_hash: reason for i, reason in joint.items()}
    verdicts = [
        replace(v, reasons=(hashes[v.package_hash],)) if v.passed and v.package_hash in hashes else v
        for v in outcome.verdicts
    ]
    return GateOutcome(kept=[p for p in outcome.kept if id(p) not in out], verdicts=verdicts)


async def gate_skills(skills: Sequence[SkillPackage], tasks: Sequence[Task], *, authored: bool = False) -> GateOutcome:
    """Every skill through the gate: those that passed (in order), and every verdict."""
    outcome = GateOutcome()
    for package in skills:
        verdict = await gate_skill(package, tasks, authored=authored)
        outcome.verdicts.append(verdict)
        if verdict.passed:
            outcome.kept.append(package)
    return _reject_jointly(outcome, tasks)


async def gate_library(library: Path, tasks: Sequence[Task], *, authored: bool = False) -> GateOutcome:
    """Every skill directory of a library (`<library>/<skill>/SKILL.md`) through the gate."""
    outcome = GateOutcome()
    if not library.is_dir():
        return outcome
    for root in sorted(p for p in library.iterdir() if p.is_dir() or p.is_symlink()):
        if not (root / "SKILL.md").exists() and not root.is_symlink():
            continue
        verdict = await gate_skill(root, tasks, authored=authored)
        outcome.verdicts.append(verdict)
        if verdict.passed:
            outcome.kept.append(load_skill(root))
    return _reject_jointly(outcome, tasks)
