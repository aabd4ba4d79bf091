"""Loader for the `task.md` task standard (SkillsBench / BenchFlow, schema_version "1.3").

Layout: `task.md` (YAML frontmatter + instruction body), `environment/` (optional Dockerfile,
optional bundled skills under `environment/skills/<name>/`), `verifier/` (mounted at /verifier)
or the compatibility `tests/` (mounted at /tests) with `test.sh`, `oracle/` (at /oracle) or the
compatibility `solution/` (at /solution) with `solve.sh`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillworks._frontmatter import split_yaml_frontmatter
from skillworks.errors import TaskError
from skillworks.tasks.assemble import assemble_task
from skillworks.tasks.config import TaskDocumentConfig, normalize_aliases
from skillworks.tasks.layout import TASK_MD_ORACLE_DIRS, TASK_MD_VERIFIER_DIRS, read_task_text, validation_message
from skillworks.tasks.model import Task

TASK_MD = "task.md"

TOP_LEVEL_KEYS = (
    "schema_version",
    "version",
    "task",
    "metadata",
    "agent",
    "verifier",
    "sandbox",
    "environment",
    "oracle",
    "solution",
    "source",
    "artifacts",
    "steps",
    "multi_step_reward_strategy",
    "agents",
    "scenes",
    "user",
    "benchflow",
)
_DOCUMENT_KEYS = ("agents", "scenes", "user", "benchflow", "artifacts", "steps", "multi_step_reward_strategy")
_SECTION_RE = re.compile(
    r"^##\s+(prompt|role:[A-Za-z0-9_.-]+|scene:[A-Za-z0-9_.-]+|user-persona)\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def split_task_md(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """Split the YAML frontmatter from the body. Raises TaskError naming the file."""
    return split_yaml_frontmatter(
        text,
        path,
        error=TaskError,
        document="task.md",
        not_mapping="task.md frontmatter must be a YAML mapping",
        lenient_delimiters=True,
    )


def extract_instruction(body: str) -> tuple[str, dict[str, str]]:
    """The instruction and any reserved prompt sections (`## prompt`, `## role:x`, `## scene:x`,
    `## user-persona`). Without reserved headings the whole body is the instruction."""
    matches = list(_SECTION_RE.finditer(body))
    if not matches:
        return body.strip(), {}
    sections: dict[str, str] = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        sections[match.group(1).lower()] = body[match.end() : end].strip()
    preamble = body[: matches[0].start()].strip()
    instruction = sections.pop("prompt", preamble)
    return instruction, sections


def load_task_md(root: Path) -> Task:
    path = root / TASK_MD
    text = read_task_text(path)  # size-capped before a byte is read
    frontmatter, body = split_task_md(text, path)
    unknown = [str(k) for k in frontmatter if k not in TOP_LEVEL_KEYS]
    if unknown:
        raise TaskError(
            f"unknown top-level key {unknown[0]!r}; allowed keys: {', '.join(TOP_LEVEL_KEYS)}",
            path,
        )
    data = normalize_aliases(frontmatter, path)
    try:
        config = TaskDocumentConfig.model_validate(data)
    except ValidationError as exc:
        raise TaskError(validation_message(exc, TaskDocumentConfig), path) from None
    instruction, sections = extract_instruction(body)
    if not instruction:
        raise TaskError("missing instruction: the task.md body (the prompt) is empty", path)
    extra: dict[str, Any] = {k: v for k in _DOCUMENT_KEYS if (v := getattr(config, k)) is not None}
    if sections:
        extra["prompt_sections"] = sections
    if config.source is not None:
        extra["source"] = config.source
    return assemble_task(
        root,
        source_format="task.md",
        config=config,
        config_path=path,
        instruction=instruction,
        verifier_dirs=TASK_MD_VERIFIER_DIRS,
        oracle_dirs=TASK_MD_ORACLE_DIRS,
        extra=extra,
    )
