"""What a static check produces: rules, findings, per-skill reports and the scan report."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Context(StrEnum):
    """Where a security finding's text sits, which decides how much it can be trusted as a threat."""

    SCRIPT = "script"  # an executable file of the skill
    PROSE = "prose"  # Markdown prose of SKILL.md or a reference the agent reads
    EXAMPLE = "example"  # a fenced code block in Markdown
    QUOTED = "quoted"  # inside quotation marks or backticks within a sentence
    TEST = "test"  # a test file or fixture
    ASSET = "asset"  # a template, HTML page or data file shipped with the skill


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Dimension(StrEnum):
    CORRECTNESS = "correctness"
    DISCOVERABILITY = "discoverability"
    RELIABILITY = "reliability"
    EFFICIENCY = "efficiency"
    SECURITY = "security"
    LEAKAGE = "leakage"


SCORED_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension.CORRECTNESS,
    Dimension.DISCOVERABILITY,
    Dimension.RELIABILITY,
    Dimension.EFFICIENCY,
)


@dataclass(frozen=True)
class Rule:
    """One check. `spec` marks the rules the agentskills.io reference validator also enforces."""

    id: str
    dimension: Dimension
    severity: Severity
    title: str
    rationale: str
    fix: str
    spec: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem. `file` is relative to the skill (or task) root, POSIX style; `line` is 1-based.

    Security findings also carry their `context`, whether the text is an `instruction` the agent is meant
    to follow (or a script it runs), a `confidence` and the `reason` behind the severity they got."""

    rule_id: str
    dimension: Dimension
    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    evidence: str | None = None
    context: Context | None = None
    instruction: bool | None = None
    confidence: Confidence | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Suppressed:
    """A finding a `.skillworks-ignore` entry suppressed: the entry's reason and the file it came from."""

    finding: Finding
    reason: str
    source: str  # path of the ignore file
    expires: dt.date | None = None


@dataclass
class DimensionScore:
    dimension: Dimension
    score: int
    findings: int


@dataclass
class SkillReport:
    """Everything `check` found for one skill directory."""

    root: Path
    name: str | None
    findings: list[Finding] = field(default_factory=list)
    scores: dict[Dimension, int] = field(default_factory=dict)
    overall: int = 0
    grade: str = "F"
    tokens: int = 0
    judge: JudgeReport | None = None
    blocking: list[Finding] = field(default_factory=list)  # fail the gate whatever the score
    suppressed: list[Suppressed] = field(default_factory=list)  # by .skillworks-ignore, with the reason
    ignore_warnings: list[str] = field(default_factory=list)  # expired .skillworks-ignore entries

    @property
    def security_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.dimension is Dimension.SECURITY]

    def has_rule(self, rule_id: str) -> bool:
        return any(f.rule_id == rule_id for f in self.findings)


@dataclass
class JudgeCriterion:
    criterion: str
    scores: dict[str, float]  # model -> 0..10
    mean: float
    spread: float  # max - min over judges (0 with one judge)


@dataclass
class JudgeReport:
    models: list[str]
    criteria: list[JudgeCriterion]
    mean: float  # mean over criteria, 0..10
    errors: dict[str, str] = field(default_factory=dict)  # model -> why it gave no usable answer


@dataclass
class CheckReport:
    skills: list[SkillReport]
    fail_under: int
    lint_tools: dict[str, bool] = field(default_factory=dict)  # ruff/shellcheck/bash available
    lint_problems: list[str] = field(default_factory=list)  # linter runs that timed out or gave unreadable output
    workers: int = 1  # scan processes that shared the skills (the report is the same for any number)

    def failed(self) -> list[SkillReport]:
        """Skills that fail the gate: score under `fail_under`, or a blocking finding (an error that
        makes harnesses refuse the skill, or an error-severity security finding)."""
        return [s for s in self.skills if s.overall < self.fail_under or s.blocking]

    @property
    def passed(self) -> bool:
        return not self.failed()
