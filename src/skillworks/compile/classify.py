"""Shape classification (workflow / dispatcher / reference / insufficient) from structural features.

The structural signals (`shape_signals`: procedure and menu coverage, steps, entry points, options,
substance...) are recorded as evidence, each with the shape its hand-written threshold points to; the
decision is a small learned model over those signals and text cues (`shape_cues`; `shape_model`:
multinomial logistic regression whose coefficients ship as data, fitted offline on hand labels). A body
under MIN_WORDS words with no scripts is `insufficient` without consulting the model. Deterministic and
offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from skillworks.compile.contract import Evidence, Shape
from skillworks.compile.features import Features
from skillworks.compile.shape_model import SHAPES, shape_vector, shipped_model
from skillworks.compile.shape_signals import ShapeSignals, shape_signals

MIN_WORDS = 40
MIN_SUBSTANCE = 80  # words outside When to use / Overview / Related / Examples for a reference
MIN_STEPS = 3
MIN_OPERATIONS = 3
MIN_ROWS = 2  # commands listed under a Commands / Operations / Tools heading
PROCEDURE_SHARE = 0.25
SCRIPTED_PROCEDURE_SHARE = 0.15  # enough when the procedure runs the skill's own executables
MENU_SHARE = 0.25
MIN_SCRIPTS = 2  # bundled executables the body tells the agent to run: a script inventory is a menu
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
    """The shipped model's shape over the structural signals (all recorded as evidence); `scores` are its
    probabilities (x4), for the judge. Under MIN_WORDS words and no scripts: insufficient."""
    evidence, vector = _evidence_and_inputs(feats)
    if feats.words < MIN_WORDS and not feats.scripts:
        evidence.append(
            Evidence(
                feature="too_short",
                value=feats.words,
                supports="insufficient",
                note=f"fewer than {MIN_WORDS} words and no scripts",
            )
        )
        return Classification("insufficient", {s: 0.0 for s in SHAPES}, evidence)
    proba = shipped_model().probabilities(vector)
    shape = cast(Shape, max(SHAPES, key=proba.__getitem__))
    evidence.append(
        Evidence(
            feature="shape_model",
            value=round(proba[shape], 3),
            supports=shape,
            note="logistic regression over the signals above: " + ", ".join(f"p({s})={proba[s]:.2f}" for s in SHAPES),
        )
    )
    return Classification(shape, {s: round(4 * proba[s], 2) for s in SHAPES}, evidence)


def model_inputs(feats: Features) -> list[float]:
    """The shape model's input vector for these features (what benchmarks/train_shape_model.py fits on)."""
    return _evidence_and_inputs(feats)[1]


