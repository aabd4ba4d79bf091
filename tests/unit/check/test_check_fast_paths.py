"""The scan's fast paths give the answers of the plain definitions they replace (see benchmarks/
check_findings_diff.py for the same comparison on thousands of real skills)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillworks.check import estimate_tokens, scan_text
from skillworks.check.lowered import CaselessPattern, lower_same_offsets
from skillworks.check.tokens import estimate_tokens_regex

TEXTS = [
    "",
    "plain words and internationalization 1234567 x",
    "digits of other scripts \u0663\u0664\u0665\u0666 and \u0967\u0968 and full-width \uff11\uff12\uff13\uff14",
    "spaces of other kinds:\u00a0a\u2003b\u3000c\u2028d\x1ce\x85f",
    "数据处理 — émigré naïve Straße \U0001f9d1\u200d\U0001f4bb",
    "\n\n\n    indented\n\t\ttabs\r\nwindows",
    "lone surrogate \ud800 here",
    "KELVIN \u212a, dotless \u0131, long \u017f, dotted \u0130",
]


@pytest.mark.parametrize("text", TEXTS)
def test_token_estimate_is_the_regex_definition(text: str) -> None:
    assert estimate_tokens(text) == estimate_tokens_regex(text)
    assert estimate_tokens(text * 7) == estimate_tokens_regex(text * 7)


CASELESS = CaselessPattern(r"\b(pass(word)?|make sure|kelvin)\b\s*[:=]?\s*(\w+)")


@pytest.mark.parametrize(
    "text",
    [
        "PASSWORD = hunter22 and Make Sure it works",
        "pa\u017f\u017fword = x1 (long s matches s under re.IGNORECASE)",
        "make \u017fure: yes, d\u0131t",
        "\u212aELVIN = 5",
        "\u0130\u0130 password = shifted",  # lower() adds a code point per dotted capital I
    ],
)
def test_caseless_pattern_matches_like_ignorecase(text: str) -> None:
    low = lower_same_offsets(text)
    want = [(m.span(), m.group(3)) for m in re.finditer(CASELESS.pattern, text, re.I)]
    got = [(m.span(), text[m.start(3) : m.end(3)]) for m in CASELESS.finditer(text, low)]
    assert got == want and want
    assert bool(CASELESS.search(text, low)) is True


def test_caseless_pattern_needs_lower_case_literals() -> None:
    with pytest.raises(ValueError, match="lower-case"):
        CaselessPattern(r"\bPassword\b")
    CaselessPattern(r"\S+\W\D")  # upper-case escapes are classes, not literals


def test_assignment_secret_keeps_the_key_case_and_twilio_keys_are_found() -> None:
    found = scan_text(
        'API_KEY = "q8Zr2LmV0pXe7TtY3kWb"\nsid AC' + "k3j9x0q2m8w7e5r4t1y6u9i0o2p4a6s8" + " end\n", "SKILL.md"
    )
    kinds = {f.message for f in found}
    assert "credential-shaped string (hard-coded API_KEY)" in kinds
    assert "credential-shaped string (Twilio API Key)" in kinds


def test_python_imports_and_try_blocks_are_found_at_any_depth() -> None:
    from skillworks.check.reader import SkillFile
    from skillworks.check.scripts import _python_findings

    nested = (
        '"""Doc."""\n'
        "class A:\n    def f(self):\n        match x:\n            case 1:\n"
        "                try:\n                    import argparse\n                except E:\n                    pass\n"
    )
    f = SkillFile("scripts/a.py", Path("a.py"), 0, nested)
    assert _python_findings(f, nested) == []  # argparse counts as usage, the try as error handling
    flat = '"""Doc."""\nimport os\nprint(os.getcwd())\n'
    assert [x.rule_id for x in _python_findings(f, flat)] == ["script-no-error-handling"]
