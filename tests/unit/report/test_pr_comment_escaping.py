"""Hostile names in the PR comment: task ids, a condition, an agent label and an error message full of
Markdown and HTML. The comment is rendered by a real CommonMark renderer with GitHub's table and
strikethrough extensions (markdown-it-py, which rich depends on) and must show every name literally:
no formatting, link, image, HTML, heading, list or extra table cell of the run's making. Results are
constructed (provider "scripted", the test double; see conftest)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from skillworks.report import build_summary
from skillworks.report.markdown_text import ZWSP, md_code, md_text
from skillworks.report.pr_comment import render_pr_comment
from skillworks.results import TrialError

TASKS = [
    "pipe|task",
    "`tick`",
    "[click](https://evil.example/x)",
    "**bold**",
    "_under_",
    "<img src=x onerror=alert(1)>",
    "# heading",
    "1. listed",
    "~~struck~~ $x^2$ &amp;",
    "back\\slash",
]
CONDITION = "cur*ated*|x"
AGENT = "@org/team <b>agent</b>"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[int] = []  # cells per table row
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append(0)
        elif tag in ("td", "th"):
            self.rows[-1] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_hostile_names_render_literally_in_the_pr_comment(fx: Any, tmp_path: Path) -> None:
    error = TrialError(
        category="sandbox_error", message="boom | **x**\n- item <script>alert(1)</script>", phase="setup"
    )
    results = [
        fx.trial(t, c, 0, 1.0 if c == CONDITION else 0.0, agent=AGENT)
        for t in TASKS
        for c in ("none", CONDITION)
        if not (t == "_under_" and c == "none")
    ]
    results.append(fx.trial("_under_", "none", 0, None, agent=AGENT, error=error))
    agents = [{"name": "builtin", "model": "scripted/demo", "options": {"label": AGENT}}]
    exp = fx.experiment(tasks=TASKS, conditions=("none", CONDITION), agents=agents, trials=1)
    text = render_pr_comment(build_summary(fx.write_run(tmp_path, results, exp), resamples=100))

    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    parsed = _Tags()
    parsed.feed(html)
    tags = set(parsed.tags)
    assert not tags & {"a", "img", "script", "b", "em", "s", "del", "h1", "ol", "hr"}, tags
    assert parsed.tags.count("h3") == 1 and parsed.tags.count("strong") == 2  # the title; Warning, Skill effect
    assert parsed.tags.count("li") == 1  # one errored trial; its message's "- item" is no list item
    # every row keeps its table's column count (a pipe in a name cannot add a cell): pass rates and Δ have
    # 5 columns and Δ 6 (with g), per task 3 (the task and 2 conditions): header + 2 rates, header + 1 Δ,
    # header + 10 tasks
    assert parsed.rows == [5, 5, 5, 6, 6, *[3] * 11], parsed.rows
    shown = "".join(parsed.text)
    for name in [*TASKS, CONDITION, AGENT.replace("@", "@" + ZWSP)]:
        assert name.replace("https://", "https:" + ZWSP + "//") in shown, name
    assert "boom | **x** - item <script>alert(1)</script>" in shown  # the message, on one line, literally


def test_md_text_and_md_code() -> None:
    assert md_text("a|b\nc") == "a\\|b c"
    assert md_text("1) x") == "1\\) x" and md_text("- x") == "\\- x" and md_text("x - y") == "x - y"
    assert md_text("mail me@example.com") == "mail me@" + ZWSP + "example.com"
    assert md_text("www.example.com") == "www" + ZWSP + ".example.com"
    assert md_text("\x1b[31m") == "\\\\x1b\\[31m"  # a terminal control is shown escaped, not sent
    assert md_code("a``b") == "```a``b```" and md_code("`x") == "`` `x ``"
    assert md_code("a|b", in_table=True) == "`a\\|b`" and md_code("a|b") == "`a|b`"
