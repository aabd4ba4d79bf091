"""`skillworks check`'s human output: plain text that reads well in an 80-column terminal or a CI log.

One summary line per skill, then each skill's findings: severity, rule and place on one line, the message,
evidence and (for security findings) the reason for the severity indented below, wrapped to the width.
Built as one string (no table layout pass), so it costs about what the JSON report costs."""

from __future__ import annotations

import textwrap

from skillworks.check.model import SCORED_DIMENSIONS, CheckReport, Finding, Severity, SkillReport

_INDENT = " " * 11


def _wrap(text: str, width: int, indent: str = _INDENT) -> list[str]:
    if len(indent) + len(text) <= width and "\n" not in text and "\t" not in text:
        return [indent + text]  # the common case: no wrapping pass
    return textwrap.wrap(
        " ".join(text.split()),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    ) or [indent]


def _finding_lines(f: Finding, width: int) -> list[str]:
    where = f"{f.file or ''}{':' + str(f.line) if f.line else ''}"
    head = f"  {f.severity.value:<8} {f.rule_id}"
    lines = [f"{head}  {where}"] if len(head) + 2 + len(where) <= width else [head, *_wrap(where, width)]
    lines += _wrap(f.message, width)
    if f.evidence:
        lines += _wrap(f"evidence: {f.evidence}", width)
    if f.reason:
        lines += _wrap(f"why: {f.reason}", width)
    return lines


def _label(skill: SkillReport, names: list[str]) -> str:
    label = skill.name or skill.root.name
    return str(skill.root) if names.count(label) > 1 else label


def to_text(report: CheckReport, *, verbose: bool = False, width: int = 80) -> str:
    """The report as plain text wrapped to `width` columns. Info findings only with `verbose`."""
    failed = {id(s) for s in report.failed()}
    names = [s.name or s.root.name for s in report.skills]
    out: list[str] = ["            security", "score grade findings gate  skill"]
    for s in report.skills:
        gate = "FAIL" if id(s) in failed else "pass"
        prefix = f"{s.overall:>5} {s.grade:<5} {len(s.security_findings):>8} {gate}  "
        wrapped = _wrap(_label(s, names), width, " " * len(prefix))
        out.append(prefix + wrapped[0].lstrip())
        out += wrapped[1:]
    hidden = 0
    for s in report.skills:
        shown = [f for f in s.findings if verbose or f.severity is not Severity.INFO]
        hidden += len(s.findings) - len(shown)
        if not shown and s.judge is None:
            continue
        out.append("")
        label = _label(s, names)
        out += _wrap(label if label == str(s.root) else f"{label}  ({s.root})", width, "")
        dims = ", ".join(f"{d.value} {s.scores.get(d, 0)}" for d in SCORED_DIMENSIONS)
        out += _wrap(
            f"score {s.overall} ({s.grade}): {dims}; {len(s.security_findings)} security finding(s)", width, "  "
        )
        for f in shown:
            out += _finding_lines(f, width)
        if s.judge is not None:
            out.append(f"  LLM judge ({', '.join(s.judge.models)}): mean {s.judge.mean:.1f}/10")
            for c in s.judge.criteria:
                out.append(f"    {c.criterion:<24} {c.mean:>4.1f}  spread {c.spread:.1f}")
            for model, why in s.judge.errors.items():
                out += _wrap(f"judge {model}: {why}", width, "    ")
    missing = [tool for tool, ok in report.lint_tools.items() if not ok]
    out.append("")
    if missing:
        out += _wrap(f"not installed, lint skipped: {', '.join(missing)}", width, "")
    tail = f"; {hidden} info finding(s) hidden (--verbose shows them)" if hidden else ""
    out += _wrap(
        f"{len(report.skills)} skill(s), {len(failed)} failing the gate (score < {report.fail_under} or a "
        f"blocking error: spec violation or security){tail}",
        width,
        "",
    )
    return "\n".join(out)
