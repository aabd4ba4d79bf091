"""Task families: order from family.yaml or SkillFlow's ALL_TASK_DIFFICULTY_RANKING.json; bad input is one
clear error naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillworks.errors import UserError
from skillworks.evolve.family import load_family

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "families" / "euro-ledgers"


def _family(tmp_path: Path, name: str = "fam") -> Path:
    fam = tmp_path / name
    for tid in ("ledger-1", "ledger-2"):
        shutil.copytree(EXAMPLE / tid, fam / tid)
    return fam


def test_example_family_order_and_daef() -> None:
    family = load_family(EXAMPLE)
    assert [t.id for t in family.tasks] == [f"ledger-{i}" for i in range(1, 6)]
    assert family.daef == ["read", "normalize", "compute", "output"]


def test_skillflow_ranking_in_the_parent(tmp_path: Path) -> None:
    _family(tmp_path)
    (tmp_path / "ALL_TASK_DIFFICULTY_RANKING.json").write_text(json.dumps({"fam": ["ledger-2", "ledger-1"]}))
    family = load_family(tmp_path / "fam")
    assert [t.id for t in family.tasks] == ["ledger-2", "ledger-1"]
    assert family.order_source.endswith("ALL_TASK_DIFFICULTY_RANKING.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "has no task order: add family.yaml"),
        ("order: [ledger-1, ledger-9]\n", "names task 'ledger-9'"),
        ("order: [ledger-1, ledger-1]\n", "lists a task twice"),
        ("order: [ledger-1]\ndaef: [read, teleport]\n", "unknown daef node 'teleport'"),
        ("order: [ledger-1]\nsurprise: 1\n", "surprise"),
        ("order: [ledger-1\n", "not valid YAML"),
    ],
)
def test_bad_family_is_one_clear_error(tmp_path: Path, content: str | None, message: str) -> None:
    fam = _family(tmp_path)
    if content is not None:
        (fam / "family.yaml").write_text(content)
    with pytest.raises(UserError) as info:
        load_family(fam)
    assert message in str(info.value) and "\n" not in str(info.value)
