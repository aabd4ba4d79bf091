"""Trigger query files: skill-creator's eval-set JSON read as is, the skillworks format, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.errors import UserError
from skillworks.trigger import load_queries, query_tasks, write_queries

REPO = Path(__file__).resolve().parents[3]


def test_skill_creator_eval_set_is_read_as_is(tmp_path: Path) -> None:
    path = tmp_path / "eval_set.json"
    path.write_text(json.dumps([{"query": "sum this column", "should_trigger": True},
                                {"query": "resize my photos", "should_trigger": False}]))  # fmt: skip
    qs = load_queries(path)
    assert [(q.id, q.should_trigger) for q in qs] == [("q01", True), ("q02", False)]
    tasks = query_tasks(qs, tmp_path / "q", 60)
    assert [t.id for t in tasks] == ["trigger-q01", "trigger-q02"]
    assert tasks[0].instruction == "sum this column" and tasks[0].verifier is None


def test_own_format_with_ids_and_notes_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "queries.yaml"
    path.write_text(
        "skill: csv\nqueries:\n  - id: sum-1\n    query: total revenue?\n    should_trigger: true\n    note: core\n"
    )
    qs = load_queries(path)
    assert qs[0].id == "sum-1" and qs[0].note == "core"
    assert load_queries(write_queries(qs, tmp_path / "again.json", "csv")) == qs


def test_the_shipped_example_is_a_valid_query_file() -> None:
    qs = load_queries(REPO / "examples" / "trigger" / "csv-column-stats.queries.json")
    assert len(qs) == 12 and sum(q.should_trigger for q in qs) == 6


@pytest.mark.parametrize(
    "text,message",
    [
        ("[", "not valid JSON"),
        ('{"evals": []}', "unknown key 'evals'"),
        ('[{"query": "x"}]', "'should_trigger' must be true or false"),
        ('[{"query": "x", "should_trigger": "yes"}]', "'should_trigger' must be true or false"),
        ('[{"query": "", "should_trigger": true}]', "'query' must be a non-empty string"),
        ('[{"query": "x", "should_trigger": true, "expected": 1}]', "unknown key 'expected'"),
        ('[{"id": "a b", "query": "x", "should_trigger": true}]', "'id' must be"),
        (
            '[{"id": "a", "query": "x", "should_trigger": true}, {"id": "a", "query": "y", "should_trigger": false}]',
            "two queries share the id 'a'",
        ),
        ("[]", "holds no queries"),
        ('"just text"', "a query file is a list"),
        ("[3]", "item [0]: an item must be an object"),
    ],
)
def test_bad_query_files_are_one_line_errors_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_queries(path)
    assert message in str(err.value) and "bad.json" in str(err.value) and "\n" not in str(err.value)
