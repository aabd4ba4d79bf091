"""Lowerings: workflow → a validated step graph; reference → indexed sections; every package → text chunks
for the capsule. (Dispatcher → operator registry lives in `operators`.)"""

from __future__ import annotations

import re
import subprocess
from graphlib import CycleError, TopologicalSorter

from skillworks.compile.contract import Chunk, Operator, Section, SourceRef, Step, StepGraph, StepType
from skillworks.compile.effects import shell_effects
from skillworks.compile.features import Features, ListItem
from skillworks.compile.operators import slug
from skillworks.skills.package import SkillPackage

CHUNK_LINES = 40
_DOC_PLACEHOLDER = re.compile(r"<[A-Za-z][\w. -]*>")  # <invoice.json> in docs is a slot, not a redirect
_FILE_TOKEN = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:csv|json|jsonl|md|txt|xlsx|yaml|yml|xml|html|pdf|log|"
    r"tsv|parquet|sql|png|svg|docx))\b"
)
# the last cue before a file names its role: written by this step, or read by it
_OUTPUT_CUE = re.compile(
    r"(?:>>?|\btee\b|(?<!\w)-o\b|--out\w*|--output\w*|--summary|--save\w*|--dest\w*|→|->|\binto\b|"
    r"\b(?:writes?|wrote|written|produces?|produced|creates?|created|saves?|saved|generates?|generated|exports?|"
    r"exported|outputs?|emits?|stores?|dumps?|renders?)\b)",
    re.I,
)
_INPUT_CUE = re.compile(
    r"(?:<|\b(?:from|reads?|read|loads?|opens?|parses?|inspects?|uses?|using|given|input|takes?|with|of|in)\b)", re.I
)
_STEP_REFERENCE = re.compile(r"\b(?:step|phase|stage)\s+(\d+)\b", re.I)
_CUE_WINDOW = 48
_STEP_SECTION = re.compile(r"\b(?:workflow|steps?|procedure|how to|process|instructions|quick ?start|usage)\b", re.I)
_SCRIPT_MENTION = re.compile(r"\b(scripts/[\w./-]+\.\w+)")


def shell_problems(snippets: list[str]) -> list[str]:
    """`bash -n` over every snippet; one subprocess when all parse, then one per snippet to name the bad one."""
    if not snippets:
        return []

    def parses(text: str) -> str | None:
        try:
            done = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bash -n could not run: {exc}"
        return None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["syntax error"])[-1]

    snippets = [_DOC_PLACEHOLDER.sub("PLACEHOLDER", s) for s in snippets]
    if parses("\n".join(f"{{ {s}\n}}" for s in snippets)) is None:
        return []
    problems = []
    for s in snippets:
        err = parses(s)
        if err is not None:
            problems.append(f"command does not parse: {s[:80]!r} ({err.removeprefix('bash: ')})")
    return problems or ["the commands do not parse together"]


def _step_type(item: ListItem, has_script: bool, has_command: bool) -> StepType:
    if has_script:
        return "script"
    if has_command:
        return "command"
    if re.search(r"\b(?:verify|validate|check|confirm|assert|compare)\b", item.text, re.I):
        return "check"
    return "instruction"


def _steps_source(feats: Features) -> list[ListItem]:
    """The numbered items that form the procedure: the run in one section that looks most like one (a
    Workflow/Steps heading, commands in its items, then length; ties: the first)."""
    runs: list[list[ListItem]] = []
    for item in feats.ordered:
        if runs and runs[-1][-1].section == item.section and item.number == runs[-1][-1].number + 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    if not runs:
        return []
    lines = {c.line for c in feats.commands}

    def score(run: list[ListItem]) -> tuple[int, int, int]:
        commands = sum(1 for i in run for line in lines if i.line_start <= line <= i.line_end)
        return (1 if _STEP_SECTION.search(run[0].section) else 0, min(commands, 1), len(run))

    return max(runs, key=score)


def _files_by_role(text: str) -> tuple[list[str], list[str]]:
    """(inputs, outputs): each file a step names is an output when the nearest cue before it is a writing one
    (`> f`, `-o f`, `--out f`, "write/save/produce ... f", "→ f"), else an input."""
    inputs: list[str] = []
    outputs: list[str] = []
    for m in _FILE_TOKEN.finditer(text):
        before = text[max(0, m.start() - _CUE_WINDOW) : m.start()]
        out_at = max((c.end() for c in _OUTPUT_CUE.finditer(before)), default=-1)
        in_at = max((c.end() for c in _INPUT_CUE.finditer(before)), default=-1)
        role = outputs if out_at > in_at else inputs
        if m.group(1) not in role:
            role.append(m.group(1))
    return [f for f in inputs if f not in outputs], outputs


def _step_items(package: SkillPackage, feats: Features) -> list[ListItem]:
    """The procedure's steps: its step sections (`## Step 2: ...`, `### Phase 1`) when it has two or more, each
    with the text under it; else the numbered run that looks most like the procedure."""
    from skillworks.compile.shape_signals import shape_signals

    spans = shape_signals(feats, feats.body).step_spans
    if len(spans) < 2:
        return _steps_source(feats)
    lines = (package.root / "SKILL.md").read_text(encoding="utf-8", errors="replace").splitlines()
    items = []
    for k, (first, last, title) in enumerate(spans, start=1):
        number = re.search(r"\d+", title)
        body = " ".join(line.strip() for line in lines[first : max(first, last)])
        items.append(ListItem(int(number.group()) if number else k, f"{title}. {body}", first, last, title))
    return items


