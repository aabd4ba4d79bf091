"""Goal accuracy does not give full credit to a hedged multi-value answer."""

from __future__ import annotations

import pytest

from skillworks.grading.metrics.goal import match


@pytest.mark.parametrize(
    "answer,score",
    [
        ("The parcel weighs 12 kg.", 1.0),
        ("10, 11 or 12 kg", 1 / 3),
        ("12 kg or 13 kg", 0.5),
        ("12/13", 0.5),
        ("somewhere between 11 and 12", 0.5),
        ("11 to 12 kg", 0.5),
        ("It could be 10, 11 or 12 kg; after weighing: 12 kg", 1.0),  # committed in the end
        ("Total 1,440 (12 x 120)", 1.0),  # other numbers in a committed answer are fine
        ("10 or 11 kg", 0.0),
    ],
)
def test_hedged_numeric_answers(answer: str, score: float) -> None:
    assert match(answer, 12) == pytest.approx(score)
