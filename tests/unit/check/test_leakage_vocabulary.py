"""A skill that teaches the domain's words is no answer key: the quickstart invoice task's verifier accepts
either of two phrases for the reverse charge (a tuple of alternatives); its curated skill, which explains
when the reverse charge applies, names one of them. That is a warning to look at, never a blocking leak
(a skill holding every word value of a verifier — a label and the instance it is for — still is an error:
tests/unit/provision/test_gate_leak_forms.py, the dict form)."""

from __future__ import annotations

from pathlib import Path

from skillworks.check import audit_task_leakage
from skillworks.check.model import Severity
from skillworks.tasks import load_task

TASK = Path(__file__).resolve().parents[3] / "examples" / "quickstart" / "invoice-from-template"


def _errors(task_dir: Path) -> list[str]:
    findings = audit_task_leakage(load_task(task_dir))
    return [f.message for f in findings if f.rule_id == "leak-expected-value" and f.severity == Severity.ERROR]


def test_one_of_a_verifiers_alternative_phrases_in_a_skill_is_a_warning(tmp_path: Path) -> None:
    findings = audit_task_leakage(load_task(TASK))
    phrase = [f for f in findings if f.rule_id == "leak-expected-value" and "reverse charge" in f.message]
    assert phrase and all(f.severity == Severity.WARNING for f in phrase)
    assert _errors(TASK) == []
