"""Names of skillworks' temporary directories: ``sw-<kind>-<pid>-<random>`` in the system temp dir.

The pid in the name says which process made the directory, so `skillworks clean` can remove the ones
a killed run left behind (kill -9 skips every cleanup) without touching those of a live process."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

_NAME_RE = re.compile(r"^sw-([a-z]+)-(\d+)-")


def temp_prefix(kind: str) -> str:
    """Prefix for a temp dir of this process, e.g. ``sw-scratch-1234-``."""
    return f"sw-{kind}-{os.getpid()}-"


def dead_temp_dirs() -> list[Path]:
    """skillworks temp dirs whose process is gone."""
    found: list[Path] = []
    for path in sorted(Path(tempfile.gettempdir()).glob("sw-*-*")):
        match = _NAME_RE.match(path.name)
        if match is None or not path.is_dir() or path.is_symlink():
            continue
        if not Path(f"/proc/{match.group(2)}").exists():
            found.append(path)
    return found
