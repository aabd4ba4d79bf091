"""Goal accuracy: a reference-based match of the agent's final answer to the case's ground truth.

- a number (or a numeric string): 1 when the answer contains that number (relative tolerance 1e-6;
  thousands separators ignored), else 0. A hedged answer that offers the number only among alternatives
  ("10, 11 or 12 kg", "12/13", "between 11 and 13", "11 to 13") gets 1/k for k distinct values offered,
  not full credit; stating the number on its own anywhere in the answer is a commitment (1);
- a string: 1 when the normalised ground truth (lower case, punctuation and extra spaces dropped) occurs in
  the normalised answer, else the token F1 between the two;
- a list: the mean over its items; an object: the mean over its values; a boolean: yes/true vs no/false.

None when the case has no ground truth; 0 when the agent gave no final answer.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from skillworks.grading.metrics.context import MetricContext, MetricResult
from skillworks.grading.metrics.view import final_answer

REL_TOL = 1e-6
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_NUMERIC = re.compile(r"^\s*[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?\s*$")
_PUNCT = re.compile(r"[^\w\s.%-]|(?<!\d)\.|\.(?!\d)")


def normalise(text: str) -> str:
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def numbers_in(text: str) -> list[float]:
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


_ITEM = r"[-+]?\d[\d,]*(?:\.\d+)?(?:\s*(?!(?:or|to|and)\b)[A-Za-z%°]{1,6}\b)?"
_HEDGE = re.compile(
    rf"between\s+{_ITEM}\s+and\s+{_ITEM}"
    rf"|{_ITEM}(?:\s*,\s*{_ITEM})*\s*,?\s*(?:\bor\b|/)\s*{_ITEM}"
    rf"|{_ITEM}\s*(?:\bto\b|–|—)\s*{_ITEM}",
    re.IGNORECASE,
)


def _number_match(answer: str, value: float) -> float:
    tol = REL_TOL * max(1.0, abs(value))

    def hits(text: str) -> bool:
        return any(abs(x - value) <= tol for x in numbers_in(text))

    if not hits(answer):
        return 0.0
    credit = 0.0
    for group in _HEDGE.finditer(answer):
        if hits(group.group(0)):
            k = len({round(x, 9) for x in numbers_in(group.group(0))})
            credit = max(credit, 1.0 / k if k else 0.0)
    if hits(_HEDGE.sub(" ", answer)):  # the number stated on its own: committed
        return 1.0
    return credit


def token_f1(answer: str, truth: str) -> float:
    a, t = normalise(answer).split(), normalise(truth).split()
    if not a or not t:
        return 0.0
    common = sum((Counter(a) & Counter(t)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(t)
    return 2 * precision * recall / (precision + recall)


def match(answer: str, truth: Any) -> float:
    """Score in [0, 1] of `answer` against one ground-truth value."""
    if isinstance(truth, bool):
        words = set(normalise(answer).split())
        yes, no = bool(words & {"yes", "true"}), bool(words & {"no", "false"})
        return 1.0 if (yes and not no and truth) or (no and not yes and not truth) else 0.0
    if isinstance(truth, int | float):
        return _number_match(answer, float(truth))
    if isinstance(truth, str):
        if _NUMERIC.match(truth):
            return _number_match(answer, float(truth.replace(",", "")))
        norm_truth = normalise(truth)
        if norm_truth and norm_truth in normalise(answer):
            return 1.0
        return token_f1(answer, truth)
    if isinstance(truth, list):
        return sum(match(answer, item) for item in truth) / len(truth) if truth else 1.0
    if isinstance(truth, dict):
        values = list(truth.values())
        return sum(match(answer, v) for v in values) / len(values) if values else 1.0
    return match(answer, str(truth))


def goal_accuracy_metric(ctx: MetricContext) -> MetricResult:
    ev = ctx.task.evaluation
    if ev is None or ev.ground_truth is None:
        return MetricResult("goal_accuracy", None, {"reason": "no ground truth"})
    answer = final_answer(ctx.trajectory)
    if answer is None:
        return MetricResult("goal_accuracy", 0.0, {"reason": "no final answer"})
    return MetricResult("goal_accuracy", match(answer, ev.ground_truth), {"answer_chars": len(answer)})
