"""`skillworks compile --explain`: shape, evidence, operators and risks of compiled skills, as rich tables
or as JSON."""

from __future__ import annotations

from typing import Any

from skillworks.compile.contract import BoundaryContract


def explain_record(contract: BoundaryContract, path: str | None = None) -> dict[str, Any]:
    return {
        "skill": contract.skill,
        "package_hash": contract.package_hash,
        "shape": contract.shape,
        "type": contract.type,
        "validation_level": contract.validation_level,
        "summary": contract.summary,
        "evidence": [e.model_dump(mode="json") for e in contract.evidence if e.supports is not None],
        "operators": [
            {
                "id": o.id,
                "params": [p.name for p in o.params],
                "risks": o.risks,
                "source": f"{o.source.file}:{o.source.line_start}",
            }
            for o in contract.operators
        ],
        "steps": [
            {"id": s.id, "type": s.type, "operator": s.operator, "source": f"{s.source.file}:{s.source.line_start}"}
            for s in (contract.graph.steps if contract.graph else [])
        ],
        "risks": contract.risks,
        "diagnostics": contract.diagnostics,
        "path": path,
    }


def print_explain(contracts: list[BoundaryContract]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    for c in contracts:
        head = Table(title=f"{escape(c.skill)} @ {c.package_hash[:12]}", title_justify="left", show_header=False)
        head.add_column("field")
        head.add_column("value", overflow="fold")
        head.add_row("shape", c.shape)
        head.add_row("contract type", c.type)
        head.add_row("validation", c.validation_level)
        head.add_row("risks", ", ".join(c.risks) or "none")
        head.add_row("summary", escape(c.summary))
        for d in c.diagnostics:
            head.add_row("[yellow]diagnostic[/]", escape(d))
        console.print(head)
        evidence = Table(title="evidence", title_justify="left")
        for col in ("feature", "value", "supports", "note"):
            evidence.add_column(col, overflow="fold")
        for e in c.evidence:
            if e.supports is not None:
                evidence.add_row(e.feature, f"{e.value:g}", e.supports, escape(e.note))
        console.print(evidence)
        if c.operators:
            ops = Table(title="operators", title_justify="left")
            for col in ("id", "params", "risks", "source"):
                ops.add_column(col, overflow="fold")
            for o in c.operators:
                params = ", ".join(p.name + ("" if p.required else "?") for p in o.params)
                ops.add_row(o.id, escape(params), ", ".join(o.risks) or "-", f"{o.source.file}:{o.source.line_start}")
            console.print(ops)
        if c.graph is not None:
            steps = Table(title="step graph" + ("" if c.graph.valid else " (INVALID)"), title_justify="left")
            for col in ("id", "type", "operator", "depends on", "name"):
                steps.add_column(col, overflow="fold")
            for s in c.graph.steps:
                steps.add_row(s.id, s.type, s.operator or "-", ", ".join(s.depends_on) or "-", escape(s.name))
            console.print(steps)
