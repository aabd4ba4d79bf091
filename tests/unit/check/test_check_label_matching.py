"""`benchmarks/corpus_scan.py --labels` matches a scan's findings to the hand labels whatever directory the
skills were extracted under: the shared sample (`mirror-sample/<owner>@<repo>/...`), the labels' own
whole-mirror root (`agent-skills-mirror/<owner>@<repo>/...`) and a bare extracted mirror
(`<owner>@<repo>/...`) all name the same file."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

LABELS = (
    "rule,file,line,verdict,reason,sample\n"
    "sec-secret,agent-skills-mirror/acme@tools/skills/deploy/SKILL.md,12,TP,a live-format key,mirror-tune\n"
    "sec-secret,mirror-sample/acme@tools/skills/deploy/SKILL.md,12,TP,the same finding from the sample,\n"
    "sec-remote-exec,agent-skills-mirror/acme@tools/skills/deploy/scripts/setup.sh,3,FP,a comment,mirror-holdout\n"
    "sec-exfiltration,anthropics-skills/skills/api/SKILL.md,7,FP,prose about a header,\n"
)


@pytest.fixture(scope="module")
def corpus_scan() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("corpus_scan")
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_file_key_is_the_path_from_the_owner_at_repo_directory(corpus_scan: ModuleType) -> None:
    labels = sys.modules["_labels"]
    for rooted in (
        "acme@tools/skills/deploy/SKILL.md",
        "mirror-sample/acme@tools/skills/deploy/SKILL.md",
        "agent-skills-mirror/acme@tools/skills/deploy/SKILL.md",
        "public-skills/mirror-sample/acme@tools/skills/deploy/SKILL.md",
    ):
        assert labels.file_key(rooted) == "acme@tools/skills/deploy/SKILL.md"
    # no <owner>@<repo> directory: the path relative to the corpus stays the key; a stray @ is not one
    assert labels.file_key("anthropics-skills/skills/api/SKILL.md") == "anthropics-skills/skills/api/SKILL.md"
    assert labels.file_key("skills/@scope/SKILL.md") == "skills/@scope/SKILL.md"


@pytest.mark.parametrize("root", ["mirrors/repos", "public-skills/mirror-sample", "agent-skills-mirror"])
def test_a_scan_under_any_root_matches_the_labels(
    corpus_scan: ModuleType, tmp_path: Path, root: str, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS, encoding="utf-8")
    corpus = tmp_path / root
    skill = corpus / "acme@tools" / "skills" / "deploy"
    (skill / "scripts").mkdir(parents=True)
    rows = [
        {"rule": rule, "severity": "error", "line": line, "evidence": "x", "file": corpus_scan._rel([corpus], skill, f)}
        for rule, f, line in (
            ("sec-secret", "SKILL.md", "12"),
            ("sec-remote-exec", "scripts/setup.sh", "3"),
            ("sec-secret", "SKILL.md", "40"),  # not labelled: listed as such
        )
    ]
    corpus_scan._precision(rows, labels)
    out = capsys.readouterr().out
    assert "2 matched in this scan" in out, out
    assert "sec-secret                  1/1      1.00          1/1      1.00" in out, out
    assert "sec-remote-exec             0/1      0.00          0/1      0.00" in out, out
    # per draw: the secret counts in its whole-mirror draw, the remote-exec false alarm in its own
    draws = out[out.index("draw mirror-holdout") :]
    assert "sec-remote-exec               0/1     0.00" in draws.split("draw mirror-tune")[0], out
    assert "sec-secret                    1/1     1.00" in draws.split("draw mirror-tune")[1], out
    assert "1 blocking finding(s) have no label" in out and "deploy/SKILL.md:40" in out, out
