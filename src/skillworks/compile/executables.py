"""Which files of a package are executables (by shebang, extension and mode) and what runs them.

A schema (`scripts/x.xsd`), a data file or a README under `scripts/` is not one; a Python module with
neither a shebang nor a `__main__` guard (a library other scripts import, `__init__.py`) is not one either.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

INTERPRETERS = {
    ".py": "python3",
    ".sh": "bash",
    ".bash": "bash",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".rb": "ruby",
    ".pl": "perl",
    ".ts": "npx tsx",
    ".r": "Rscript",
}
_SHEBANG_TOOLS = {"python": "python3", "python3": "python3", "bash": "bash", "sh": "sh", "node": "node"}
_SHEBANG_TOOLS |= {"ruby": "ruby", "perl": "perl", "zsh": "zsh", "deno": "deno run", "Rscript": "Rscript"}
_RUN_DIRS = frozenset({"", "scripts", "script", "bin", "tools", "cli"})  # extension alone suffices here
_MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]", re.M)
_CLI_ENTRY = re.compile(r"^\s*(?:app|cli|main)\s*\(\s*\)\s*$|\bsys\.argv\b|\bargparse\b|@click\.command", re.M)


def _head(path: Path, size: int = 65536) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(size).decode("utf-8", errors="replace")
    except OSError:
        return ""


def shebang_interpreter(text: str) -> str | None:
    """`#!/usr/bin/env python3` -> python3; None without a shebang."""
    first = text.split("\n", 1)[0]
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    tool = words[0].rsplit("/", 1)[-1]
    if tool == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        tool = rest[0] if rest else ""
    base = re.sub(r"[\d.]+$", "", tool) if tool.startswith("python") else tool
    return _SHEBANG_TOOLS.get(tool) or _SHEBANG_TOOLS.get(base) or (tool or None)


def interpreter_for(root: Path, rel: str) -> str | None:
    """What runs the file, or None when it is not an executable."""
    path = root / rel
    if Path(rel).name.startswith(".") or not path.is_file():
        return None
    text = _head(path)
    if "\0" in text[:1024]:
        return None  # a binary file
    shebang = shebang_interpreter(text)
    suffix = Path(rel).suffix.lower()
    if suffix == ".py" and shebang is None and not _MAIN_GUARD.search(text) and not _CLI_ENTRY.search(text):
        return None  # a module other scripts import
    top = rel.split("/", 1)[0] if "/" in rel else ""
    by_place = top in _RUN_DIRS or bool(shebang)
    try:
        executable_bit = bool(os.stat(path).st_mode & stat.S_IXUSR)
    except OSError:
        executable_bit = False
    if suffix in INTERPRETERS and (by_place or executable_bit):
        return shebang if shebang in ("python3", "bash", "sh", "node") and suffix != ".ts" else INTERPRETERS[suffix]
    if shebang is not None and suffix in ("", ".command", ".cgi"):
        return shebang
    if suffix == "" and executable_bit and text.strip():
        return "bash"  # an executable text file without extension or shebang: run as a shell script
    return None


def is_executable(root: Path, rel: str) -> bool:
    return interpreter_for(root, rel) is not None
