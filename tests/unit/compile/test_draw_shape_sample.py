"""`benchmarks/draw_shape_sample.py --near-duplicates` leaves out a lightly edited copy of a labelled or
earlier-drawn skill (word 5-gram Jaccard >= the threshold) and keeps a different skill on the same scaffold.
The skill texts are written for this test."""

from __future__ import annotations

import csv
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

ORIGINAL = """## Overview
Query the public trial registry for studies by condition, intervention, sponsor or location, and fetch the
full record of one study by its identifier. Results come back as JSON with the status, phase, enrolment
and the contacts of each site, so a summary can be written for the user without opening the website.

## Search studies
Call the search endpoint with a condition and an optional status filter; page through the results with the
page token it returns until there is none, and keep only the fields the user asked about.

## Fetch one study
Call the study endpoint with the identifier; the record holds the eligibility criteria, the outcome
measures and the arms, each with its interventions and the number of participants enrolled in it.
"""

FOOTER = """
## When to Use
This skill is applicable to execute the workflow or actions described in the overview.
"""

# the same headings and one paragraph in common (as pages of one family share boilerplate), another skill
SCAFFOLD = """## Overview
Convert a folder of scanned invoices into one spreadsheet with the supplier, the date, the total and the
tax of each invoice, so the accounts can be checked without typing the figures in by hand.

## Search studies
Read each page with the OCR tool, find the lines that hold a total or a tax amount, and keep the largest
total found on the last page of every invoice as its amount due.

## Fetch one study
Write one row per invoice to the spreadsheet and a second sheet listing the files that could not be read,
with the reason for each, so a person can enter those few by hand.

## Notes
Call the search endpoint with a condition and an optional status filter; page through the results with the
page token it returns until there is none, and keep only the fields the user asked about.
"""


@pytest.fixture(scope="module")
def draw() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("draw_shape_sample")
    finally:
        sys.path.remove(str(BENCHMARKS))


def _skill(root: Path, rel: str, name: str, body: str) -> Path:
    skill = root / rel
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n{body}", encoding="utf-8")
    return skill / "SKILL.md"


def test_a_copy_with_a_footer_is_near_and_a_skill_on_the_same_scaffold_is_not(draw: ModuleType, tmp_path: Path) -> None:
    original = draw._shingles(draw._template_text(_skill(tmp_path, "a@x/trials-db", "trials-db", ORIGINAL)))
    copy = draw._shingles(draw._template_text(_skill(tmp_path, "b@y/trials-db", "trials-db", ORIGINAL + FOOTER)))
    other = draw._shingles(draw._template_text(_skill(tmp_path, "c@z/invoices", "invoices", SCAFFOLD)))
    assert draw._jaccard(original, copy) >= draw.NEAR_DUPLICATE_JACCARD
    assert 0.1 < draw._jaccard(original, other) < draw.NEAR_DUPLICATE_JACCARD
    score, where = draw._nearest(copy, [other, original])
    assert where == 1 and score == draw._jaccard(original, copy)
    assert draw._nearest(copy, []) == (0.0, -1)


def test_shingles_of_short_and_empty_texts(draw: ModuleType) -> None:
    assert draw._shingles("one two three") == frozenset({"one two three"})
    assert draw._shingles("a b c d e f") == frozenset({"a b c d e", "b c d e f"})
    assert draw._shingles("") == frozenset()
    # an empty body is near nothing, not everything
    assert draw._jaccard(frozenset(), frozenset()) == 0.0


def test_the_draw_leaves_out_a_near_copy_only_with_the_flag(
    draw: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror = tmp_path / "mirror"
    corpus = tmp_path / "corpus"
    (corpus / "mirror-sample").mkdir(parents=True)
    _skill(mirror, "a@x/skills/trials-db", "trials-db", ORIGINAL)
    _skill(mirror, "b@y/plugins/clinical-trials", "clinical-trials", ORIGINAL + FOOTER)  # another name and repo
    _skill(mirror, "c@z/invoices", "invoices", SCAFFOLD)
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["path", "shape", "split", "reason"])
        writer.writerow(["mirror-tree/a@x/skills/trials-db", "dispatcher", "fresh5", "r"])
    base = ["draw_shape_sample.py", "--mirror", str(mirror), "--corpus", str(corpus), "--labels", str(labels)]

    def drawn(*flags: str) -> tuple[list[str], str]:
        monkeypatch.setattr(sys, "argv", [*base, "-n", "5", *flags])
        assert draw.main() == 0
        out, err = capsys.readouterr()
        return sorted(out.split()), err

    both = ["mirror-tree/b@y/plugins/clinical-trials", "mirror-tree/c@z/invoices"]
    assert drawn("--distinct-templates")[0] == both
    paths, err = drawn("--distinct-templates", "--near-duplicates")
    assert paths == ["mirror-tree/c@z/invoices"]
    assert "of labelled mirror-tree/a@x/skills/trials-db: b@y/plugins/clinical-trials" in err, err
    monkeypatch.setattr(sys, "argv", [*base, "--near-duplicates"])
    assert draw.main() == 2
    assert "--near-duplicates needs --distinct-templates" in capsys.readouterr().err
