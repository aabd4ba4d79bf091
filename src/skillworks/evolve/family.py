"""Task families: a directory of tasks (any format skillworks loads) with an explicit order.

The order comes from the family dir's ``family.yaml`` (``order: [task ids]``, optional ``daef:`` list of
workflow nodes) or from SkillFlow's ``ALL_TASK_DIFFICULTY_RANKING.json``: as SkillFlow ships it, a JSON
array of task directory names inside the family dir; or an object ``{family: [task ids]}`` in the family
dir or its parent. Tasks of the family a ranking array leaves out are appended after the ranked ones (by
directory name), each with a warning (`Family.warnings`). A family without an order is a user error that
says how to give one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillworks.errors import UserError, first_validation_error
from skillworks.tasks import discover_tasks, load_task
from skillworks.tasks.model import Task

FAMILY_YAML = "family.yaml"
RANKING_JSON = "ALL_TASK_DIFFICULTY_RANKING.json"
DAEF_NODES = (
    "read",
    "extract",
    "retrieve",
    "normalize",
    "filter",
    "align",
    "compute",
    "compare",
    "detect",
    "update",
    "validate",
    "output",
)


class FamilyFile(BaseModel):
    """``family.yaml``."""

    model_config = ConfigDict(extra="forbid")

    order: list[str] = Field(min_length=1, description="task ids, first to last")
    daef: list[str] = Field(default_factory=list, description=f"workflow nodes from: {', '.join(DAEF_NODES)}")
    description: str | None = None

    @field_validator("daef")
    @classmethod
    def _known_nodes(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if v not in DAEF_NODES]
        if bad:
            raise ValueError(f"unknown daef node {bad[0]!r} (allowed: {', '.join(DAEF_NODES)})")
        return value


@dataclass
class Family:
    name: str
    root: Path
    tasks: list[Task]
    order_source: str
    daef: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _ranking_array(data: list[object], ranking: Path) -> list[str]:
    """SkillFlow's array form: task names in order; names are stripped, repeats and non-strings skipped."""
    order: list[str] = []
    for item in data:
        if isinstance(item, str) and item.strip() and item.strip() not in order:
            order.append(item.strip())
    if not order:
        raise UserError("the ranking array names no task", ranking)
    return order


def _order(root: Path) -> tuple[list[str], list[str], str, bool]:
    spec = root / FAMILY_YAML
    if spec.is_file():
        try:
            data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise UserError(f"not valid YAML: {' '.join(str(exc).split())}", spec) from None
        try:
            parsed = FamilyFile.model_validate(data if data is not None else {})
        except ValidationError as exc:
            raise UserError(first_validation_error(exc), spec) from None
        return parsed.order, parsed.daef, str(spec), False
    for ranking in (root / RANKING_JSON, root.parent / RANKING_JSON):
        if not ranking.is_file():
            continue
        try:
            data = json.loads(ranking.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"not valid JSON: {exc}", ranking) from None
        if isinstance(data, list) and ranking.parent == root:
            return _ranking_array(data, ranking), [], str(ranking), True
        if not isinstance(data, dict):
            raise UserError(
                "expected a JSON array of task names (in the family dir) or an object {family: [task ids]}", ranking
            )
        order = data.get(root.name)
        if order is None:
            continue
        if not isinstance(order, list) or not order or not all(isinstance(t, str) for t in order):
            raise UserError(f"family {root.name!r} must map to a non-empty list of task ids", ranking)
        return order, [], str(ranking), False
    raise UserError(
        f"family {root.name!r} has no task order: add {FAMILY_YAML} with `order: [task-id, ...]` "
        f"(or list it in {RANKING_JSON} next to it)",
        root,
    )


def load_family(path: Path | str) -> Family:
    """A family directory with its tasks in their explicit order."""
    root = Path(path)
    if not root.is_dir():
        raise UserError("not a family directory", root)
    order, daef, source, append_unranked = _order(root)
    tasks = {t.id: t for t in (load_task(p) for p in discover_tasks([root]))}
    # SkillFlow ids may name a task by its directory name when the loaded id differs
    by_dir = {t.root.name: t for t in tasks.values()}
    missing = [tid for tid in order if tid not in tasks and tid not in by_dir]
    if missing:
        raise UserError(f"the order names task {missing[0]!r}, which is not in the family", source)
    if len(set(order)) != len(order):
        raise UserError("the order lists a task twice", source)
    ordered = [tasks.get(tid) or by_dir[tid] for tid in order]
    warnings: list[str] = []
    if append_unranked:  # as SkillFlow does: tasks the ranking leaves out run after the ranked ones
        placed = {t.id for t in ordered}
        for task in sorted((t for t in tasks.values() if t.id not in placed), key=lambda t: t.root.name):
            ordered.append(task)
            where = f"appended at position {len(ordered)}"
            warnings.append(f"{source}: task {task.root.name!r} is not in the ranking; {where}")
    return Family(name=root.name, root=root.resolve(), tasks=ordered, order_source=source, daef=daef, warnings=warnings)
