"""Grading: the verifier runner, reward files, CTRF test reports; bring-your-own graders. The ACES metrics
live in `skillworks.grading.metrics`. Names are imported on first use (a trial needs only the verifier)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillworks._lazy import lazy_exports

if TYPE_CHECKING:
    from skillworks.grading.ctrf import find_ctrf, read_ctrf
    from skillworks.grading.graders import ENTRY_POINT_GROUP, Grader, entry_point_graders, load_grader, run_grader
    from skillworks.grading.reward_files import RewardFileRefused, read_reward
    from skillworks.grading.verifier import VerifierResult, run_verifier

_LAZY = {
    "find_ctrf": "skillworks.grading.ctrf",
    "read_ctrf": "skillworks.grading.ctrf",
    "ENTRY_POINT_GROUP": "skillworks.grading.graders",
    "Grader": "skillworks.grading.graders",
    "entry_point_graders": "skillworks.grading.graders",
    "load_grader": "skillworks.grading.graders",
    "run_grader": "skillworks.grading.graders",
    "VerifierResult": "skillworks.grading.verifier",
    "read_reward": "skillworks.grading.reward_files",
    "RewardFileRefused": "skillworks.grading.reward_files",
    "run_verifier": "skillworks.grading.verifier",
}

__all__ = [
    "ENTRY_POINT_GROUP",
    "Grader",
    "RewardFileRefused",
    "VerifierResult",
    "entry_point_graders",
    "find_ctrf",
    "load_grader",
    "read_ctrf",
    "read_reward",
    "run_grader",
    "run_verifier",
]


__getattr__ = lazy_exports(__name__, _LAZY, globals())
