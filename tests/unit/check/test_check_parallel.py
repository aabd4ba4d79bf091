"""`check` over many skills: worker processes give the report of a single process, in the same order, and
the text report labels same-name skills so that they stay apart and short at 80 columns."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from skillworks.check import check_skills, to_json
from skillworks.check.model import SkillReport
from skillworks.check.text_output import skill_labels, to_text


def _skill(root: Path, name: str, body: str) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Merges {name} tables. Use when the user asks to merge tables.\n---\n"
        f"# {name}\n\n{body}\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """70 skills (three batches of work): some with findings of several kinds, three sharing one name."""
    root = tmp_path_factory.mktemp("many")
    for i in range(67):
        body = ["Run `python scripts/x.py`.", "Save it to references/missing.md.", "rm -rf ~/", "Plain text."][i % 4]
        _skill(root / f"group{i % 5}" / f"skill-{i:02d}", f"skill-{i:02d}", body)
    for owner in ("acme@tools", "zeta@kit", "solo"):
        _skill(root / "repos" / owner / "skills" / "pdf", "pdf", "Verify the output. If it fails, retry.")
    return root


def test_worker_processes_give_the_single_process_report(tree: Path) -> None:
    one = check_skills([tree], lint=False, workers=1)
    two = check_skills([tree], lint=False, workers=2)
    assert (one.workers, two.workers) == (1, 2)
    assert to_json(two) == to_json(one)
    assert len(one.skills) == 70 and sum(len(s.findings) for s in one.skills) > 70


def test_workers_start_safely_when_other_threads_run(tree: Path) -> None:
    """With a thread alive the workers are not forked from this process (a fork could copy a held lock)."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        report = check_skills([tree], lint=False, workers=2)
    finally:
        stop.set()
        other.join()
    assert report.workers == 2 and to_json(report) == to_json(check_skills([tree], lint=False, workers=1))


def test_same_name_skills_get_the_shortest_path_end_that_tells_them_apart() -> None:
    def report(path: str, name: str | None) -> SkillReport:
        return SkillReport(root=Path(path), name=name)

    skills = [
        report("/very/long/corpus/mirror/acme@tools/skills/pdf", "pdf"),
        report("/very/long/corpus/mirror/zeta@kit/skills/pdf", "pdf"),
        report("/very/long/corpus/reference/pdf", "pdf"),
        report("/very/long/corpus/mirror/acme@tools/skills/docs-helper", "docs"),
        report("/very/long/corpus/mirror/zeta@kit/docs", "docs"),
        report("/very/long/corpus/mirror/zeta@kit/unique-dir", None),
        report("/very/long/corpus/mirror/x/csv", "csv-tool"),
    ]
    assert skill_labels(skills) == [
        "acme@tools/skills/pdf",
        "zeta@kit/skills/pdf",
        "reference/pdf",
        "docs (docs-helper)",
        "docs",
        "unique-dir",
        "csv-tool",
    ]


def test_text_report_of_same_name_skills_fits_80_columns(tree: Path) -> None:
    report = check_skills([tree / "repos"], lint=False)
    text = to_text(report, verbose=True, width=80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    summary = [line for line in lines[2:5]]
    assert [line.split()[-1] for line in summary] == ["acme@tools/skills/pdf", "solo/skills/pdf", "zeta@kit/skills/pdf"]
    assert f"  path: {tree / 'repos' / 'solo' / 'skills' / 'pdf'}"[:80] in text.replace("/\n  ", "/")
