"""The patch prompt's compacted trajectory: cut to the token budget, keeping the start and the end."""

from __future__ import annotations

import json
from pathlib import Path

from skillworks.evolve.prompt import CHARS_PER_TOKEN, compact_trajectory


def _trajectory(tmp_path: Path, n: int) -> Path:
    steps = [{"source": "system", "message": "SYSTEM PROMPT"}, {"source": "user", "message": "FIRST: the task"}]
    for i in range(n):
        steps.append(
            {
                "source": "agent",
                "message": f"step {i} " + "x" * 300,
                "tool_calls": [{"function_name": "bash", "arguments": {"command": f"echo {i}"}}],
                "observation": {"results": [{"content": f"output {i} " + "y" * 2000}]},
            }
        )
    steps.append({"source": "agent", "message": "LAST: wrote the total"})
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps({"steps": steps}))
    return path


def test_compacted_trajectory_fits_the_budget_and_keeps_both_ends(tmp_path: Path) -> None:
    path = _trajectory(tmp_path, 200)
    text = compact_trajectory(path, 1000)
    assert len(text) <= 1000 * CHARS_PER_TOKEN + 200  # the budget, plus the one 'omitted' marker line
    assert text.startswith("[user] FIRST: the task") and text.endswith("[agent] LAST: wrote the total")
    assert "lines omitted" in text and "SYSTEM PROMPT" not in text


def test_a_short_trajectory_is_kept_whole(tmp_path: Path) -> None:
    path = _trajectory(tmp_path, 1)
    text = compact_trajectory(path, 100_000)
    assert "y" * 2000 in text and "lines omitted" not in text
    assert compact_trajectory(tmp_path / "missing.json", 1000) == "(no trajectory)"
