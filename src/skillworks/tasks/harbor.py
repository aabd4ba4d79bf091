"""Loader for Harbor task directories: `task.toml`, `instruction.md`, `environment/`,
`tests/test.sh` (mounted at /tests) and `solution/solve.sh` (mounted at /solution).

Harbor's own pydantic models ignore keys they do not know, so this loader does the same but
keeps a record: unknown keys are listed in `Task.extra["unknown_keys"]` (and reported as
warnings by `validate_task`). Known keys are validated strictly (types, ranges, network rules).
Both `version = "1.0"` files with `memory = "4G"` strings and newer `memory_mb` files load."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from skillworks.errors import TaskError
from skillworks.tasks.assemble import assemble_task
from skillworks.tasks.config import TaskConfig, normalize_aliases
from skillworks.tasks.layout import (
    HARBOR_ORACLE_DIRS,
    HARBOR_VERIFIER_DIRS,
    nested_model,
    read_task_text,
    validation_message,
)
from skillworks.tasks.model import Task

TASK_TOML = "task.toml"
INSTRUCTION_MD = "instruction.md"
_SECTION_NAMES = {"sandbox": "environment", "oracle": "solution"}


def _strip_unknown(data: dict[str, Any], model: type[BaseModel], prefix: str, out: list[str]) -> dict[str, Any]:
    fields = {(f.alias or n): f for n, f in model.model_fields.items()}
    fields.update(model.model_fields)
    clean: dict[str, Any] = {}
    for key, value in data.items():
        field = fields.get(key)
        shown = _SECTION_NAMES.get(key, key) if not prefix else key
        if field is None:
            out.append(f"{prefix}{shown}")
            continue
        sub = nested_model(field.annotation)
        if sub is not None and isinstance(value, dict):
            value = _strip_unknown(value, sub, f"{prefix}{shown}.", out)
        clean[key] = value
    return clean


def load_harbor(root: Path) -> Task:
    path = root / TASK_TOML
    try:
        raw = tomllib.loads(read_task_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"invalid TOML: {exc}", path) from None
    except UnicodeDecodeError:
        raise TaskError("task.toml is not valid UTF-8", path) from None
    data = normalize_aliases(raw, path)
    unknown: list[str] = []
    data = _strip_unknown(data, TaskConfig, "", unknown)
    try:
        config = TaskConfig.model_validate(data)
    except ValidationError as exc:
        raise TaskError(validation_message(exc, TaskConfig, _SECTION_NAMES), path) from None

    instruction_path = root / INSTRUCTION_MD
    if not instruction_path.is_file():
        raise TaskError("missing instruction: instruction.md does not exist", root)
    instruction = read_task_text(instruction_path).strip()  # size-capped before a byte is read
    if not instruction:
        raise TaskError("missing instruction: instruction.md is empty", instruction_path)

    extra: dict[str, Any] = {}
    if unknown:
        extra["unknown_keys"] = unknown
    if config.source is not None:
        extra["source"] = config.source
    return assemble_task(
        root,
        source_format="harbor",
        config=config,
        config_path=path,
        instruction=instruction,
        verifier_dirs=HARBOR_VERIFIER_DIRS,
        oracle_dirs=HARBOR_ORACLE_DIRS,
        extra=extra,
    )
