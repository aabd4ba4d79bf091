"""Identical errors grouped: 20 trials failing the same way are one line ``×20`` with their trial ids
collapsed, in report.md, report.html, the PR comment and the CLI's end summary (the headline); a
different message is another group. Results are constructed (provider "scripted", the test double)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skillworks.cli.main import main
from skillworks.report import build_summary, write_reports
from skillworks.report.error_groups import collapse_ids
from skillworks.report.pr_comment import render_pr_comment
from skillworks.results import TrialError

SAME = TrialError(category="sandbox_error", message="podman: image pull failed\n(retry later)", phase="setup")
OTHER = TrialError(category="agent_error", message="harness exited 2", phase="agent")


@pytest.fixture
def run(fx: Any, tmp_path: Path) -> Path:
    """2 tasks x 2 conditions x 10 trials: every none trial (20) errors the same way, one curated trial
    errors differently, the rest pass."""
    results = []
    for t in ("t1", "t2"):
        for c in ("none", "curated"):
            for k in range(10):
                if c == "none":
                    results.append(fx.trial(t, c, k, None, error=SAME))
                elif t == "t2" and k == 3:
                    results.append(fx.trial(t, c, k, None, error=OTHER))
                else:
                    results.append(fx.trial(t, c, k, 1.0))
    return fx.write_run(tmp_path, results, fx.experiment(trials=10))  # type: ignore[no-any-return]


def test_twenty_identical_errors_are_one_line_in_every_report(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = write_reports(run, resamples=100)
    md = files["md"].read_text()
    errors_md = md.split("## Errors")[1].split("## ")[0]
    rows = [line for line in errors_md.splitlines() if line.startswith("| ×")]
    assert rows == [
        "| ×20 | t1__none__a1__t0–t9, t2__none__a1__t0–t9 | setup | sandbox_error | podman: image pull failed "
        "(retry later) |",
        "| ×1 | t2__curated__a1__t3 | agent | agent_error | harness exited 2 |",
    ]
    assert "21 errored attempt(s) of 2 kind(s)" in errors_md

    html = files["html"].read_text()
    groups = re.findall(r'<tr class="error-group"><td class="n">(×\d+)</td><td>([^<]*)</td>', html)
    assert groups == [("×20", "t1__none__a1__t0–t9, t2__none__a1__t0–t9"), ("×1", "t2__curated__a1__t3")]

    comment = render_pr_comment(build_summary(run, resamples=100))
    items = [line for line in comment.splitlines() if line.startswith("- ×")]
    assert len(items) == 2 and items[0].startswith("- ×20 setup / sandbox\\_error: podman: image pull failed")
    assert items[0].endswith("— `t1__none__a1__t0–t9`, `t2__none__a1__t0–t9`")
    assert "21 errored trial(s), 2 kind(s) of error" in comment

    monkeypatch.setattr("sys.argv", ["skillworks", "report", str(run), "--resamples", "100"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code in (0, None)
    out = capsys.readouterr().out.splitlines()
    start = out.index("errors: 21 errored attempt(s), 2 kind(s)")
    assert out[start + 1 : start + 5] == [
        "  ×20 setup/sandbox_error: podman: image pull failed (retry later)",
        "      t1__none__a1__t0–t9, t2__none__a1__t0–t9",
        "  ×1 agent/agent_error: harness exited 2",
        "      t2__curated__a1__t3",
    ]


def test_collapse_ids() -> None:
    ids = ["a__none__m__t0", "a__none__m__t1", "a__none__m__t2", "a__none__m__t5", "b__none__m__t4", "imported-7"]
    assert collapse_ids(ids) == ["a__none__m__t{0–2,5}", "b__none__m__t4", "imported-7"]
    assert collapse_ids(["x__t3", "x__t1", "x__t2", "x__t3"]) == ["x__t1–t3"]
