"""The patch prompt: the project's own template (``patch_prompt.md``, overridable with ``--patch-prompt``)
filled with the library tree and files, the trial summary, the final message and the compacted trajectory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillworks.results import TrialResult
from skillworks.skills.package import iter_package_files

DEFAULT_TEMPLATE = Path(__file__).with_name("patch_prompt.md")
CHARS_PER_TOKEN = 4
PLACEHOLDERS = ("library", "position", "total", "family", "instruction", "trial_summary", "final_message", "trajectory")
# a bare {name}: JSON in a template ({"summary": ...}) is no placeholder
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def load_template(path: Path | None) -> str:
    from skillworks.errors import UserError

    path = path or DEFAULT_TEMPLATE
    if not path.is_file():
        raise UserError("patch prompt template not found", path)
    text = path.read_text(encoding="utf-8")
    unknown = sorted({m.group(1) for m in _PLACEHOLDER.finditer(text)} - set(PLACEHOLDERS))
    if unknown:
        allowed = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
        raise UserError(f"unknown placeholder {{{unknown[0]}}} in the patch prompt (allowed: {allowed})", path)
    if "{trajectory}" not in text or "{library}" not in text:
        raise UserError("a patch prompt template needs the {library} and {trajectory} placeholders", path)
    return text


def render_library(root: Path, budget_chars: int = 60_000) -> str:
    files = iter_package_files(root) if root.is_dir() else []
    if not files:
        return "(empty: no skill yet)"
    tree = "\n".join(f"- {f.relative_to(root).as_posix()} ({f.stat().st_size} bytes)" for f in files)
    parts = [tree, ""]
    used = len(tree)
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        if used + len(text) > budget_chars:
            parts.append(f"### {f.relative_to(root).as_posix()}\n(omitted: over the prompt budget)")
            continue
        used += len(text)
        parts.append(f"### {f.relative_to(root).as_posix()}\n```\n{text}\n```")
    return "\n".join(parts)


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
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
