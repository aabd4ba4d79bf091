"""Output directory names for a tree of skills: the skill's name, or, when several skills of one compile
share a name (two repositories' `pdf`), that name plus a short stable hash of the skill's path."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from skillworks.compile.loading import skill_name


def output_names(roots: list[Path]) -> dict[Path, str]:
    """root -> OUT subdirectory; distinct for distinct roots, and the same for a root on every run."""
    names = {root: skill_name(root) for root in roots}
    counts = Counter(names.values())
    return {
        root: name if counts[name] == 1 else f"{name}--{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]}"
        for root, name in names.items()
    }
