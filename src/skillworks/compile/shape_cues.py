"""Text cues for the shape model, beside the structural signals of `shape_signals`: the wording of the
description and of the headings, numbered headings, how dense commands and inline code are, routing
patterns ("if the user asks X → see Y"), checklists, sequence words, rule words, list items that define a
term ("**Term**: what it is" — facts to consult), and what the package ships (reference files,
executables). Each is a number (counts as log(1 + n), densities per 100 words); pure text analysis, offline
and deterministic."""

from __future__ import annotations

import math
import re

from skillworks.compile.features import Features
from skillworks.compile.shape_signals import is_imperative

_DESC_WORKFLOW = re.compile(
    r"\b(?:steps?|workflow|process|procedure|pipeline|end-to-end|phases?|walks? through|guides? (?:you|the user) "
    r"through|from \w+ to|systematic(?:ally)?|orchestrat\w*)\b",
    re.I,
)
_DESC_DISPATCHER = re.compile(
    r"\b(?:manage|automate|automation|operations?|commands?|cli|api|tools?|toolkit|integration|search|list|"
    r"create|upload|download|query|send|fetch|mcp|endpoints?)\b",
    re.I,
)
_DESC_REFERENCE = re.compile(
    r"\b(?:patterns?|principles|best practices|guide|reference|guidelines|conventions|knowledge|techniques|"
    r"covers|concepts|standards|rules|tips|framework for|strategies)\b",
    re.I,
)
_DESC_PERSONA = re.compile(r"\b(?:expert|specialist|master(?:s|ing)?|simulat\w*|persona|senior)\b", re.I)
_HEAD_WORKFLOW = re.compile(
    r"\b(?:workflow|process|steps?|procedure|phases?|stages?|how to|instructions|pipeline)\b", re.I
)
_HEAD_DISPATCHER = re.compile(
    r"\b(?:commands?|operations?|tools?|api|endpoints?|actions|subcommands?|usage|quick reference|methods)\b",
    re.I,
)
_HEAD_REFERENCE = re.compile(
    r"\b(?:patterns?|principles|concepts?|best practices|guidelines|rules|anti-patterns?|tips|checklist|"
    r"techniques|overview|examples?|pitfalls|mistakes|reference|standards|templates?)\b",
    re.I,
)
_HEAD_PERSONA = re.compile(
    r"\b(?:capabilities|behaviou?ral traits|knowledge base|response approach|purpose|expertise|identity|"
    r"mission|personality|example interactions)\b",
    re.I,
)
_NUMBERED_HEAD = re.compile(r"^(?:\d{1,2}[.)]|\d{1,2}\s|[A-Z][.)]\s)")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_ROUTE = re.compile(
    r"(?:→|->|=>)|\bif (?:the )?(?:user|you|they|request)\b[^.\n]{0,80}\b(?:use|see|run|call|load|read|invoke)\b|"
    r"\buse `[^`]+` (?:for|to|when)\b|\bwhen (?:the )?user (?:asks|wants|says|needs)\b",
    re.I,
)
_CODE_CELL_ROW = re.compile(r"^\s*\|\s*`[^`]+`")
_CHECKBOX = re.compile(r"^\s*[-*]\s+\[[ xX]\]", re.M)
_SEQUENCE = re.compile(r"\b(?:then|next|after that|afterwards|finally|first|once|before proceeding)\b", re.I)
_RULE = re.compile(r"\b(?:must|never|always|avoid|don't|do not|should|prefer)\b", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+\S")
_DEFINITION_ITEM = re.compile(
    r"^\s*(?:[-*+]|\d{1,2}[.)])\s+(?:\*\*[^*\n]{1,60}\*\*|`[^`\n]{1,60}`|[A-Z][\w /-]{0,40}?)\s*(?:[:—–]|\s-\s)"
)
_SLASH_COMMAND = re.compile(r"(?:^|\s|`)/[a-z][\w-]+(?:\s|`|$)", re.M)

CUE_NAMES: tuple[str, ...] = (
    "desc_workflow",
    "desc_dispatcher",
    "desc_reference",
    "desc_persona",
    "log_desc_words",
    "head_workflow_share",
    "head_dispatcher_share",
    "head_reference_share",
    "head_persona_share",
    "words_workflow_share",
    "words_dispatcher_share",
    "words_reference_share",
    "words_persona_share",
    "words_numbered_share",
    "imperative_bullet_share",
    "log_numbered_headings",
    "numbered_heading_share",
    "log_step_headings",
    "log_h2",
    "log_h3_plus",
    "command_density",
    "inline_code_density",
    "code_word_share",
    "log_shell_blocks",
    "log_routes",
    "log_code_cell_rows",
    "imperative_item_share",
    "log_checkboxes",
    "sequence_density",
    "rule_density",
    "definition_item_share",
    "log_slash_commands",
    "log_reference_files",
    "has_scripts",
)


def _lg(n: float) -> float:
    return math.log1p(max(0.0, float(n)))


def shape_cues(feats: Features) -> list[float]:
    """The cues in CUE_NAMES order."""
    body = feats.body
    words = max(1, feats.words)
    per100 = 100.0 / words
    desc = feats.description
    titles = [h.title for h in feats.headings]
    n_heads = max(1, len(titles))

    def head_share(pattern: re.Pattern[str]) -> float:
        return sum(1 for t in titles if pattern.search(t)) / n_heads

    section_words = _section_words(feats)

    def word_share(pattern: re.Pattern[str]) -> float:
        return sum(n for title, n in section_words if pattern.search(title)) / words

    numbered = sum(1 for t in titles if _NUMBERED_HEAD.match(t))
    code_words = sum(len(b.text.split()) for b in feats.code_blocks)
    shell_blocks = sum(1 for b in feats.code_blocks if b.lang.lower() in ("sh", "bash", "shell", "zsh", "console"))
    prose = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(("```", "~~~")))
    imperative = sum(1 for item in feats.ordered if is_imperative(item.text))
    return [
        _lg(len(_DESC_WORKFLOW.findall(desc))),
        _lg(len(_DESC_DISPATCHER.findall(desc))),
        _lg(len(_DESC_REFERENCE.findall(desc))),
        _lg(len(_DESC_PERSONA.findall(desc))),
        _lg(len(desc.split())),
        head_share(_HEAD_WORKFLOW),
        head_share(_HEAD_DISPATCHER),
        head_share(_HEAD_REFERENCE),
        head_share(_HEAD_PERSONA),
        word_share(_HEAD_WORKFLOW),
        word_share(_HEAD_DISPATCHER),
        word_share(_HEAD_REFERENCE),
        word_share(_HEAD_PERSONA),
        sum(n for title, n in section_words if _NUMBERED_HEAD.match(title.rsplit(" / ", 1)[-1])) / words,
        _imperative_bullets(body),
        _lg(numbered),
        numbered / n_heads,
        _lg(feats.step_headings),
        _lg(sum(1 for h in feats.headings if h.level <= 2)),
        _lg(sum(1 for h in feats.headings if h.level >= 3)),
        len(feats.commands) * per100,
        len(_INLINE_CODE.findall(body)) * per100,
        min(1.0, code_words / words),
        _lg(shell_blocks),
        _lg(len(_ROUTE.findall(prose))),
        _lg(sum(1 for line in body.splitlines() if _CODE_CELL_ROW.match(line))),
        imperative / max(1, len(feats.ordered)),
        _lg(len(_CHECKBOX.findall(body))),
        len(_SEQUENCE.findall(prose)) * per100,
        len(_RULE.findall(prose)) * per100,
        _definition_items(body),
        _lg(len(_SLASH_COMMAND.findall(body))),
        _lg(len(feats.references)),
        1.0 if feats.scripts else 0.0,
    ]