def lower_workflow(package: SkillPackage, feats: Features, operators: list[Operator]) -> StepGraph:
    items = _step_items(package, feats)
    steps: list[Step] = []
    produced: dict[str, str] = {}  # file -> step id
    by_number: dict[int, str] = {}  # the step's own number in the source -> step id
    problems: list[str] = []
    asset_paths = {a.path for a in package.assets}
    commands_by_line = {c.line: c for c in feats.commands}
    for k, item in enumerate(items, start=1):
        sid = f"s{k}"
        commands = [c for line, c in commands_by_line.items() if item.line_start <= line <= item.line_end]
        op = next((o for o in operators for c in commands if _runs_command(o, c.text, c.line)), None)
        for mention in _SCRIPT_MENTION.findall(item.text):
            if mention not in asset_paths:
                problems.append(f"{sid}: references {mention}, which is not in the package")
        named_inputs, named_outputs = _files_by_role(item.text)
        outputs = sorted(f for f in named_outputs if f not in asset_paths)
        inputs = sorted(f for f in named_inputs if f not in asset_paths and not f.startswith("scripts/"))
        inputs += sorted(f for f in named_outputs if f in produced and f not in inputs)  # updated in place
        from_heading = bool(item.section) and item.text.startswith(item.section + ". ")
        name = (item.section if from_heading else re.split(r"(?<=[.:])\s", item.text, maxsplit=1)[0])[:80]
        step_risks = sorted(set(shell_effects("\n".join(c.text for c in commands)).flags) | set(op.risks if op else []))
        execution = op.execution if op is not None else None
        referenced = {  # "the list from step 2"; a match at the start is the step's own title
            by_number[int(m.group(1))]
            for m in _STEP_REFERENCE.finditer(item.text)
            if m.start() > 0 and int(m.group(1)) in by_number
        }
        steps.append(
            Step(
                id=sid,
                name=name,
                type=_step_type(item, op is not None, bool(commands)),
                execution=execution,
                operator=op.id if op is not None else None,
                inputs=inputs,
                outputs=outputs,
                depends_on=_dependencies(inputs, produced, referenced - {sid}, k),
                risks=step_risks,
                cacheable=op is not None and not step_risks,
                source=SourceRef(file="SKILL.md", line_start=item.line_start, line_end=item.line_end),
            )
        )
        by_number.setdefault(item.number, sid)
        for f in outputs:
            produced.setdefault(f, sid)
    problems.extend(validate_graph(steps))
    problems.extend(
        shell_problems(
            [c.text for c in feats.commands if any(s.source.line_start <= c.line <= s.source.line_end for s in steps)]
        )
    )
    return StepGraph(steps=steps, valid=not problems, problems=problems)


def _dependencies(inputs: list[str], produced: dict[str, str], referenced: set[str], k: int) -> list[str]:
    """Data edges: the steps that produce this step's inputs, and the earlier steps its text names ("the
    list from step 2"). A step that reads nothing an earlier step wrote and names no step follows the step
    before it, as the procedure is written."""
    producers = {produced[f] for f in inputs if f in produced} | referenced
    if producers:
        return sorted(producers, key=lambda sid: int(sid[1:]))
    return [f"s{k - 1}"] if k > 1 else []


def _runs_command(op: Operator, text: str, line: int) -> bool:
    if op.execution.kind == "command":
        return op.source.line_start == line
    script = op.execution.script or ""
    return script.rsplit("/", 1)[-1] in text and (op.execution.template or "") in text


def validate_graph(steps: list[Step]) -> list[str]:
    """Acyclic, dependencies exist, and no step reads a file that only a later step produces."""
    problems: list[str] = []
    ids = {s.id for s in steps}
    for s in steps:
        for dep in s.depends_on:
            if dep not in ids:
                problems.append(f"{s.id}: depends on unknown step {dep}")
    try:
        order = list(TopologicalSorter({s.id: [d for d in s.depends_on if d in ids] for s in steps}).static_order())
    except CycleError as exc:
        return [*problems, f"dependency cycle: {' -> '.join(map(str, exc.args[1]))}"]
    position = {sid: i for i, sid in enumerate(order)}
    for s in steps:
        for f in s.inputs:
            producers = [p for p in steps if f in p.outputs]
            if producers and all(position[p.id] > position[s.id] for p in producers):
                problems.append(f"{s.id}: input {f} is produced only by a later step ({producers[0].id})")
    return problems


def lower_sections(package: SkillPackage, feats: Features) -> list[Section]:
    from skillworks.check.tokens import estimate_tokens

    lines = (package.root / "SKILL.md").read_text(encoding="utf-8", errors="replace").splitlines()
    sections: list[Section] = []
    heads = feats.headings
    for k, h in enumerate(heads):
        end = heads[k + 1].line - 1 if k + 1 < len(heads) else len(lines)
        text = "\n".join(lines[h.line - 1 : end])
        sections.append(
            Section(
                id=f"{slug(h.title)}-{h.line}",
                title=h.title,
                level=h.level,
                tokens=estimate_tokens(text),
                source=SourceRef(file="SKILL.md", line_start=h.line, line_end=max(h.line, end)),
            )
        )
    return sections


def chunk_text(path: str, text: str) -> list[Chunk]:
    """Chunks at Markdown headings, at most CHUNK_LINES lines each (1-based line spans)."""
    lines = text.splitlines()
    chunks: list[Chunk] = []
    start = 0
    for i in range(1, len(lines) + 1):
        at_heading = i < len(lines) and lines[i].startswith("#")
        if i == len(lines) or at_heading or i - start >= CHUNK_LINES:
            body = "\n".join(lines[start:i]).strip()
            if body:
                chunks.append(Chunk(file=path, line_start=start + 1, line_end=i, text=body))
            start = i
    return chunks
