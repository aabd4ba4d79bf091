"""`skillworks check`'s human output: plain text that reads well in an 80-column terminal or a CI log.

One summary line per skill, then each skill's findings: severity, rule and place on one line, the message,
evidence and (for security findings) the reason for the severity indented below, wrapped to the width.
Built as one string with a greedy word wrap (no table layout pass, no textwrap), so it costs no more than
the JSON report.

A skill is labelled by its name. Skills that share a name (common in a tree of many repositories) are
labelled by the shortest end of their paths that tells them apart (`acme@tools/skills/pdf` and
`anthropics-skills/skills/pdf`), so the labels stay short at 80 columns and each still names one skill;
the skill's full path is in its detail section, broken at `/` when it is longer than a line.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from skillworks.check.model import SCORED_DIMENSIONS, CheckReport, Finding, Severity, SkillReport

_INDENT = " " * 11


def _wrap(text: str, width: int, indent: str = _INDENT) -> list[str]:
    """Greedy word wrap: words split on whitespace, a word longer than a line cut into pieces."""
    if len(indent) + len(text) <= width and "\n" not in text and "\t" not in text:
        return [indent + text]  # the common case: no wrapping pass
    room = max(1, width - len(indent))
    lines: list[str] = []
    current = ""
    for word in text.split():
        while len(word) > room:  # a word longer than the line: fill the line, go on with the rest
            if current:
                cut = room - len(current) - 1
                if cut > 0:
                    lines.append(f"{indent}{current} {word[:cut]}")
                    word = word[cut:]
                else:
                    lines.append(indent + current)
                current = ""
            else:
                lines.append(indent + word[:room])
                word = word[room:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= room:
            current = f"{current} {word}"
        else:
            lines.append(indent + current)
            current = word
    if current:
        lines.append(indent + current)
    return lines or [indent]


def _wrap_path(path: str, width: int, indent: str) -> list[str]:
    """A path over several lines, broken after a `/` where it can be."""
    room = max(1, width - len(indent))
    lines: list[str] = []
    while len(path) > room:
        cut = path.rfind("/", 0, room) + 1 or room
        lines.append(indent + path[:cut])
        path = path[cut:]
    return [*lines, indent + path]


def skill_labels(skills: list[SkillReport]) -> list[str]:
    """A short label per skill: its name, or for skills sharing a name the shortest end of their paths that
    differs between them (with the name in front when the directory is named otherwise)."""
    names = [s.name or s.root.name for s in skills]
    counts = Counter(names)
    labels = list(names)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(names):
        if counts[name] > 1:
            groups[name].append(i)
    for name, members in groups.items():
        parts = [Path(skills[i].root).absolute().parts for i in members]
        depth = dict.fromkeys(range(len(members)), 0)  # member -> components its label needs, once known
        k = 0
        while any(v == 0 for v in depth.values()) and k < max(len(p) for p in parts):
            k += 1
            ends = Counter(p[-k:] for p in parts)
            for m, p in enumerate(parts):
                if depth[m] == 0 and (ends[p[-k:]] == 1 or k >= len(p)):
                    depth[m] = k  # no other member's path ends the same way (or the whole path is used)
        for m, (i, p) in enumerate(zip(members, parts, strict=True)):
            tail = "/".join(p[-(depth[m] or len(p)) :]).removeprefix("//")
            labels[i] = tail if p[-1] == name else f"{name} ({tail})"
    return labels


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


def to_text(report: CheckReport, *, verbose: bool = False, width: int = 80) -> str:
    """The report as plain text wrapped to `width` columns. Info findings only with `verbose`."""
    return "\n".join(text_lines(report, verbose=verbose, width=width))


def text_lines(report: CheckReport, *, verbose: bool = False, width: int = 80) -> Iterator[str]:
    """The lines of `to_text`, one at a time: a caller that writes them as they come never holds the
    whole report (a mirror-sized scan prints some 25 MB of text)."""
    failed = {id(s) for s in report.failed()}
    labels = skill_labels(report.skills)
    yield "            security"
    yield "score grade findings gate  skill"
    for s, label in zip(report.skills, labels, strict=True):
        gate = "FAIL" if id(s) in failed else "pass"
        prefix = f"{s.overall:>5} {s.grade:<5} {len(s.security_findings):>8} {gate}  "
        wrapped = _wrap(label, width, " " * len(prefix))
        yield prefix + wrapped[0].lstrip()
        yield from wrapped[1:]
    hidden = 0
    for s, label in zip(report.skills, labels, strict=True):
        shown = [f for f in s.findings if verbose or f.severity is not Severity.INFO]
        hidden += len(s.findings) - len(shown)
        if not shown and s.judge is None and not s.suppressed and not s.ignore_warnings:
            continue
        yield ""
        yield from _wrap(label, width, "")
        yield from _wrap_path(f"path: {s.root}", width, "  ")
        dims = ", ".join(f"{d.value} {s.scores.get(d, 0)}" for d in SCORED_DIMENSIONS)
        yield from _wrap(
            f"score {s.overall} ({s.grade}): {dims}; {len(s.security_findings)} security finding(s)", width, "  "
        )
        for f in shown:
            yield from _finding_lines(f, width)
        for x in s.suppressed:
            where = f"{x.finding.file or ''}{':' + str(x.finding.line) if x.finding.line else ''}"
            yield from _wrap(f"suppressed {x.finding.rule_id}  {where}", width, "  ")
            yield from _wrap(f"reason: {x.reason} ({x.source})", width)
        for w in s.ignore_warnings:
            yield from _wrap(f"warning: {w}", width, "  ")
        if s.judge is not None:
            yield f"  LLM judge ({', '.join(s.judge.models)}): mean {s.judge.mean:.1f}/10"
            for c in s.judge.criteria:
                yield f"    {c.criterion:<24} {c.mean:>4.1f}  spread {c.spread:.1f}"
            for model, why in s.judge.errors.items():
                yield from _wrap(f"judge {model}: {why}", width, "    ")
    missing = [tool for tool, ok in report.lint_tools.items() if not ok]
    yield ""
    if missing:
        yield from _wrap(f"not installed, lint skipped: {', '.join(missing)}", width, "")
    for problem in report.lint_problems:
        yield from _wrap(f"lint incomplete: {problem}", width, "")
    tail = f"; {hidden} info finding(s) hidden (--verbose shows them)" if hidden else ""
    n_suppressed = sum(len(s.suppressed) for s in report.skills)
    if n_suppressed:
        tail += f"; {n_suppressed} finding(s) suppressed by .skillworks-ignore"
    yield from _wrap(
        f"{len(report.skills)} skill(s), {len(failed)} failing the gate (score < {report.fail_under} or a "
        f"blocking error: spec violation or security){tail}",
        width,
        "",
    )
