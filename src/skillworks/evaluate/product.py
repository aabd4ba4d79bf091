"""Product mode: a YAML file listing targets, each run as its own condition and compared with the
baseline target.

    baseline: plain            # optional: the name of the baseline target (default: the one of type baseline)
    targets:
      - {name: plain, type: baseline}                       # support + decoys only
      - {name: v2, type: skill, path: skills/invoice-vat}   # one skill
      - {name: kit, type: skill_bundle, paths: [skills/a, skills/b]}
      - {name: team, type: team_skills, path: team/skills}  # every skill under a directory
      - {name: plug, type: plugin, path: plugins/acme}      # a plugin dir: skills/<name>/SKILL.md inside

Paths are relative to the YAML file. Support and decoy skills are visible in every target's trials.
Each target becomes the condition ``product-<name>``; its skills are staged without evaluation assets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from skillworks.errors import UserError
from skillworks.evaluate.workspace import evaluation_copy
from skillworks.provision.conditions import Condition, SkillSet, register_condition
from skillworks.skills.package import SkillPackage, discover_skills, load_skill
from skillworks.tasks.model import Task

TargetType = Literal["baseline", "skill", "skill_bundle", "team_skills", "plugin"]
CONDITION_PREFIX = "product-"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TargetSpec(_Strict):
    name: str = Field(description="lower-case letters, digits, - and _")
    type: TargetType
    path: str | None = Field(default=None, description="skill, team or plugin directory")
    paths: list[str] | None = Field(default=None, description="skill directories of a skill_bundle")
    description: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> TargetSpec:
        if not _NAME.match(self.name):
            raise ValueError(f"target name {self.name!r} must match {_NAME.pattern}")
        if self.type == "baseline" and (self.path or self.paths):
            raise ValueError(f"target {self.name!r}: a baseline target has no path")
        if self.type == "skill_bundle" and not self.paths:
            raise ValueError(f"target {self.name!r}: a skill_bundle needs 'paths'")
        if self.type in ("skill", "team_skills", "plugin") and not self.path:
            raise ValueError(f"target {self.name!r}: a {self.type} target needs 'path'")
        return self


class ProductSpec(_Strict):
    baseline: str | None = None
    targets: list[TargetSpec] = Field(min_length=2)


@dataclass(frozen=True)
class ProductTarget:
    name: str
    type: TargetType
    skills: tuple[SkillPackage, ...]

    @property
    def condition(self) -> str:
        return f"{CONDITION_PREFIX}{self.name}"


@dataclass(frozen=True)
class Product:
    targets: tuple[ProductTarget, ...]
    baseline: ProductTarget
    source: Path

    @property
    def conditions(self) -> list[str]:
        return [t.condition for t in self.targets]

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "name": t.name,
                "type": t.type,
                "condition": t.condition,
                "skills": [f"{s.name}@{s.short_hash}" for s in t.skills],
                "baseline": t is self.baseline,
            }
            for t in self.targets
        ]


def _message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        model = TargetSpec if "targets" in [str(p) for p in first["loc"]] else ProductSpec
        msg = f"unknown key (allowed: {', '.join(model.model_fields)})"
    return f"{loc}: {msg}" if loc else msg


def _skills_of(spec: TargetSpec, base: Path, path: Path) -> list[Path]:
    if spec.type == "baseline":
        return []
    if spec.type == "skill":
        return [base / str(spec.path)]
    if spec.type == "skill_bundle":
        return [base / p for p in spec.paths or []]
    root = base / str(spec.path)
    if not root.is_dir():
        raise UserError(f"target {spec.name!r}: no such directory {root}", path)
    if spec.type == "plugin":
        skills_root = root / "skills"
        if not skills_root.is_dir():
            raise UserError(f"target {spec.name!r}: plugin {root} has no skills/ directory", path)
        root = skills_root
    found = discover_skills(root)
    if not found:
        raise UserError(f"target {spec.name!r}: no SKILL.md under {root}", path)
    return found


def load_product(path: Path, staging_dir: Path) -> Product:
    """Read a product YAML; target skills are loaded and copied (without evals) under `staging_dir`."""
    if not path.is_file():
        raise UserError("product targets file not found", path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise UserError(f"not valid YAML: {' '.join(str(exc).split())}", path) from None
    try:
        spec = ProductSpec.model_validate(data)
    except ValidationError as exc:
        raise UserError(_message(exc), path) from None
    names = [t.name for t in spec.targets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"two targets are named {dupes[0]!r}", path)
    baselines = [t.name for t in spec.targets if t.type == "baseline"]
    baseline_name = spec.baseline or (baselines[0] if len(baselines) == 1 else None)
    if baseline_name is None:
        raise UserError(
            "name the baseline target ('baseline: <name>') or give exactly one target of type baseline", path
        )
    if baseline_name not in names:
        raise UserError(f"baseline {baseline_name!r} is not one of the targets ({', '.join(names)})", path)
    targets: list[ProductTarget] = []
    for t in spec.targets:
        packages: list[SkillPackage] = []
        for skill_dir in _skills_of(t, path.parent, path):
            package = load_skill(skill_dir)
            packages.append(evaluation_copy(package, staging_dir / t.name))
        skill_names = [p.name for p in packages]
        if len(set(skill_names)) != len(skill_names):
            raise UserError(f"target {t.name!r} holds two skills with the same name", path)
        targets.append(ProductTarget(t.name, t.type, tuple(packages)))
    baseline = next(t for t in targets if t.name == baseline_name)
    return Product(tuple(targets), baseline, path)


def register_product_conditions(product: Product) -> None:
    """Register `product-<name>` for every target: support, sibling and decoy skills + the target's skills."""
    for target in product.targets:

        def select(task: Task, skills: SkillSet, _t: ProductTarget = target) -> list[SkillPackage]:
            return [*skills.fixed, *_t.skills]

        register_condition(
            Condition(
                target.condition,
                f"product target {target.name} ({target.type}): support and decoy skills plus its skills",
                select,
                strips_task_skills=True,
                tags=frozenset({"product"}),
            )
        )
