"""The labelled skill set (tests/fixtures/compile/labeled-skills.yaml) written out as skill directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

LABELED = Path(__file__).resolve().parents[2] / "fixtures" / "compile" / "labeled-skills.yaml"


def write_labeled_skills(root: Path) -> list[tuple[Path, str]]:
    """Every labelled skill as `root/<name>/`; returns (skill dir, label) pairs."""
    entries: list[dict[str, Any]] = yaml.safe_load(LABELED.read_text())
    out = []
    for entry in entries:
        skill = root / entry["name"]
        skill.mkdir(parents=True)
        front = yaml.safe_dump({"name": entry["name"], "description": entry["description"]}, sort_keys=False)
        (skill / "SKILL.md").write_text(f"---\n{front}---\n\n{entry['body']}")
        for rel, text in (entry.get("files") or {}).items():
            (skill / rel).parent.mkdir(parents=True, exist_ok=True)
            (skill / rel).write_text(text)
        out.append((skill, entry["shape"]))
    return out


@pytest.fixture(scope="session")
def labeled_skills(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, str]]:
    return write_labeled_skills(tmp_path_factory.mktemp("labeled"))
