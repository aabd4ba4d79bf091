"""Shape classification (workflow / dispatcher / reference / insufficient) from structural features.

Each feature adds a weighted vote for one shape and is recorded as evidence; the shape with the highest
total wins (ties: workflow, dispatcher, reference). A body with too little to act on, or no shape reaching
the threshold, is `insufficient`. Deterministic and offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillworks.compile.contract import Evidence, Shape
from skillworks.compile.features import Features

MIN_WORDS = 40
THRESHOLD = 2.0
_ORDER: tuple[Shape, ...] = ("workflow", "dispatcher", "reference")
_SUBCOMMAND = re.compile(r"^(?:python3?|bash|sh|node|\./)?\s*(\S+\.(?:py|sh|js|mjs|ts|rb|pl))\s+([a-z][a-z0-9_-]+)\b")
_SCRIPT_CALL = re.compile(r"(\S+\.(?:py|sh|js|mjs|ts|rb|pl))\b")


@dataclass(frozen=True)
class Classification:
    shape: Shape
    scores: dict[str, float]
    evidence: list[Evidence]


def entry_points(feats: Features) -> set[str]:
    """Distinct things the skill can be asked to run: script subcommands, else scripts, else command heads."""
    points: set[str] = set()
    for cmd in feats.commands:
        sub = _SUBCOMMAND.search(cmd.text)
        if sub and not sub.group(2).startswith("-") and "." not in sub.group(2) and "/" not in sub.group(2):
            points.add(f"{sub.group(1).rsplit('/', 1)[-1]} {sub.group(2)}")
            continue
        call = _SCRIPT_CALL.search(cmd.text)
        if call:
            points.add(call.group(1).rsplit("/", 1)[-1])
        elif not any(i.line_start <= cmd.line <= i.line_end for i in feats.ordered):
            points.add(cmd.text.split("|")[0].strip()[:60])  # a menu of commands outside any procedure
    return points


def classify(feats: Features) -> Classification:
    evidence: list[Evidence] = []
    scores: dict[str, float] = {s: 0.0 for s in _ORDER}

    def vote(feature: str, value: float, shape: Shape | None, weight: float, note: str) -> None:
        evidence.append(Evidence(feature=feature, value=value, supports=shape if weight else None, note=note))
        if shape is not None and weight:
            scores[shape] += weight

    step_commands = sum(1 for c in feats.commands if any(i.line_start <= c.line <= i.line_end for i in feats.ordered))
    points = entry_points(feats)
    sequential = feats.longest_run
    procedural = bool(step_commands or feats.step_sections or feats.step_headings)
    vote(
        "ordered_steps",
        sequential,
        "workflow",
        (2.0 if procedural else 1.0) if sequential >= 3 else 0.0,
        "longest run of numbered steps (full weight under a Workflow/Steps heading or with commands in them)",
    )
    vote("long_procedure", sequential, "workflow", 1.0 if sequential >= 5 else 0.0, "five or more numbered steps")
    vote(
        "step_sections",
        feats.step_sections,
        "workflow",
        1.0 if feats.step_sections else 0.0,
        "headings such as Workflow / Steps / Procedure",
    )
    vote(
        "commands_in_steps",
        step_commands,
        "workflow",
        1.0 if step_commands and sequential >= 2 else 0.0,
        "command lines inside numbered steps",
    )
    vote(
        "verification_cues",
        feats.verify_cues,
        "workflow",
        0.5 if feats.verify_cues and sequential >= 2 else 0.0,
        "verify / validate / check wording",
    )
    vote(
        "entry_points",
        len(points),
        "dispatcher",
        2.0 if len(points) >= 3 else 1.0 if len(points) == 2 else 0.0,
        "distinct scripts or subcommands to run: " + ", ".join(sorted(points)[:6]),
    )
    vote(
        "function_signatures",
        feats.signatures,
        "dispatcher",
        1.0 if feats.signatures >= 2 else 0.0,
        "function or command signatures",
    )
    vote(
        "dispatch_sections",
        feats.dispatch_sections,
        "dispatcher",
        1.0 if feats.dispatch_sections else 0.0,
        "headings such as Commands / Operations / Usage / API",
    )
    vote("scripts", len(feats.scripts), "dispatcher", 1.0 if len(feats.scripts) >= 2 else 0.0, "bundled scripts")
    vote("sections", len(feats.headings), "reference", 1.0 if len(feats.headings) >= 4 else 0.0, "headed sections")
    vote(
        "reference_sections",
        feats.reference_sections,
        "reference",
        1.0 if feats.reference_sections >= 2 else 0.5 if feats.reference_sections else 0.0,
        "headings such as Reference / Conventions / Rules / Glossary",
    )
    vote("tables", feats.table_rows, "reference", 1.0 if feats.table_rows >= 4 else 0.0, "table rows")
    vote(
        "reference_files",
        len(feats.references),
        "reference",
        1.0 if feats.references else 0.0,
        "bundled reference documents",
    )
    density = (feats.bullets + feats.table_rows) / max(1, feats.words / 100)
    vote(
        "reference_density",
        round(density, 2),
        "reference",
        1.0 if density >= 3 and not feats.commands else 0.0,
        "bullets and table rows per 100 words, no commands",
    )
    prose_only = not feats.commands and not feats.scripts and feats.words >= 100 and len(feats.headings) >= 3
    vote(
        "prose_without_commands",
        feats.words,
        "reference",
        1.0 if prose_only else 0.0,
        "sectioned prose with nothing to run",
    )
    vote(
        "step_headings",
        feats.step_headings,
        "workflow",
        2.0 if feats.step_headings >= 2 else 0.0,
        "headings such as Step 1 / Phase 2",
    )
    vote(
        "tool_menu",
        feats.tool_names,
        "dispatcher",
        4.0 if feats.tool_names >= 3 else 0.0,
        "distinct TOOL_NAME identifiers to call",
    )
    vote(
        "library_code",
        feats.program_blocks,
        "reference",
        2.0 if feats.program_blocks >= 3 and feats.step_headings < 2 else 0.0,
        "code samples in a programming language (usage of a library)",
    )
    vote("setup_requirements", feats.setup_cues, None, 0.0, "install / prerequisite cues (risk, not shape)")

    if feats.words < MIN_WORDS and not feats.scripts:
        evidence.append(
            Evidence(
                feature="too_short",
                value=feats.words,
                supports="insufficient",
                note=f"fewer than {MIN_WORDS} words and no scripts",
            )
        )
        return Classification("insufficient", scores, evidence)
    thin = feats.table_rows < 3 and feats.bullets < 5 and feats.longest_run < 3
    if feats.words < 200 and thin and not feats.commands and not feats.scripts and not feats.code_blocks:
        evidence.append(
            Evidence(
                feature="stub",
                value=feats.words,
                supports="insufficient",
                note="under 200 words with no commands, code, scripts, lists or tables",
            )
        )
        return Classification("insufficient", scores, evidence)
    if feats.persona_cues and not feats.commands and not feats.scripts:
        evidence.append(
            Evidence(
                feature="persona",
                value=feats.persona_cues,
                supports="insufficient",
                note="a persona prompt with nothing to run",
            )
        )
        return Classification("insufficient", scores, evidence)
    best = max(_ORDER, key=lambda s: (scores[s], -_ORDER.index(s)))
    if scores[best] < THRESHOLD:
        evidence.append(
            Evidence(
                feature="below_threshold",
                value=scores[best],
                supports="insufficient",
                note=f"no shape reached {THRESHOLD}",
            )
        )
        return Classification("insufficient", scores, evidence)
    return Classification(best, scores, evidence)
