"""Script lint with external tools, batched over every script of a scan.

Python: ruff (when installed). Shell: shellcheck (when installed) plus `bash -n`, the syntax authority:
it runs on every script shellcheck cannot parse, and on every script when shellcheck is missing
(one `bash -n` process per script is the slowest part of a lint, so clean scripts skip it). Each
tool runs a few times per scan over many files rather than once per file, so a tree of thousands of
skills lints in seconds. A missing tool is reported in `CheckReport.lint_tools`, and a run that timed
out or gave unreadable output in `CheckReport.lint_problems` (its scripts are then not linted), never silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillworks._aio import spawn
from skillworks.check.model import Finding
from skillworks.check.rules import finding

# shellcheck holds every file of a run in memory, superlinearly: on the public mirror 200 scripts (0.9 MB)
# took 137 MiB, 100 scripts (0.4 MB) 42 MiB; so a batch ends at whichever limit it reaches first
_CHUNK = 100
_CHUNK_BYTES = 400_000
# one large script alone can take more: a 76 kB script of the mirror took 136 MiB in shellcheck (its RTS
# options are disabled, so its heap cannot be capped); such scripts are linted at `finish`, when the scan
# workers have exited, one per run
_BIG_SCRIPT = 32_000
_RUFF_CHUNK = 200  # Python files per ruff run
_TIMEOUT = 120.0
RUFF_SELECT = "E9,F"


@dataclass(frozen=True)
class LintTarget:
    """One script to lint: `key` groups findings back to its skill, `rel` is the path in the skill."""

    key: int
    rel: str
    path: Path
    language: str  # "python" | "shell"
    size: int = 0  # characters, to cap the bytes of one linter run


def find_tool(name: str) -> str | None:
    """The tool on PATH, or next to the running interpreter (a venv's bin/)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


_TIMED_OUT = -1  # the exit status `_run` gives a tool it killed at the timeout


async def _run(argv: list[str]) -> tuple[int, bytes, bytes]:
    proc = await spawn(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), _TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):  # it may have ended just now
            proc.kill()
        await proc.wait()
        return _TIMED_OUT, b"", b"timed out"
    return proc.returncode or 0, out, err


def _incomplete(tool: str, code: int, n: int) -> str:
    why = f"timed out after {_TIMEOUT:.0f} s" if code == _TIMED_OUT else f"gave no readable output (exit {code})"
    return f"{tool} {why} on {n} script(s): they are not linted"


async def _ruff(ruff: str, targets: list[LintTarget], out: dict[int, list[Finding]], problems: list[str]) -> None:
    by_path = {str(t.path): t for t in targets}
    argv = [
        ruff,
        "check",
        "--isolated",
        "--no-cache",
        "--output-format",
        "json",
        "--select",
        RUFF_SELECT,
        "--exit-zero",
        *by_path,
    ]
    code, stdout, _ = await _run(argv)
    try:
        items = json.loads(stdout) if code != _TIMED_OUT else None
    except json.JSONDecodeError:
        items = None
    if not isinstance(items, list):
        problems.append(_incomplete("ruff", code, len(targets)))
        return
    for item in items:
        target = by_path.get(str(item.get("filename")))
        code = item.get("code")
        if target is None or code in (None, "E999") or "syntax" in str(item.get("message", "")).lower():
            continue  # syntax errors are reported by the ast check already
        line = (item.get("location") or {}).get("row")
        out.setdefault(target.key, []).append(
            finding("lint-python", f"ruff {code}: {item.get('message')}", target.rel, line, code)
        )


async def _shellcheck(
    shellcheck: str, bash: str | None, targets: list[LintTarget], out: dict[int, list[Finding]], problems: list[str]
) -> None:
    """shellcheck over many files. Scripts it cannot parse (SC1xxx errors) go to `bash -n`, the syntax
    authority: a bash syntax error becomes script-syntax-error; if bash accepts the file, shellcheck's
    parse complaint is kept as a lint finding."""
    by_path = {str(t.path): t for t in targets}
    argv = [shellcheck, "-f", "json1", "-S", "warning", "-s", "bash", *by_path]
    code, stdout, _ = await _run(argv)
    try:
        comments = json.loads(stdout).get("comments") if code != _TIMED_OUT else None
    except (json.JSONDecodeError, AttributeError):
        comments = None
    if not isinstance(comments, list):
        problems.append(_incomplete("shellcheck", code, len(targets)))
        return
    parse_errors: dict[str, list[Finding]] = {}
    for c in comments:
        target = by_path.get(str(c.get("file")))
        if target is None:
            continue
        code = int(c.get("code") or 0)
        found = finding(
            "lint-shell",
            f"shellcheck SC{code} ({c.get('level')}): {c.get('message')}",
            target.rel,
            c.get("line"),
            f"SC{code}",
        )
        if code < 2000 and c.get("level") == "error":
            parse_errors.setdefault(str(target.path), []).append(found)
        else:
            out.setdefault(target.key, []).append(found)
    for path, kept in parse_errors.items():
        target = by_path[path]
        if bash is None or not await _bash_n(bash, target, out, problems):
            out.setdefault(target.key, []).extend(kept)


