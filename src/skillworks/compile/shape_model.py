"""A small learned model over the structural shape signals and text cues: multinomial logistic regression.

The coefficients are data shipped with the package (`shape_model.json`), fitted offline by
`benchmarks/train_shape_model.py` on every hand-labelled split of `benchmarks/data/shape-labels.csv` present
when it was fitted (the JSON's `trained_on` names them; a split labelled later, such as `fresh5`, is the test);
nothing is trained at run time, and inference is numpy only. `fit_shape_model` is the fitting routine that
script uses: standardised inputs, an L2 penalty on the weights (not on the bias), class weights
(n / (k * count)) ** power (1 = balanced, 0 = none), minimised exactly with L-BFGS (scipy, deterministic).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from skillworks.compile.features import Features
from skillworks.compile.shape_cues import CUE_NAMES, shape_cues
from skillworks.compile.shape_signals import ShapeSignals

SHAPES: tuple[str, ...] = ("workflow", "dispatcher", "reference", "insufficient")
MODEL_PATH = Path(__file__).with_name("shape_model.json")

# every input is a structural signal already computed for the evidence; counts enter as log(1 + n)
FEATURE_NAMES: tuple[str, ...] = (
    "log_words",
    "log_substantive_words",
    "log_steps",
    "log_step_sections",
    "procedure_share",
    "procedure_runs_scripts",
    "log_menu_sections",
    "menu_share",
    "log_options",
    "log_command_rows",
    "log_subcommands",
    "log_entry_points",
    "log_scripts",
    "log_scripts_referenced",
    "log_commands",
    "log_code_blocks",
    "log_program_blocks",
    "log_table_rows",
    "log_bullets",
    "log_headings",
    "log_longest_run",
    "log_persona_cues",
    "log_tool_names",
    "log_setup_cues",
    "substantive_share",
    "thin",
    "log_structured_items",
    *CUE_NAMES,
)


def shape_vector(feats: Features, sig: ShapeSignals, entry_points: int) -> list[float]:
    """The model's inputs, in FEATURE_NAMES order: the structural signals and the text cues (`shape_cues`).
    The hand-written thresholds' vote is not one of them (those thresholds were tuned on labelled skills)."""

    def lg(n: float) -> float:
        return math.log1p(max(0.0, float(n)))

    return [
        lg(sig.words),
        lg(sig.substantive_words),
        lg(sig.steps),
        lg(sig.step_sections),
        sig.procedure_share,
        1.0 if sig.procedure_runs_scripts else 0.0,
        lg(sig.menu_sections),
        sig.menu_share,
        lg(sig.options),
        lg(sig.command_rows),
        lg(sig.subcommands),
        lg(entry_points),
        lg(len(feats.scripts)),
        lg(len(feats.scripts_referenced)),
        lg(len(feats.commands)),
        lg(len(feats.code_blocks)),
        lg(feats.program_blocks),
        lg(feats.table_rows),
        lg(feats.bullets),
        lg(len(feats.headings)),
        lg(feats.longest_run),
        lg(feats.persona_cues),
        lg(feats.tool_names),
        lg(feats.setup_cues),
        sig.substantive_words / max(1, sig.words),
        1.0 if _thin(feats, sig) else 0.0,
        lg(feats.table_rows + feats.bullets + len(feats.ordered) + len(feats.code_blocks)),
        *shape_cues(feats),
    ]


def _thin(feats: Features, sig: ShapeSignals) -> bool:
    """Little to act on: no commands, scripts or procedure, and either a short unstructured body, under 40
    words outside the boilerplate sections, or a persona prompt."""
    if feats.commands or feats.scripts or sig.steps >= 3:
        return False
    unstructured = feats.table_rows < 3 and feats.bullets < 5 and feats.longest_run < 3 and not feats.code_blocks
    return (feats.words < 200 and unstructured) or sig.substantive_words < 40 or feats.persona_cues > 0


@dataclass(frozen=True)
class ShapeModel:
    features: tuple[str, ...]
    shapes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # (features, shapes)
    bias: np.ndarray  # (shapes,)

    def probabilities(self, vector: list[float]) -> dict[str, float]:
        x = (np.asarray(vector, dtype=float) - self.mean) / self.scale
        logits = x @ self.weights + self.bias
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return {s: float(v) for s, v in zip(self.shapes, p, strict=True)}

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(self.features),
            "shapes": list(self.shapes),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "weights": [[round(float(v), 6) for v in row] for row in self.weights],
            "bias": [round(float(v), 6) for v in self.bias],
        }


def model_from_json(data: dict[str, object], source: str = "shape model") -> ShapeModel:
    try:
        model = ShapeModel(
            features=tuple(data["features"]),  # type: ignore[arg-type]
            shapes=tuple(data["shapes"]),  # type: ignore[arg-type]
            mean=np.asarray(data["mean"], dtype=float),
            scale=np.asarray(data["scale"], dtype=float),
            weights=np.asarray(data["weights"], dtype=float),
            bias=np.asarray(data["bias"], dtype=float),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{source}: malformed shape model ({exc})") from exc
    n, k = len(model.features), len(model.shapes)
    if model.features != FEATURE_NAMES or set(model.shapes) != set(SHAPES):
        raise ValueError(f"{source}: the model's features or shapes do not match this version of skillworks")
    dims = (model.mean.shape, model.scale.shape, model.weights.shape, model.bias.shape)
    if dims != ((n,), (n,), (n, k), (k,)):
        raise ValueError(f"{source}: the model's arrays have the wrong dimensions")
    return model


@lru_cache(maxsize=1)
def shipped_model() -> ShapeModel:
    return model_from_json(json.loads(MODEL_PATH.read_text(encoding="utf-8")), str(MODEL_PATH))


def fit_shape_model(
    rows: list[list[float]], labels: list[str], l2: float = 1.0, class_weight_power: float = 1.0
) -> ShapeModel:
    """Multinomial logistic regression: weighted cross-entropy (class weight (n / (k * count)) ** power) plus
    l2 / (2 n) times the squared weights, minimised with L-BFGS from zero (the same optimum every run)."""
    from scipy.optimize import minimize  # fitting only: inference needs numpy alone

    x = np.asarray(rows, dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    n, d = z.shape
    k = len(SHAPES)
    y = np.zeros((n, k))
    for i, label in enumerate(labels):
        y[i, SHAPES.index(label)] = 1.0
    counts = y.sum(axis=0)
    class_weight = np.where(counts > 0, (n / (k * np.maximum(counts, 1))) ** class_weight_power, 0.0)
    sample_weight = y @ class_weight
    total = sample_weight.sum()

    def loss_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta[: d * k].reshape(d, k)
        logits = z @ w + theta[d * k :]
        logits -= logits.max(axis=1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        loss = -(sample_weight * (y * log_p).sum(axis=1)).sum() / total + l2 / (2 * n) * float((w * w).sum())
        g = (np.exp(log_p) - y) * sample_weight[:, None] / total
        return float(loss), np.concatenate([(z.T @ g + l2 * w / n).ravel(), g.sum(axis=0)])

    result = minimize(
        loss_and_gradient,
        np.zeros(d * k + k),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "gtol": 1e-9},
    )
    w = result.x[: d * k].reshape(d, k)
    return ShapeModel(FEATURE_NAMES, SHAPES, mean, scale, w, result.x[d * k :].copy())
