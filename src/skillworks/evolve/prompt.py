"""The patch prompt: the project's own template (``patch_prompt.md``, overridable with ``--patch-prompt``)
filled with the library tree and files, the trial summary, the final message and the compacted trajectory;
and the system part of the patch call (``patch_system.md``).

A ``--patch-prompt`` template may use this project's placeholders (`PLACEHOLDERS`) or SkillFlow's own
(`SKILLFLOW_PLACEHOLDERS`, the names its user prompt template is filled with), so SkillFlow's template works
as it ships. A template that uses a SkillFlow-only placeholder is taken as SkillFlow writes it, a Python
``str.format`` string: its doubled braces ``{{`` ``}}`` are literal braces. Any other ``{name}`` is a
one-line error listing the allowed ones."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillworks.results import TrialResult
from skillworks.skills.package import iter_package_files

DEFAULT_TEMPLATE = Path(__file__).with_name("patch_prompt.md")
PATCH_SYSTEM = Path(__file__).with_name("patch_system.md").read_text(encoding="utf-8").strip()
CHARS_PER_TOKEN = 4
PLACEHOLDERS = ("library", "position", "total", "family", "instruction", "trial_summary", "final_message", "trajectory")
# the names SkillFlow's user prompt template is filled with (libs/skill_evolution/patcher.py upstream)
SKILLFLOW_PLACEHOLDERS = (
    "tree_json",
    "files_block",
    "task_name",
    "task_source",
    "verifier_passed",
    "reward",
    "exception_info",
    "failed_tests",
    "final_message",
    "trajectory_json",
)
_LIBRARY_PLACEHOLDERS = ("library", "files_block", "tree_json")
_TRAJECTORY_PLACEHOLDERS = ("trajectory", "trajectory_json")
# a bare {name}: JSON in a template ({"summary": ...}) is no placeholder
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# what a str.format template (SkillFlow's) holds: an escaped brace or a placeholder
_FORMAT_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _allowed() -> tuple[str, ...]:
    return (*PLACEHOLDERS, *(p for p in SKILLFLOW_PLACEHOLDERS if p not in PLACEHOLDERS))


def _skillflow_style(template: str) -> bool:
    used = {m.group(1) for m in _PLACEHOLDER.finditer(template)}
    return bool(used & (set(SKILLFLOW_PLACEHOLDERS) - set(PLACEHOLDERS)))


def load_template(path: Path | None) -> str:
    from skillworks.errors import UserError

    path = path or DEFAULT_TEMPLATE
    if not path.is_file():
        raise UserError("patch prompt template not found", path)
    text = path.read_text(encoding="utf-8")
    used = {m.group(1) for m in _PLACEHOLDER.finditer(text)}
    unknown = sorted(used - set(_allowed()))
    if unknown:
        allowed = ", ".join("{" + p + "}" for p in _allowed())
        raise UserError(f"unknown placeholder {{{unknown[0]}}} in the patch prompt (allowed: {allowed})", path)
    if not used & set(_TRAJECTORY_PLACEHOLDERS) or not used & set(_LIBRARY_PLACEHOLDERS):
        raise UserError(
            "a patch prompt template needs the {library} and {trajectory} placeholders "
            "(SkillFlow's: {files_block} or {tree_json}, and {trajectory_json})",
            path,
        )
    return text


def render_library(root: Path, budget_chars: int = 60_000) -> str:
    files = iter_package_files(root) if root.is_dir() else []
    if not files:
        return "(empty: no skill yet)"
    tree = "\n".join(f"- {f.relative_to(root).as_posix()} ({f.stat().st_size} bytes)" for f in files)
    return tree + "\n\n" + _files_block(root, files, budget_chars - len(tree))


def _files_block(root: Path, files: list[Path], budget_chars: int) -> str:
    """Each library file as a `### path` heading and a fenced block, within `budget_chars`."""
    parts: list[str] = []
    used = 0
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        if used + len(text) > budget_chars:
            parts.append(f"### {f.relative_to(root).as_posix()}\n(omitted: over the prompt budget)")
            continue
        used += len(text)
        parts.append(f"### {f.relative_to(root).as_posix()}\n```\n{text}\n```")
    return "\n".join(parts)


def _skillflow_values(
    library: Path, result: TrialResult, task_source: str, trajectory: Path | None, budget_tokens: int
) -> dict[str, str]:
    """SkillFlow's placeholders, filled the way its patcher fills them (JSON where it gives JSON)."""
    files = iter_package_files(library) if library.is_dir() else []
    failed = [t.name for t in result.tests if t.status == "failed"]
    lines = compact_trajectory(trajectory, budget_tokens).splitlines()
    return {
        "tree_json": json.dumps([f.relative_to(library).as_posix() for f in files], ensure_ascii=False, indent=2),
        "files_block": _files_block(library, files, 60_000) if files else "<empty library>",
        "task_name": result.task_id,
        "task_source": task_source,
        "verifier_passed": str(result.reward is not None and result.reward >= 1.0),
        "reward": str(result.reward),
        "exception_info": f"{result.error.category}: {result.error.message}" if result.error else "None",
        "failed_tests": json.dumps(failed, ensure_ascii=False),
        # our compacted trajectory, one JSON string per message / call / result
        "trajectory_json": json.dumps(lines, ensure_ascii=False, indent=2),
    }


