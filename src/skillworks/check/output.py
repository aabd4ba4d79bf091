"""Machine-readable outputs of `check`: the JSON report (schema in code) and SARIF 2.1.0."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks.check.model import CheckReport, Finding, Severity, SkillReport, Suppressed
from skillworks.check.rules import RULES

JSON_SCHEMA_VERSION: Literal[1] = 1
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FindingOut(_Strict):
    rule: str
    dimension: str
    severity: Literal["error", "warning", "info"]
    message: str
    file: str | None = Field(description="path relative to the skill directory")
    line: int | None
    evidence: str | None
    context: Literal["script", "prose", "example", "quoted", "test", "asset"] | None = Field(
        default=None, description="security findings: where the text sits"
    )
    instruction: bool | None = Field(
        default=None, description="security findings: the text is an instruction the agent is meant to follow"
    )
    confidence: Literal["high", "medium", "low"] | None = None
    reason: str | None = Field(default=None, description="security findings: why this severity")


class SuppressedOut(FindingOut):
    """A finding a `.skillworks-ignore` entry suppressed: it neither scores nor blocks."""

    suppressed_reason: str = Field(description="the reason the ignore entry gives")
    suppressed_by: str = Field(description="path of the .skillworks-ignore file")
    suppressed_until: str | None = Field(default=None, description="the entry's expiry date (YYYY-MM-DD)")


class JudgeCriterionOut(_Strict):
    criterion: str
    scores: dict[str, float]
    mean: float
    spread: float


class JudgeOut(_Strict):
    models: list[str]
    criteria: list[JudgeCriterionOut]
    mean: float
    errors: dict[str, str]


class SkillOut(_Strict):
    path: str
    name: str | None
    score: int = Field(ge=0, le=100)
    grade: str
    passed: bool
    scores: dict[str, int]
    tokens: int = Field(description="offline estimate of SKILL.md's tokens")
    findings: list[FindingOut]
    suppressed: list[SuppressedOut] = Field(default_factory=list, description="findings .skillworks-ignore suppressed")
    ignore_warnings: list[str] = Field(
        default_factory=list, description="expired .skillworks-ignore entries (they no longer suppress)"
    )
    judge: JudgeOut | None = None


class CheckReportOut(_Strict):
    """`skillworks check --format json`."""

    schema_version: Literal[1] = JSON_SCHEMA_VERSION
    fail_under: int
    passed: bool
    lint_tools: dict[str, bool]
    lint_problems: list[str] = Field(
        default_factory=list,
        description="linter runs that timed out or gave unreadable output: those scripts are not linted",
    )
    skills: list[SkillOut]


def _finding_out(f: Finding) -> FindingOut:
    return FindingOut(
        rule=f.rule_id,
        dimension=f.dimension.value,
        severity=f.severity.value,
        message=f.message,
        file=f.file,
        line=f.line,
        evidence=f.evidence,
        context=f.context.value if f.context else None,
        instruction=f.instruction,
        confidence=f.confidence.value if f.confidence else None,
        reason=f.reason,
    )


def _suppressed_out(x: Suppressed) -> SuppressedOut:
    return SuppressedOut(
        **_finding_out(x.finding).model_dump(),
        suppressed_reason=x.reason,
        suppressed_by=x.source,
        suppressed_until=x.expires.isoformat() if x.expires else None,
    )


def _skill_out(s: SkillReport, passed: bool) -> SkillOut:
    judge = None
    if s.judge is not None:
        judge = JudgeOut(
            models=s.judge.models,
            criteria=[
                JudgeCriterionOut(criterion=c.criterion, scores=c.scores, mean=c.mean, spread=c.spread)
                for c in s.judge.criteria
            ],
            mean=s.judge.mean,
            errors=s.judge.errors,
        )
    return SkillOut(
        path=str(s.root),
        name=s.name,
        score=s.overall,
        grade=s.grade,
        passed=passed,
        scores={d.value: v for d, v in s.scores.items()},
        tokens=s.tokens,
        findings=[_finding_out(f) for f in s.findings],
        suppressed=[_suppressed_out(x) for x in s.suppressed],
        ignore_warnings=s.ignore_warnings,
        judge=judge,
    )


def _head(report: CheckReport) -> CheckReportOut:
    return CheckReportOut(
        fail_under=report.fail_under,
        passed=report.passed,
        lint_tools=report.lint_tools,
        lint_problems=report.lint_problems,
        skills=[],
    )


def to_json_model(report: CheckReport) -> CheckReportOut:
    failed = {id(s) for s in report.failed()}
    out = _head(report)
    out.skills = [_skill_out(s, id(s) not in failed) for s in report.skills]
    return out


def to_json(report: CheckReport) -> str:
    """The JSON report as one string; `iter_json` gives the same text in pieces."""
    return to_json_model(report).model_dump_json(indent=2)


def _splice(head: str, key: str, items: Iterable[str]) -> Iterator[str]:
    """`head`, a JSON text indented by 2 whose `"key": []` occurs once, with that list filled by `items`
    (each a JSON value indented by 2): the text a dump of the whole document gives, produced one item at
    a time so that a report of any size is never held whole."""
    before, after = head.split(f'"{key}": []')
    pad = " " * (len(before) - before.rfind("\n") - 1)
    inner = pad + "  "
    yield before + f'"{key}": '
    first = True
    for item in items:
        yield ("[\n" if first else ",\n") + inner + item.replace("\n", "\n" + inner)
        first = False
    yield ("[]" if first else f"\n{pad}]") + after


def iter_json(report: CheckReport) -> Iterator[str]:
    """`to_json(report)` in pieces, one per skill (what `check --format json` writes)."""
    failed = {id(s) for s in report.failed()}
    head = _head(report).model_dump_json(indent=2)
    yield from _splice(
        head, "skills", (_skill_out(s, id(s) not in failed).model_dump_json(indent=2) for s in report.skills)
    )


_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SECURITY_SEVERITY = {Severity.ERROR: "8.0", Severity.WARNING: "5.0", Severity.INFO: "2.0"}


def _uri(skill: SkillReport, file: str | None, base: Path) -> str:
    return _path_uri(skill.root / file if file else skill.root / "SKILL.md", base)


def _path_uri(path: Path, base: Path) -> str:
    try:
        rel = os.path.relpath(path.absolute(), base.absolute())
    except ValueError:
        rel = str(path.absolute())
    if rel.startswith(".."):
        return path.absolute().as_uri()
    return Path(rel).as_posix()


def _sarif_head(report: CheckReport) -> tuple[dict[str, Any], dict[str, int]]:
    """The SARIF log with an empty result list, and each rule's index in the driver's rules."""
    used = sorted({f.rule_id for s in report.skills for f in [*s.findings, *(x.finding for x in s.suppressed)]})
    index = {rule_id: i for i, rule_id in enumerate(used)}
    rules = []
    for rule_id in used:
        rule = RULES[rule_id]
        props: dict[str, Any] = {"tags": [rule.dimension.value, *(["spec"] if rule.spec else [])]}
        if rule.dimension.value == "security":
            props["security-severity"] = _SECURITY_SEVERITY[rule.severity]
        rules.append(
            {
                "id": rule.id,
                "name": "".join(part.capitalize() for part in rule.id.split("-")),
                "shortDescription": {"text": rule.title},
                "fullDescription": {"text": rule.rationale},
                "help": {
                    "text": f"{rule.rationale} Fix: {rule.fix}",
                    "markdown": f"{rule.rationale}\n\n**Fix:** {rule.fix}",
                },
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": props,
            }
        )
    head: dict[str, Any] = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "skillworks", "version": _version(), "rules": rules}},
                "results": [],
                "properties": {
                    "skills": [
                        {"path": str(s.root), "name": s.name, "score": s.overall, "grade": s.grade}
                        for s in report.skills
                    ],
                },
            }
        ],
    }
    notes = [*report.lint_problems, *(w for s in report.skills for w in s.ignore_warnings)]
    if notes:  # SARIF's place for what went wrong while the tool ran
        head["runs"][0]["invocations"] = [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [{"level": "warning", "message": {"text": note}} for note in notes],
            }
        ]
    return head, index


def _sarif_result(skill: SkillReport, f: Finding, base: Path, index: dict[str, int]) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": f.line} if f.line else {"startLine": 1}
    if f.evidence:
        region["snippet"] = {"text": f.evidence}
    return {
        "ruleId": f.rule_id,
        "ruleIndex": index[f.rule_id],
        "level": _LEVEL[f.severity],
        "message": {"text": f"{skill.name or skill.root.name}: {f.message}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(skill, f.file, base)},
                    "region": region,
                }
            }
        ],
        "properties": {
            "skill": skill.name or skill.root.name,
            "dimension": f.dimension.value,
            **(
                {
                    "context": f.context.value,
                    "instruction": f.instruction,
                    "confidence": f.confidence.value if f.confidence else None,
                    "reason": f.reason,
                }
                if f.context
                else {}
            ),
        },
    }


def _sarif_results(report: CheckReport, base: Path, index: dict[str, int]) -> Iterator[dict[str, Any]]:
    for skill in report.skills:
        for f in skill.findings:
            yield _sarif_result(skill, f, base, index)
        for x in skill.suppressed:  # SARIF's suppressions: an external file's reviewed decision
            result = _sarif_result(skill, x.finding, base, index)
            result["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": x.reason,
                    "location": {"physicalLocation": {"artifactLocation": {"uri": _path_uri(Path(x.source), base)}}},
                }
            ]
            yield result


def to_sarif(report: CheckReport, base: Path | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run. File URIs are relative to `base` (default: the current
    directory, which is what GitHub code scanning expects when run from the repository root)."""
    head, index = _sarif_head(report)
    head["runs"][0]["results"] = list(_sarif_results(report, base or Path.cwd(), index))
    return head


def iter_sarif(report: CheckReport, base: Path | None = None) -> Iterator[str]:
    """`json.dumps(to_sarif(report, base), indent=2)` in pieces, one per result."""
    head, index = _sarif_head(report)
    results = _sarif_results(report, base or Path.cwd(), index)
    yield from _splice(json.dumps(head, indent=2), "results", (json.dumps(r, indent=2) for r in results))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("skillworks")
    except Exception:  # not installed as a distribution
        return "0"