async def _bash_n(bash: str, target: LintTarget, out: dict[int, list[Finding]], problems: list[str]) -> bool:
    """`bash -n` on one script; True (and a finding) when bash reports a syntax error."""
    code, _, stderr = await _run([bash, "-n", str(target.path)])
    if code == 0:
        return False
    if code == _TIMED_OUT:
        problems.append(f"bash -n timed out after {_TIMEOUT:.0f} s on {target.rel}: its syntax is not checked")
        return False
    text = stderr.decode("utf-8", "replace").strip()
    line = None
    first = text.splitlines()[0] if text else "bash -n failed"
    parts = first.split(": ")
    for part in parts:
        if part.startswith("line ") and part[5:].isdigit():
            line = int(part[5:])
    message = parts[-1] if parts else first
    out.setdefault(target.key, []).append(
        finding("script-syntax-error", f"shell syntax error: {message}", target.rel, line, first[-200:])
    )
    return True


class Linter:
    """Runs the external linters in the background while the scan goes on: `add` targets as they are
    found (chunks start as soon as they fill), then `await finish()`."""

    def __init__(
        self, *, use_ruff: bool = True, use_shellcheck: bool = True, use_bash: bool = True, concurrency: int = 0
    ) -> None:
        """`concurrency`: linter processes at a time (default: one per core, at least two)."""
        self.ruff = find_tool("ruff") if use_ruff else None
        self.shellcheck = find_tool("shellcheck") if use_shellcheck else None
        self.bash = find_tool("bash") if use_bash else None
        self.tools = {
            "ruff": self.ruff is not None,
            "shellcheck": self.shellcheck is not None,
            "bash": self.bash is not None,
        }
        self.findings: dict[int, list[Finding]] = {}
        self.problems: list[str] = []  # tool runs that timed out or gave unreadable output
        self._py: list[LintTarget] = []
        self._sh: list[LintTarget] = []
        self._sh_bytes = 0
        self._sh_big: list[LintTarget] = []
        self._jobs: list[asyncio.Task[None]] = []
        self._sem = asyncio.Semaphore(concurrency or max(2, os.cpu_count() or 2))

    async def _limited(self, job: Coroutine[Any, Any, None]) -> None:
        async with self._sem:
            await job

    def _start(self, job: Coroutine[Any, Any, None]) -> None:
        self._jobs.append(asyncio.create_task(self._limited(job)))

    def add(self, targets: list[LintTarget]) -> None:
        for t in targets:
            if t.language == "python" and self.ruff:
                self._py.append(t)
            elif t.language == "shell":
                if self.shellcheck and t.size >= _BIG_SCRIPT:
                    self._sh_big.append(t)
                elif self.shellcheck:
                    self._sh.append(t)  # unparsable scripts go on to `bash -n`
                    self._sh_bytes += t.size
                    if len(self._sh) >= _CHUNK or self._sh_bytes >= _CHUNK_BYTES:
                        self._start(_shellcheck(self.shellcheck, self.bash, self._sh, self.findings, self.problems))
                        self._sh, self._sh_bytes = [], 0
                elif self.bash:
                    self._start(self._bash_only(t))
        self._flush(final=False)

    async def _bash_only(self, target: LintTarget) -> None:
        assert self.bash is not None
        await _bash_n(self.bash, target, self.findings, self.problems)

    def _flush(self, final: bool) -> None:
        # ruff is quick and fans out itself: small runs keep it beside the scan instead of after it
        if self.ruff and (len(self._py) >= _RUFF_CHUNK or (final and self._py)):
            self._start(_ruff(self.ruff, self._py, self.findings, self.problems))
            self._py = []
        if self.shellcheck and final and self._sh:
            self._start(_shellcheck(self.shellcheck, self.bash, self._sh, self.findings, self.problems))
            self._sh, self._sh_bytes = [], 0

    async def finish(self) -> dict[int, list[Finding]]:
        self._flush(final=True)
        if self.shellcheck:
            for big in self._sh_big:  # one run each: their heaps would add up in one run
                self._start(_shellcheck(self.shellcheck, self.bash, [big], self.findings, self.problems))
            self._sh_big = []
        if self._jobs:
            await asyncio.gather(*self._jobs)
        return self.findings


async def lint_scripts(
    targets: list[LintTarget], *, use_ruff: bool = True, use_shellcheck: bool = True
) -> tuple[dict[int, list[Finding]], dict[str, bool]]:
    """Lint every target. Returns findings keyed by `LintTarget.key` and which tools were available."""
    linter = Linter(use_ruff=use_ruff, use_shellcheck=use_shellcheck)
    linter.add(targets)
    return await linter.finish(), linter.tools
