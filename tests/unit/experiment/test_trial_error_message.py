"""A trial's error message carries no terminal colour codes, whoever raised it (Ray's task errors colour
their text; a trial that failed inside a Ray node call used to record `\\x1b[36m...` in results.jsonl)."""

from __future__ import annotations

from skillworks.results import TrialError


def test_colour_codes_are_removed_from_a_recorded_error_message() -> None:
    raised = "\x1b[36mray::NodeGateway.open_trial()\x1b[39m (pid=4, ip=10.0.0.2)\n  OSError: \x1b[1;31mAF_UNIX path too long\x1b[0m"
    error = TrialError(category="RayTaskError(OSError)", message=raised, phase="internal")
    assert "\x1b" not in error.message
    assert error.message == "ray::NodeGateway.open_trial() (pid=4, ip=10.0.0.2)\n  OSError: AF_UNIX path too long"
    # read back from results.jsonl the same way
    assert TrialError.model_validate_json(error.model_dump_json()).message == error.message


def test_other_text_of_a_message_is_kept_as_it_is() -> None:
    text = "verifier exited 2: expected [1, 2] got {'a': 1} — see /logs/verifier/test-stdout.txt"
    assert TrialError(category="verifier_error", message=text, phase="verify").message == text
