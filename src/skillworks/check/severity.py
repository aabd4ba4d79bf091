"""The severity model of security findings: a regex hit becomes an error only when it is a confident hit
in text the agent is told to follow (an instruction) or in a script it runs. Everything else is a warning
or an info finding that says why it was not blocking.

Confidence starts at the pattern's own level and drops one step for each sign that the text describes
the danger rather than asks for it: quoted, next to a warning word ("avoid", "attacker", "detect"), in a
test fixture, in a template or asset, in a skill whose subject is security itself. Documented placeholder
credentials are low confidence wherever they sit."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillworks.check.context import Spot
from skillworks.check.model import Confidence, Context, Finding, Severity
from skillworks.check.rules import RULES, finding

_DOWN = {Confidence.HIGH: Confidence.MEDIUM, Confidence.MEDIUM: Confidence.LOW, Confidence.LOW: Confidence.LOW}
_CONTEXT_WORDS = {
    Context.SCRIPT: "in a script",
    Context.PROSE: "in the instructions",
    Context.EXAMPLE: "in a fenced example",
    Context.QUOTED: "quoted",
    Context.TEST: "in a test fixture",
    Context.ASSET: "in a template or asset file",
}
# rules about phrases (what the agent is told) vs commands (what it runs)
PHRASE_RULES = frozenset({"sec-prompt-injection", "sec-hidden-text"})


@dataclass
class Assessment:
    """How one hit is judged: start from the pattern's confidence, then `lower` it with a reason."""

    context: Context
    confidence: Confidence
    instruction: bool
    reasons: list[str] = field(default_factory=list)

    def lower(self, reason: str, steps: int = 1, *, instruction: bool | None = False) -> None:
        for _ in range(steps):
            self.confidence = _DOWN[self.confidence]
        if instruction is not None:
            self.instruction = instruction
        self.reasons.append(reason)


def assess(rule_id: str, spot: Spot, confidence: Confidence, topic: str | None) -> Assessment:
    """Judge one hit from where it sits. `topic` names the security subject of the skill, if it has one."""
    ctx = spot.context
    a = Assessment(ctx, confidence, instruction=ctx in (Context.PROSE, Context.EXAMPLE))
    if ctx is not Context.QUOTED:
        a.reasons.append(_CONTEXT_WORDS[ctx])
    if rule_id == "sec-secret":
        # a real credential leaks wherever it sits; only test fixtures (scanners' samples) are softened
        a.instruction = ctx is not Context.TEST
        if ctx is Context.TEST:
            a.lower("test fixtures hold sample credentials")
        return a
    if ctx is Context.QUOTED:
        a.lower("quoted, not said in the skill's own voice", 2 if rule_id in PHRASE_RULES else 1)
    elif spot.quoted and ctx is Context.SCRIPT and rule_id in PHRASE_RULES:
        a.lower("a string in a script, not text the agent reads")
    elif spot.quoted and ctx is Context.EXAMPLE and rule_id in PHRASE_RULES:
        a.lower("a string in a code example, not text the agent reads")
    if ctx is Context.TEST:
        a.lower("test fixtures hold attack samples on purpose")
    elif ctx is Context.ASSET:
        a.lower("templates and assets are not instructions")
    if spot.cue:
        a.lower(f"presented as something to avoid or detect ({spot.cue!r} nearby)")
    # the description is the author's (or attacker's) word: it may soften what the agent is told (phrases),
    # never a command the skill runs or tells the agent to run
    if topic and rule_id in PHRASE_RULES and ctx is not Context.SCRIPT:
        a.lower(f"the skill is about {topic}, so it describes attacks")
    return a


def decide(rule_id: str, a: Assessment) -> Severity:
    """Error only for a high-confidence hit in an instruction or a script; otherwise warning, or info when
    the confidence is low."""
    base = RULES[rule_id].severity
    if base is Severity.INFO or a.confidence is Confidence.LOW:
        return Severity.INFO
    if base is Severity.ERROR and a.confidence is Confidence.HIGH and (a.instruction or a.context is Context.SCRIPT):
        return Severity.ERROR
    return Severity.WARNING


def security_finding(
    rule_id: str, message: str, rel: str | None, line: int | None, evidence: str | None, a: Assessment
) -> Finding:
    base = finding(rule_id, message, rel, line, evidence)
    severity = decide(rule_id, a)
    reason = "; ".join(a.reasons)
    if severity is not RULES[rule_id].severity:
        reason += f" -> {severity.value}, not {RULES[rule_id].severity.value}"
    return Finding(
        rule_id=base.rule_id,
        dimension=base.dimension,
        severity=severity,
        message=message,
        file=rel,
        line=line,
        evidence=base.evidence,
        context=a.context,
        instruction=a.instruction,
        confidence=a.confidence,
        reason=reason,
    )
