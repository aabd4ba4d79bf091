"""Hand labels of findings (`benchmarks/data/security-labels.csv`) and the key a finding is matched on.

A label names the finding's file by a path relative to the corpus directory it was scanned from; the same
skill sits under different roots in different runs (`mirror-sample/<owner>@<repo>/...` in the shared
sample, `agent-skills-mirror/<owner>@<repo>/...` or just `<owner>@<repo>/...` in an extracted whole
mirror). So a file is keyed on its path from the first `<owner>@<repo>` directory on when it has one, and
on the path relative to the corpus directory otherwise (the reference skills: `anthropics-skills/...`).
A finding matches a label when rule, key and line agree.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

Key = tuple[str, str, str]


def file_key(path: str) -> str:
    """The part of a corpus-relative path that names the file whatever root it was extracted under."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        owner, at, repo = part.partition("@")
        if at and owner and repo:
            return "/".join(parts[i:])
    return path


def finding_key(rule: str, file: str, line: str) -> Key:
    return rule, file_key(file), line


def load_labels(path: Path) -> dict[Key, list[dict[str, str]]]:
    """Every labelled row under its finding's key; one finding may be labelled in more than one draw."""
    labelled: dict[Key, list[dict[str, str]]] = defaultdict(list)
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            labelled[finding_key(row["rule"], row["file"], row["line"])].append(row)
    return dict(labelled)


def verdict(rows: list[dict[str, str]]) -> str:
    """The verdict of a finding labelled once or more (TP, FP; CONFLICT when its draws disagree)."""
    verdicts = {r["verdict"].strip().upper() for r in rows}
    return verdicts.pop() if len(verdicts) == 1 else "CONFLICT"
