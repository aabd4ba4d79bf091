"""Every check rule is defined once: a second definition of an id silently replaced the first (two
definitions of sec-persistence and sec-permission-tampering, with different wording, were merged in)."""

from __future__ import annotations

from collections import Counter

from skillworks.check.rules import _RULES, RULES


def test_each_rule_id_is_defined_once() -> None:
    counts = Counter(rule.id for rule in _RULES)
    assert [rule_id for rule_id, n in counts.items() if n > 1] == []
    assert len(RULES) == len(_RULES)
