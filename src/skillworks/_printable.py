"""Text from task dirs and sandboxes made safe to print: terminal control and bidi characters shown
escaped. A task id, file name or tool output with an ANSI escape (ESC [ ... m, which can recolour,
move the cursor or retitle a terminal) or a right-to-left override (U+202E, which reorders what a
reader sees) is printed as ``\\x1b`` / ``\\u202e``, in progress lines and report pages alike."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the Unicode bidi embeddings/overrides/isolates
# and marks (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# a terminal control sequence (CSI: ESC [ params final, e.g. a colour code) as tools such as Ray print them
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def strip_ansi(text: str) -> str:
    """`text` without terminal control sequences (colour codes that Ray's task errors and coloured CLIs
    carry); any other control character is left for `printable` to escape."""
    return _CSI.sub("", text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """`text` with every terminal control and bidi character escaped (tab and, with `newlines`, line
    breaks kept)."""
    out = _UNSAFE.sub(_escape, text)
    return out if newlines else out.replace("\n", "\\n")
