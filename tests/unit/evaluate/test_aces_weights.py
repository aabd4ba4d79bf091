"""Metric weights name real metrics: an unknown name in --weight or EVAL.md is an error, not a silent no-op."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.cli.eval_cmd import parse_weights
from skillworks.errors import TaskError, UserError
from skillworks.tasks import load_eval_cases


def test_weight_flag_rejects_unknown_metric_names() -> None:
    assert parse_weights(["accuracy=2", "security=0.5"]) == {"accuracy": 2.0, "security": 0.5}
    with pytest.raises(UserError, match=r"^--weight: unknown metric 'acuracy' \(metrics: security, skill_execution,"):
        parse_weights(["acuracy=2"])


def test_eval_md_rejects_unknown_metric_names(tmp_path: Path) -> None:
    root = tmp_path / "demo-skill"
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: demo-skill\ndescription: Demo skill for tests.\n---\n\nBody.\n")
    (root / "evals" / "evals.json").write_text(json.dumps([{"id": "a", "question": "Q"}]))
    (root / "EVAL.md").write_text("---\nweights: {accuracy: 2, speed: 1}\n---\n")
    with pytest.raises(TaskError, match=r"EVAL\.md: 'weights': unknown metric 'speed' \(metrics: security,"):
        load_eval_cases(root)
    (root / "EVAL.md").write_text("---\ncases:\n  a: {weights: {overall: 1}}\n---\n")
    with pytest.raises(TaskError, match=r"'cases\.a\.weights': unknown metric 'overall'"):
        load_eval_cases(root)
