"""`skillworks view` in headless Chromium over a real run (the module's scripted run: builtin agent, local
sandbox, gateway; the model is the scripted provider, the one test double): the trials table filters,
sorts and searches trajectories, refreshes while results.jsonl grows, links each trial's page, and the
server refuses foreign Host headers and links out of the run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.bwrap, pytest.mark.chromium]

ROWS = "[...document.querySelectorAll('#trials tbody tr')]"


@pytest.fixture(scope="module")
def served(scripted_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    run = tmp_path_factory.mktemp("view") / "runs" / "pages"
    shutil.copytree(scripted_run, run, symlinks=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillworks.cli.main", "view", str(run.parent), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert match, line + (proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        yield match.group(1), run
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _trial_rows(tab) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return tab.eval(  # type: ignore[no-any-return]
        f"{ROWS}.map(tr => ({{task: tr.cells[0].textContent, condition: tr.cells[1].textContent, "
        "outcome: tr.cells[4].textContent, reward: tr.cells[5].textContent, trial: tr.dataset.trial}))"
    )


def _set(tab, element: str, value: str, event: str) -> None:  # type: ignore[no-untyped-def]
    """Set a control's value as a person would (then the event the page listens for)."""
    tab.eval(
        f"{{ const e = document.getElementById({json.dumps(element)}); e.value = {json.dumps(value)}; "
        f"e.dispatchEvent(new Event({json.dumps(event)})); }}"
    )


def test_view_filters_sorts_searches_and_follows_a_live_run(chromium, served: tuple[str, Path]) -> None:  # type: ignore[no-untyped-def]
    url, run = served
    tab = chromium.open(url)
    try:
        tab.wait(f"{ROWS}.length === 4")
        assert tab.eval("document.querySelector('#runs tbody').textContent").startswith("pages")

        # filter: the condition select holds each condition with its count
        options = tab.eval("[...document.querySelectorAll('#f-condition option')].map(o => o.textContent)")
        assert options == ["all", "curated (2)", "none (2)"]
        _set(tab, "f-condition", "curated", "change")
        tab.wait(f"{ROWS}.length === 2")
        assert {r["condition"] for r in _trial_rows(tab)} == {"curated"}
        assert "condition=curated" in tab.eval("location.hash")

        # sort by reward, both ways (clicking the column header)
        tab.eval("document.getElementById('reset').click()")
        tab.wait(f"{ROWS}.length === 4")
        tab.eval("document.querySelector('th[data-sort=reward]').click()")
        tab.wait("document.querySelector('th[data-sort=reward]').classList.contains('sorted')")
        tab.wait(f"{ROWS}[0].cells[5].textContent === '0.00'")
        assert [r["reward"] for r in _trial_rows(tab)] == ["0.00", "0.00", "1.00", "1.00"]
        tab.eval("document.querySelector('th[data-sort=reward]').click()")
        tab.wait(f"{ROWS}[0].cells[5].textContent === '1.00'")
        assert [r["reward"] for r in _trial_rows(tab)] == ["1.00", "1.00", "0.00", "0.00"]

        # full-text search over the trajectories: a word of the curated skill that only its trials read
        word = "bundesland"
        expected = {d.name for d in (run / "trials").iterdir() if word in (d / "trajectory.json").read_text().lower()}
        assert expected and len(expected) < 4
        _set(tab, "q", word, "input")
        tab.wait(f"{ROWS}.length === {len(expected)}")
        assert {r["trial"] for r in _trial_rows(tab)} == expected
        _set(tab, "q", "no-such-word-anywhere", "input")
        tab.wait(f"{ROWS}.length === 0")
        tab.eval("document.getElementById('reset').click()")
        tab.wait(f"{ROWS}.length === 4")

        # live: a trial recorded while the page is open appears without a reload
        results = run / "results.jsonl"
        last = json.loads(results.read_text().splitlines()[-1])
        last.update(
            trial_id="invoice-from-template__none__late__t9", trial_index=9, outcome="error", reward=None,
            error={"category": "rate_limit", "message": "429 from the provider", "phase": "agent"},
        )  # fmt: skip
        with results.open("a") as fh:
            fh.write(json.dumps(last) + "\n")
        tab.wait(f"{ROWS}.length === 5", timeout=15)
        options = tab.eval("[...document.querySelectorAll('#f-error_category option')].map(o => o.value)")
        assert "rate_limit" in options
        assert tab.errors == []

        # each trial's page is served from the run, with no script allowed
        href = tab.eval(f"{ROWS}[0].querySelector('a').getAttribute('href')")
        with urllib.request.urlopen(url.rstrip("/") + href, timeout=10) as resp:
            assert resp.status == 200 and "script-src" not in resp.headers["Content-Security-Policy"]
            assert "default-src 'none'" in resp.headers["Content-Security-Policy"]
            assert b"<html" in resp.read()[:500].lower()
    finally:
        tab.close()


def test_view_refuses_foreign_hosts_and_links_out_of_the_run(served: tuple[str, Path]) -> None:
    url, run = served
    request = urllib.request.Request(url + "api/runs", headers={"Host": "attacker.example:80"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 403
    trial = next((run / "trials").iterdir())
    os.symlink("/etc/passwd", trial / "leak.txt")
    for path in (f"runs/r0/trials/{trial.name}/leak.txt", "runs/r0/%2e%2e/%2e%2e/etc/passwd", "runs/r9/report.html"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url + path, timeout=10)
        assert err.value.code == 404, path
