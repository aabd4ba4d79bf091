"""skillworks.provision sits below the trial: the trial imports it, it never imports the trial (issue 25)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PROVISION = Path(__file__).resolve().parents[3] / "src" / "skillworks" / "provision"
ABOVE = ("skillworks.experiment.trial", "skillworks.experiment.runner", "skillworks.experiment.executor")


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node outside `if TYPE_CHECKING:` blocks (annotations only: no import at run time)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def test_no_provision_module_imports_the_trial() -> None:
    for path in PROVISION.rglob("*.py"):
        for node in _runtime_nodes(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.startswith(ABOVE) for n in names), (path.name, names)


def test_importing_provision_loads_no_trial() -> None:
    code = "import sys, skillworks.provision; print(sorted(m for m in sys.modules if m.startswith('skillworks.exp')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "skillworks.experiment.trial" not in out, out
