"""Shape classification on the project's labelled set of skills (all four shapes).

These 32 short skills are also training rows of the shipped model (benchmarks/train_shape_model.py), so
this is a fit check that the model covers skills of a few dozen lines, not a measure of generalisation:
that is the grouped CV of benchmarks/train_shape_model.py and benchmarks/compile_shapes.py on the
never-trained-on `fresh5` split."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from skillworks.compile import classify, extract_features
from skillworks.skills import load_skill


def test_accuracy_on_the_labeled_set(labeled_skills: list[tuple[Path, str]]) -> None:
    assert len(labeled_skills) >= 30
    assert set(Counter(label for _, label in labeled_skills)) == {"workflow", "dispatcher", "reference", "insufficient"}
    misses = []
    for root, label in labeled_skills:
        got = classify(extract_features(load_skill(root))).shape
        if got != label:
            misses.append(f"{root.name}: {label} -> {got}")
    accuracy = 1 - len(misses) / len(labeled_skills)
    print(f"shape accuracy {accuracy:.1%} on {len(labeled_skills)} labelled skills; misses: {misses}")
    assert accuracy >= 0.9, misses


def test_evidence_is_recorded_and_deterministic(labeled_skills: list[tuple[Path, str]]) -> None:
    root = next(r for r, label in labeled_skills if label == "dispatcher")
    first = classify(extract_features(load_skill(root)))
    second = classify(extract_features(load_skill(root)))
    assert first == second
    assert any(e.feature == "entry_points" and e.supports == "dispatcher" and e.value >= 3 for e in first.evidence)