def trial_summary(result: TrialResult) -> str:
    failed = [t.name + (f": {t.message}" if t.message else "") for t in result.tests if t.status == "failed"]
    lines = [
        f"- task: {result.task_id}",
        f"- verifier passed: {'yes' if result.reward is not None and result.reward >= 1.0 else 'no'}",
        f"- reward: {result.reward if result.reward is not None else 'none'}",
        f"- error: {f'{result.error.category}: {result.error.message}' if result.error else 'none'}",
        f"- failed tests: {'; '.join(failed) if failed else 'none'}",
        f"- skills read: {', '.join(result.skill_use.read) or 'none'}; "
        f"scripts run: {', '.join(result.skill_use.scripts_run) or 'none'}",
    ]
    return "\n".join(lines)


def _step_lines(step: dict[str, Any]) -> list[str]:
    out: list[str] = []
    source = step.get("source", "?")
    message = step.get("message")
    if isinstance(message, str) and message.strip():
        out.append(f"[{source}] {message.strip()}")
    for call in step.get("tool_calls") or []:
        out.append(f"[call {call.get('function_name')}] {json.dumps(call.get('arguments'), ensure_ascii=False)}")
    for res in (step.get("observation") or {}).get("results") or []:
        content = res.get("content")
        if isinstance(content, str):
            out.append(f"[result] {content.strip()}")
    return out


def compact_trajectory(path: Path | None, budget_tokens: int, skip_sources: tuple[str, ...] = ("system",)) -> str:
    """The trajectory as one line per message / call / result, cut to `budget_tokens` (about 4 characters
    a token): long items are shortened first, then the middle is dropped, keeping the start and the end."""
    if path is None or not path.is_file():
        return "(no trajectory)"
    try:
        steps = json.loads(path.read_text(encoding="utf-8")).get("steps") or []
    except (ValueError, OSError):
        return "(unreadable trajectory)"
    lines = [line for step in steps if step.get("source") not in skip_sources for line in _step_lines(step)]
    budget = max(200, budget_tokens * CHARS_PER_TOKEN)
    per_item = max(120, budget // max(1, len(lines)) * 2)
    lines = [ln if len(ln) <= per_item else ln[: per_item // 2] + " … " + ln[-per_item // 2 :] for ln in lines]
    text = "\n".join(lines)
    if len(text) <= budget:
        return text
    head: list[str] = []
    tail: list[str] = []
    used = 0
    for i in range(len(lines)):
        for side, ln in ((head, lines[i]), (tail, lines[-1 - i])):
            if used + len(ln) + 1 > budget:
                return "\n".join([*head, f"… ({len(lines) - len(head) - len(tail)} lines omitted) …", *reversed(tail)])
            side.append(ln)
            used += len(ln) + 1
            if len(head) + len(tail) >= len(lines):
                return "\n".join([*head, *reversed(tail)])
    return text


def render_prompt(
    template: str,
    *,
    library: Path,
    position: int,
    total: int,
    family: str,
    instruction: str,
    result: TrialResult,
    final_message: str | None,
    trajectory: Path | None,
    budget_tokens: int,
    task_source: str = "",
) -> str:
    values = {
        "library": render_library(library),
        "position": str(position),
        "total": str(total),
        "family": family,
        "instruction": instruction.strip(),
        "trial_summary": trial_summary(result),
        "final_message": (final_message or "(none)").strip(),
        "trajectory": compact_trajectory(trajectory, budget_tokens),
    }
    if not _skillflow_style(template):
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
    values = {**_skillflow_values(library, result, task_source, trajectory, budget_tokens), **values}
    # one pass over the template: an escaped brace becomes a brace, a value is never read as a template
    return _FORMAT_TOKEN.sub(
        lambda m: m.group(0)[0] if m.group(1) is None else values.get(m.group(1), m.group(0)), template
    )
