"""`skillworks serve-skills` inside a trial's sandbox, started by an agent CLI as its own stdio MCP server.

Under the `compiled` condition a harness (Claude Code, Codex, Gemini CLI, OpenCode) is given one MCP server
in its own MCP configuration: this process's interpreter running ``skillworks serve-skills <artifacts>``
over stdio. The CLI starts it inside the sandbox, so every operator runs there (as the agent's user, in the
task's workspace) and no port is opened: the server talks to the CLI over a pipe, which under
``network: none`` adds no network path at all.

To make that interpreter runnable in the sandbox, the host's Python is mounted read-only at its own paths
(the same mechanism as the OpenHands harness): the venv, the base installation it was made from, and the
directory skillworks is imported from when that lies outside both (an editable install). On the container
backend the interpreter's extension modules need the image's shared libraries (libssl3, libsqlite3 …);
`PROBE_CODE` checks that before the CLI runs.

What the agent can see: the artifacts (contract + capsule, i.e. the raw package too, the runtime's lossless
fallback) are staged under ``$HOME/.skillworks/compiled``, which no harness scans for skills; the CLI lists
only the runtime's tools. They are readable by the agent's own shell (the server runs as the agent's user),
which the trial records (`compiled-skills.json` `sandbox_artifacts`).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

import skillworks
from skillworks._tempdirs import temp_prefix

SERVER_KEY = "skillworks"  # the server's name in the CLI's MCP configuration (Claude Code: mcp__skillworks__…)
# what serve-skills imports that needs the image's shared libraries, and the server itself
PROBE_CODE = "import ssl, sqlite3, ctypes; import skillworks.compile.mcp_server, mcp.server.stdio"


def _package_root() -> Path:
    return Path(skillworks.__file__).resolve().parent.parent


def interpreter() -> str:
    """This process's interpreter as invoked (a venv's bin/python, not the file it links to: the venv is
    found from that path)."""
    return str(Path(sys.executable).absolute())


@functools.cache
def runtime_binds() -> tuple[tuple[Path, str], ...]:
    """Host directories mounted read-only, at their own paths, so `interpreter()` runs serve-skills; every
    skill directory inside them (a package may ship a SKILL.md, e.g. typer's) is covered by an empty one, so
    the sandbox shows no skill besides what the condition stages (the staged-skill audit checks)."""
    dirs: list[Path] = []
    wanted = [Path(sys.prefix).absolute(), Path(sys.base_prefix).resolve(), _package_root()]
    wanted.append(Path(sys.executable).absolute().parent)
    for path in wanted:
        if not any(path == d or path.is_relative_to(d) for d in dirs):
            dirs = [d for d in dirs if not d.is_relative_to(path)] + [path]
    binds = [(d, str(d)) for d in dirs]
    skill_dirs = [Path(root) for d in dirs for root, _, files in os.walk(d) if "SKILL.md" in files]
    if skill_dirs:
        empty = Path(tempfile.mkdtemp(prefix=temp_prefix("empty")))
        atexit.register(shutil.rmtree, empty, True)
        binds += [(empty, str(s)) for s in skill_dirs]
    return tuple(binds)


def server_argv(artifacts: str, workdir: str, calls_log: str | None = None) -> list[str]:
    """The command line (interpreter first) of the stdio server over the artifacts staged at `artifacts`."""
    argv = [interpreter(), "-I", "-m", "skillworks.cli.main", "serve-skills", artifacts, "--workdir", workdir]
    if calls_log is not None:
        argv += ["--calls-log", calls_log]
    return argv


def probe_argv() -> list[str]:
    return [interpreter(), "-I", "-c", PROBE_CODE]
