"""The `check` pipeline: find skills, read each tolerantly, run every rule family, lint scripts in
batches, score, and (opt-in) ask LLM judges."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from skillworks.check.content_rules import check_body, check_description, check_efficiency, check_references
from skillworks.check.lint import Linter, LintTarget
from skillworks.check.model import CheckReport, Dimension, Finding, Severity, SkillReport
from skillworks.check.reader import SkillSource, discover_skill_dirs, read_skill
from skillworks.check.rules import SPEC_RULE_IDS
from skillworks.check.score import grade, score_findings
from skillworks.check.scripts import check_scripts
from skillworks.check.security import scan_security
from skillworks.check.spec_rules import check_spec
from skillworks.errors import UserError

DEFAULT_FAIL_UNDER = 70


def resolve_skill_dirs(paths: Sequence[Path | str]) -> list[Path]:
    """Skill directories named by `paths` (a skill dir, a SKILL.md, or a tree). UserError when a path
    does not exist or is neither a directory nor a SKILL.md."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not (path.exists() or path.is_symlink()):
            raise UserError("path does not exist", path)
        if not path.is_dir():
            if path.name.lower() == "skill.md":
                out.append(path.parent)
                continue
            raise UserError("not a directory or SKILL.md file", path)
        # a directory without any SKILL.md is scanned as one skill (and reported as missing SKILL.md)
        out.extend(discover_skill_dirs(path) or [path])
    seen: set[Path] = set()
    unique = []
    for d in out:
        key = d.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def static_findings(src: SkillSource) -> tuple[list[Finding], int]:
    """Every in-process finding for one read skill (no external tools), and its token estimate."""
    findings = list(src.findings)
    tokens = 0
    if src.text is not None:
        findings.extend(check_spec(src))
        findings.extend(check_description(src))
        findings.extend(check_body(src))
        findings.extend(check_references(src))
        eff, tokens = check_efficiency(src)
        findings.extend(eff)
    findings.extend(check_scripts(src))
    findings.extend(scan_security(src))
    return findings, tokens


def _finish(report: SkillReport, strict: bool = False) -> None:
    if strict:  # every finding of a rule the reference validator enforces is an error, as skills-ref rejects it
        report.findings = [
            replace(f, severity=Severity.ERROR) if f.rule_id in SPEC_RULE_IDS else f for f in report.findings
        ]
    report.findings.sort(key=lambda f: (f.dimension.value, f.file or "", f.line or 0, f.rule_id))
    report.scores, report.overall = score_findings(report.findings)
    report.grade = grade(report.overall)
    report.blocking = [
        f
        for f in report.findings
        if f.severity is Severity.ERROR and (f.dimension is Dimension.SECURITY or f.rule_id in SPEC_RULE_IDS)
    ]


_BATCH = 32  # skills read per worker-thread hop; linters run on the other core meanwhile


def _scan_batch(batch: list[tuple[int, Path]], lint: bool) -> list[tuple[SkillReport, SkillSource, list[LintTarget]]]:
    out = []
    for i, d in batch:
        src = read_skill(d)
        findings, tokens = static_findings(src)
        fm = src.frontmatter or {}
        name = fm.get("name") if isinstance(fm.get("name"), str) else None
        targets: list[LintTarget] = []
        if lint:
            syntax_bad = {f.file for f in findings if f.rule_id == "script-syntax-error"}
            for f in src.files:
                lang = f.language
                if f.text is not None and lang is not None and f.rel not in syntax_bad:
                    targets.append(LintTarget(i, f.rel, f.path.absolute(), lang))
        out.append((SkillReport(root=d, name=name, findings=findings, tokens=tokens), src, targets))
    return out


async def check_skills_async(
    paths: Sequence[Path | str],
    *,
    fail_under: int = DEFAULT_FAIL_UNDER,
    lint: bool = True,
    judge_models: Sequence[str] = (),
    api_base: str | None = None,
    strict: bool = False,
    triage_model: str | None = None,
) -> CheckReport:
    """Scan every skill under `paths`. Never raises on bad skill content (that becomes findings);
    raises UserError for paths that do not exist or hold no skill. With `strict`, every finding of a rule
    the reference validator (skills-ref) enforces is an error that blocks the gate, so the gate agrees with
    `skills-ref validate`. With `triage_model`, that model reviews each security error and warning before
    the gate is computed (see `triage.py`)."""
    dirs = list(enumerate(resolve_skill_dirs(paths)))
    reports: list[SkillReport] = []
    judge_texts: list[str | None] = []  # SKILL.md texts, kept only when a judge will read them
    linter = Linter() if lint else None
    for start in range(0, len(dirs), _BATCH):
        batch = dirs[start : start + _BATCH]
        done = await asyncio.to_thread(_scan_batch, batch, lint) if len(dirs) > _BATCH else _scan_batch(batch, lint)
        for report, src, targets in done:
            reports.append(report)
            if judge_models:
                judge_texts.append(src.text)
            if linter is not None and targets:
                linter.add(targets)
    tools: dict[str, bool] = {}
    if linter is not None:
        for key, findings in (await linter.finish()).items():
            reports[key].findings.extend(findings)
        tools = linter.tools
    if triage_model:
        from skillworks.check.triage import triage_findings

        for report in reports:
            report.findings = await triage_findings(
                report.name or report.root.name, report.findings, triage_model, api_base=api_base
            )
    for report in reports:
        _finish(report, strict)
    if judge_models:
        from skillworks.check.judge import judge_skill

        for report, text in zip(reports, judge_texts, strict=True):
            if text is not None:
                report.judge = await judge_skill(text, list(judge_models), api_base=api_base)
    return CheckReport(skills=reports, fail_under=fail_under, lint_tools=tools)


def check_skills(paths: Sequence[Path | str], **kwargs: object) -> CheckReport:
    """Synchronous wrapper of `check_skills_async`."""
    return asyncio.run(check_skills_async(paths, **kwargs))  # type: ignore[arg-type]