def _section_words(feats: Features) -> list[tuple[str, int]]:
    """(heading path, words) per section: the title of the section and of its parents, so that the words
    under `### Step 1` count for a `## Workflow` above it."""
    lines = feats.body.splitlines()
    out: list[tuple[str, int]] = []
    stack: list[tuple[int, str]] = []
    for k, heading in enumerate(feats.headings):
        start = heading.line - feats.offset  # body index of the line after the heading
        end = feats.headings[k + 1].line - feats.offset - 1 if k + 1 < len(feats.headings) else len(lines)
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.title))
        n = sum(len(line.split()) for line in lines[start:end])
        out.append((" / ".join(t for _, t in stack), n))
    return out


_BULLET_TEXT = re.compile(r"^\s{0,3}[-*+]\s+(?!\[)(.+)$", re.M)


def _imperative_bullets(body: str) -> float:
    """The share of bullet items that start with a verb telling the agent what to do."""
    items = _BULLET_TEXT.findall(body)
    return sum(1 for item in items if is_imperative(item)) / max(1, len(items))


def _definition_items(body: str) -> float:
    """The share of list items (bulleted or numbered) that define or describe a term ("**Term**: ...",
    "`name` - ...", "Term: ...") rather than say what to do: facts to consult, as in a reference."""
    items = [line for line in body.splitlines() if _LIST_ITEM.match(line)]
    return sum(1 for line in items if _DEFINITION_ITEM.match(line)) / max(1, len(items))
