"""Case-insensitive regex search at case-sensitive speed: search the lower-cased text with the pattern
compiled without re.IGNORECASE (about twice as fast on long texts), and fall back to re.IGNORECASE on
the rare text where that could give another answer.

The two agree for a pattern whose literals and classes are lower-case when `text.lower()` keeps every
offset and the text holds neither of the two characters re.IGNORECASE matches to an ASCII letter that
lower() leaves alone: dotless i (U+0131) and long s (U+017F). Every other character whose lower-case
form is ASCII (only the Kelvin sign) is matched to that letter by re.IGNORECASE as well, and lower()
never moves a character into or out of `\\w`, `\\s` or `\\d`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ODD = re.compile("[\u0131\u017f]")
_ESCAPE = re.compile(r"\\.")


def lower_same_offsets(text: str, low: str | None = None) -> str | None:
    """`text.lower()` (pass it as `low` if you have it) when searching it with a lower-case pattern is the
    same as searching `text` with re.IGNORECASE (same offsets, no dotless i or long s); None otherwise."""
    low = text.lower() if low is None else low
    if len(low) != len(text) or (not text.isascii() and _ODD.search(text)):
        return None
    return low


class CaselessPattern:
    """A pattern searched case-insensitively: on `low` (from `lower_same_offsets`) when given, else on the
    text with re.IGNORECASE. Match offsets index the original text either way; read groups from the
    original text (`text[m.start(1):m.end(1)]`), not from the match, to keep their case."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        if any(c.isupper() for c in _ESCAPE.sub("", pattern)):  # `\S`, `\W` and `\D` are fine
            raise ValueError(f"CaselessPattern needs a lower-case pattern: {pattern!r}")
        self.pattern = pattern
        self.ignorecase = re.compile(pattern, flags | re.I)
        self.lowercase = re.compile(pattern, flags & ~re.I)

    def search(self, text: str, low: str | None) -> re.Match[str] | None:
        return self.lowercase.search(low) if low is not None else self.ignorecase.search(text)

    def finditer(self, text: str, low: str | None) -> Iterator[re.Match[str]]:
        return self.lowercase.finditer(low) if low is not None else self.ignorecase.finditer(text)
