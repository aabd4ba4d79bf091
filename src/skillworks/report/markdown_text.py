"""User-controlled text (task, condition, agent and run ids, error messages) made inert in GitHub-flavoured
Markdown, for the PR comment a CI job posts: a task named ``a | b`` cannot split a table cell, ``**x**`` or
``_x_`` cannot format, ``[x](https://…)`` cannot become a link, ``<img src=…>`` cannot be HTML, a newline
cannot end a list item, and ``@team`` cannot notify anyone.

- `md_text`: plain inline text. CommonMark lets any ASCII punctuation be escaped with a backslash, so the
  characters that start inline syntax are escaped; block markers (``#``, ``-``, ``1.``…) only at the start;
  terminal controls are shown escaped (`skillworks._printable`); line breaks become spaces. GitHub links
  ``@name`` and bare URLs after rendering, where an escape no longer shows, so a zero-width space goes
  after ``@`` and inside ``://`` and ``www.``.
- `md_code`: an inline code span (nothing inside is markup) fenced by more backticks than the text holds.
"""

from __future__ import annotations

import re

from skillworks._printable import printable

_INLINE = re.compile(r"([\\`*_\[\]<>|~$&])")  # emphasis, code, links, HTML, tables, strikethrough, math, entities
_BLOCK_START = re.compile(r"^([#+\-=]|\d+(?=[.)]))")  # a heading, a list item, a setext underline
_MENTION = re.compile(r"@(?=[\w-])")
_SCHEME = re.compile(r"(?i)(?<=[a-z])://")
_WWW = re.compile(r"(?i)\bwww\.")
ZWSP = "\u200b"


def _flat(text: str) -> str:
    return " ".join(printable(text).split())


def md_text(text: str) -> str:
    """``text`` on one line, shown literally by a Markdown renderer (GitHub's included)."""
    out = _INLINE.sub(r"\\\1", _flat(text))
    out = _BLOCK_START.sub(lambda m: m.group() + "\\" if m.group().isdigit() else "\\" + m.group(), out)
    out = _MENTION.sub("@" + ZWSP, out)
    out = _SCHEME.sub(":" + ZWSP + "//", out)
    return _WWW.sub(lambda m: m.group()[:3] + ZWSP + ".", out)


def md_code(text: str, *, in_table: bool = False) -> str:
    """``text`` as an inline code span; ``in_table``: its pipes escaped (GFM honours ``\\|`` inside a code
    span in a table cell, and only there)."""
    flat = _flat(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    body = flat.replace("|", "\\|") if in_table else flat
    return f"{fence}{pad}{body}{pad}{fence}"
