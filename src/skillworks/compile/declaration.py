"""The author's declaration: an optional `compile:` block in the SKILL.md frontmatter `metadata` that fixes
what inference would guess. It wins over inference and is validated (one line naming SKILL.md on error).

    metadata:
      compile:
        shape: dispatcher                 # workflow | dispatcher | reference | insufficient
        operators: [report, clean]        # keep only these operators (ids as `compile --explain` shows)
        params:                           # rename inferred parameters, per operator
          report: {arg1: input_csv}
        risks:                            # replace the inferred risk flags, per operator
          clean: [destructive]
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from skillworks.compile.contract import Operator, RiskFlag, Shape
from skillworks.compile.operators import input_schema
from skillworks.errors import UserError, first_validation_error
from skillworks.skills.package import SkillPackage


class Declaration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shape: Shape | None = None
    operators: list[str] | None = None
    params: dict[str, dict[str, str]] = {}
    risks: dict[str, list[RiskFlag]] = {}


def read_declaration(package: SkillPackage) -> Declaration | None:
    """The package's `metadata.compile` block, or None. Raises UserError (one line) when it is malformed."""
    metadata = package.frontmatter.get("metadata")
    if not isinstance(metadata, dict) or "compile" not in metadata:
        return None
    try:
        return Declaration.model_validate(metadata["compile"])
    except ValidationError as exc:
        raise UserError(f"metadata.compile: {first_validation_error(exc)}", package.root / "SKILL.md") from None


def apply_declaration(decl: Declaration, operators: list[Operator], package: SkillPackage) -> list[Operator]:
    """Keep, rename and re-flag operators as declared; a name the declaration uses that the compile did not
    infer is an error (so a typo does not pass silently)."""
    where = package.root / "SKILL.md"
    known = {o.id for o in operators}
    named = set(decl.operators or []) | set(decl.params) | set(decl.risks)
    unknown = sorted(named - known)
    if unknown:
        raise UserError(
            f"metadata.compile names operator(s) {', '.join(unknown)} that the compile did not find; "
            f"operators: {', '.join(sorted(known)) or 'none'}",
            where,
        )
    kept = [o for o in operators if decl.operators is None or o.id in decl.operators]
    result: list[Operator] = []
    for op in kept:
        update: dict[str, Any] = {}
        renames = decl.params.get(op.id, {})
        if renames:
            names = {p.name for p in op.params}
            missing = sorted(set(renames) - names)
            if missing:
                raise UserError(
                    f"metadata.compile.params.{op.id}: no parameter {', '.join(missing)}; "
                    f"parameters: {', '.join(sorted(names)) or 'none'}",
                    where,
                )
            bad = sorted(v for v in renames.values() if not re.fullmatch(r"[a-z_][a-z0-9_]*", v))
            if bad:
                raise UserError(f"metadata.compile.params.{op.id}: {bad[0]!r} is not a parameter name", where)
            params = [p.model_copy(update={"name": renames.get(p.name, p.name)}) for p in op.params]
            update["params"] = params
            update["input_schema"] = input_schema(params)
            if op.execution.kind == "command" and op.execution.template:
                template = op.execution.template
                for old, new in renames.items():
                    template = template.replace("{" + old + "}", "{" + new + "}")
                update["execution"] = op.execution.model_copy(update={"template": template})
        if op.id in decl.risks:
            update["risks"] = list(dict.fromkeys(decl.risks[op.id]))
            update["risk_evidence"] = [
                f"{r}: declared by the author (metadata.compile.risks)" for r in decl.risks[op.id]
            ]
        result.append(op.model_copy(update=update) if update else op)
    return result