def _evidence_and_inputs(feats: Features) -> tuple[list[Evidence], list[float]]:
    sig = shape_signals(feats, feats.body)
    points = entry_points(feats)
    evidence: list[Evidence] = []

    def note(feature: str, value: float, shape: Shape | None, holds: bool, text: str) -> None:
        evidence.append(Evidence(feature=feature, value=value, supports=shape if holds else None, note=text))

    share_needed = SCRIPTED_PROCEDURE_SHARE if sig.procedure_runs_scripts else PROCEDURE_SHARE
    procedure = sig.steps >= MIN_STEPS and sig.procedure_share >= share_needed
    menu = sig.menu_sections >= MIN_OPERATIONS and sig.menu_share >= MENU_SHARE
    command_menu = (
        len(points) >= MIN_OPERATIONS and sig.options >= MIN_OPERATIONS and sig.procedure_share < PROCEDURE_SHARE
    )
    row_menu = sig.command_rows >= MIN_ROWS or sig.subcommands >= MIN_OPERATIONS
    one_command = sig.options >= MIN_OPERATIONS and len(points) <= 2 and bool(feats.commands) and sig.words < 600
    note(
        "steps",
        sig.steps,
        "workflow",
        sig.steps >= MIN_STEPS,
        "step headings (Step/Phase N) and imperative numbered items",
    )
    note(
        "procedure_share",
        sig.procedure_share,
        "workflow",
        procedure,
        f"share of the substantive words inside the procedure (workflow at >= {PROCEDURE_SHARE}, "
        f"{SCRIPTED_PROCEDURE_SHARE} when it runs the skill's executables)",
    )
    note(
        "operation_sections",
        sig.menu_sections,
        "dispatcher",
        menu,
        "sibling sections that each bring an operation: " + ", ".join(sig.menu_callables[:6]),
    )
    note("menu_share", sig.menu_share, "dispatcher", menu, f"share of the words in those sections (>= {MENU_SHARE})")
    note(
        "entry_points",
        len(points),
        "dispatcher",
        len(points) >= MIN_OPERATIONS,
        "distinct scripts or subcommands to run: " + ", ".join(sorted(points)[:6]),
    )
    note(
        "command_rows",
        max(sig.command_rows, sig.subcommands),
        "dispatcher",
        row_menu,
        "list/table rows that each carry a command, or subcommands of one tool",
    )
    note("options", sig.options, "dispatcher", command_menu or one_command, "documented --options of a command")
    note(
        "substantive_words",
        sig.substantive_words,
        "reference",
        sig.substantive_words >= MIN_SUBSTANCE,
        "words outside When to use / Overview / Related / Examples",
    )
    note("setup_requirements", feats.setup_cues, None, False, "install / prerequisite cues (risk, not shape)")
    other_menu = command_menu or one_command or row_menu or len(feats.scripts_referenced) >= MIN_SCRIPTS
    rule = _rule_shape(feats, sig, procedure, menu, other_menu)
    note("hand_rules", 1.0, rule, True, "the shape the thresholds above point to (evidence, not a model input)")
    return evidence, shape_vector(feats, sig, len(points))


def _rule_shape(feats: Features, sig: ShapeSignals, procedure: bool, menu: bool, other_menu: bool) -> Shape:
    """The hand-written decision: the larger of a procedure and a menu, else a menu of commands, rows or
    scripts, else substance; a stub or persona with nothing to run is insufficient."""
    runnable = bool(feats.commands or feats.scripts)
    if _insufficient(feats, sig.substantive_words, runnable, procedure) is not None:
        return "insufficient"
    if procedure and menu:
        return "workflow" if sig.procedure_share >= sig.menu_share else "dispatcher"
    if procedure:
        return "workflow"
    if menu or other_menu:
        return "dispatcher"
    if sig.substantive_words >= MIN_SUBSTANCE or feats.program_blocks or feats.table_rows >= 3:
        return "reference"
    return "insufficient"


def _insufficient(feats: Features, substantive: int, runnable: bool, procedure: bool) -> Evidence | None:
    if feats.words < MIN_WORDS and not feats.scripts:
        return Evidence(
            feature="too_short",
            value=feats.words,
            supports="insufficient",
            note=f"fewer than {MIN_WORDS} words and no scripts",
        )
    thin = feats.table_rows < 3 and feats.bullets < 5 and feats.longest_run < 3
    if feats.words < 200 and thin and not (runnable or procedure) and not feats.code_blocks and len(feats.headings) < 3:
        return Evidence(
            feature="stub",
            value=feats.words,
            supports="insufficient",
            note="under 200 words with no commands, code, scripts, lists or tables",
        )
    if substantive < MIN_SUBSTANCE // 2 and not (runnable or procedure):
        return Evidence(
            feature="stub",
            value=substantive,
            supports="insufficient",
            note=f"under {MIN_SUBSTANCE // 2} words outside When to use / Overview / Related, nothing to run",
        )
    if feats.persona_cues and not runnable:
        return Evidence(
            feature="persona",
            value=feats.persona_cues,
            supports="insufficient",
            note="a persona prompt with nothing to run",
        )
    return None
