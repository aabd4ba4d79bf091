"""The shipped shape model: loaded from package data, validated, used by classify; malformed data is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from skillworks.compile.shape_model import (
    FEATURE_NAMES,
    MODEL_PATH,
    SHAPES,
    fit_shape_model,
    model_from_json,
    shipped_model,
)


def test_the_shipped_model_loads_and_says_what_it_was_trained_on() -> None:
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    assert data["trained_on"] == ["train", "held-out", "fresh", "fresh2", "fresh3", "fresh4"]  # never fresh5, the test
    votes = {f"rule_{shape}" for shape in SHAPES}
    assert not votes & set(data["features"])  # the hand-written thresholds' vote is no input (tuned on labels)
    model = shipped_model()
    p = model.probabilities([0.0] * len(FEATURE_NAMES))
    assert set(p) == set(SHAPES) and abs(sum(p.values()) - 1) < 1e-9


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("weights"), "malformed"),
        (lambda d: d.update(features=d["features"][:-1]), "do not match"),
        (lambda d: d.update(bias=d["bias"][:-1]), "wrong dimensions"),
        (lambda d: d.update(mean="x"), "malformed"),
    ],
)
def test_a_malformed_model_is_refused_with_the_file_named(
    edit: Callable[[dict[str, Any]], object], message: str
) -> None:
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    edit(data)
    with pytest.raises(ValueError, match=message) as info:
        model_from_json(data, "model.json")
    assert str(info.value).startswith("model.json:")


def test_fitting_separates_two_obvious_classes() -> None:
    n = len(FEATURE_NAMES)
    rows = [[1.0] * n, [1.1] * n, [-1.0] * n, [-1.1] * n]
    model = fit_shape_model(rows, ["workflow", "workflow", "reference", "reference"], l2=0.1)
    assert max(model.probabilities([1.05] * n).items(), key=lambda kv: kv[1])[0] == "workflow"
    assert max(model.probabilities([-1.05] * n).items(), key=lambda kv: kv[1])[0] == "reference"


def test_class_weights_lift_a_rare_shape_and_fitting_is_deterministic() -> None:
    n = len(FEATURE_NAMES)
    rows = [[0.0] * n for _ in range(9)] + [[0.2] * n]  # one rare example barely apart from nine others
    labels = ["reference"] * 9 + ["insufficient"]
    balanced = fit_shape_model(rows, labels, l2=1.0, class_weight_power=1.0)
    plain = fit_shape_model(rows, labels, l2=1.0, class_weight_power=0.0)
    probe = [0.1] * n
    assert balanced.probabilities(probe)["insufficient"] > plain.probabilities(probe)["insufficient"]
    again = fit_shape_model(rows, labels, l2=1.0, class_weight_power=1.0)
    assert again.to_json() == balanced.to_json()
