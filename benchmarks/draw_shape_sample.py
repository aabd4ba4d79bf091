"""Draw a labelling batch for the shape benchmark: skills from the whole public mirror nobody has labelled.

    python benchmarks/draw_shape_sample.py [--mirror DIR] [--corpus DIR] [--labels CSV]
        [--seed fresh3-2026-12-02] [-n 56] [--distinct-templates [--near-duplicates]]

Candidates are the skill directories (those holding a SKILL.md) under the mirror extract
(`/work/mirror-tree/mirrors/repos`, paths `<owner>@<repo>/<path>`), minus every skill of the shared corpus
(`/work/shared/corpus/public-skills`): neither its path under `mirror-sample/` nor a SKILL.md with the same
bytes as any corpus SKILL.md (the mirror holds many copies of one skill). They are ordered by
sha256(seed + ":" + path) and the first n printed as `mirror-tree/<owner>@<repo>/<path>`, the form
benchmarks/compile_shapes.py resolves against --mirror. Prints nothing but a message when a tree is absent.

`--distinct-templates` (used from `fresh4` on) also leaves out every skill already in --labels (its path, or
a SKILL.md with the same bytes) and every near-duplicate: a SKILL.md whose *template key* equals that of a
labelled skill or of one drawn earlier in the same order. The template key is the body after the YAML
frontmatter, lower-cased, with every occurrence of the skill directory's name and of each of its
`-`/`_`-separated parts of two or more characters removed, and runs of anything but letters and digits
collapsed to one space — so the same page under another product name (e.g. the Composio
"discover / check / execute" automation template) is one template. A skill whose repository and directory
name equal those of a labelled or earlier-drawn one (a translation, or a plugin bundle's copy, of the same
skill) is a near-duplicate too.

`--near-duplicates` (with --distinct-templates; used from `fresh6` on, so earlier draws stay reproducible)
also leaves out a lightly edited copy: a skill whose template key text shares too many word 5-grams with
that of any labelled skill or any skill drawn earlier in the order — Jaccard similarity |A∩B| / |A∪B| of the
two sets of 5-word shingles at least 0.5 (a text of five words or fewer is one shingle). Each one left out
is printed to stderr with its score and the skill it copies. The threshold comes from looking at pairs:
among the 399 skills labelled up to fresh5, the copies that got past the exact key (an appended "When to
Use" footer, `resources/` renamed `references/`, a translation keeping the code) score 0.73-0.95, and the
highest pair of distinct skills 0.44 (two Apify actor pages; the InnoClaw tool pages share a scaffold at
0.30-0.44). In a scan of 1,500 mirror skills, pairs at 0.5 or more were copies, translations or one
page with another subject filled in (InnoClaw `drugsda-*` tool pages, `senior-*-engineer` personas), and
pairs under 0.5 were family resemblances with different bodies.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import sys
from pathlib import Path

DEFAULT_MIRROR = Path("/work/mirror-tree/mirrors/repos")
DEFAULT_CORPUS = Path("/work/shared/corpus/public-skills")
DEFAULT_LABELS = Path(__file__).parent / "data" / "shape-labels.csv"
MIRROR_PREFIX = "mirror-tree/"
_FRONTMATTER = re.compile(r"\A---\s*\n.*?\n---\s*(\n|\Z)", re.DOTALL)
_NON_WORD = re.compile(r"[^a-z0-9]+")
SHINGLE_WORDS = 5
NEAR_DUPLICATE_JACCARD = 0.5


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _template_text(skill_md: Path) -> str:
    """The body after the frontmatter, lower-cased, the skill's name removed, runs of non-words one space."""
    text = skill_md.read_text(encoding="utf-8", errors="replace")
    body = _FRONTMATTER.sub("", text, count=1).lower()
    name = skill_md.parent.name.lower()
    parts = sorted({name, *(p for p in re.split(r"[-_]", name) if len(p) >= 2)}, key=len, reverse=True)
    for part in parts:
        body = body.replace(part, " ")
    return _NON_WORD.sub(" ", body).strip()


def template_key(skill_md: Path) -> str:
    """The template key (module doc): a digest of the template text."""
    return hashlib.sha256(_template_text(skill_md).encode()).hexdigest()


def _shingles(text: str, size: int = SHINGLE_WORDS) -> frozenset[str]:
    """Every run of `size` consecutive words of `text`; a text shorter than that is one shingle of all of it."""
    words = text.split()
    if len(words) <= size:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def _nearest(shingles: frozenset[str], seen: list[frozenset[str]]) -> tuple[float, int]:
    """The highest Jaccard similarity of `shingles` to any set in `seen`, and that set's index (-1 if none)."""
    best, where = 0.0, -1
    for index, other in enumerate(seen):
        # |A∩B| <= min(|A|,|B|), so J <= min/max: skip sets too different in size to beat the best so far
        small, large = sorted((len(shingles), len(other)))
        if large == 0 or small / large <= best:
            continue
        score = _jaccard(shingles, other)
        if score > best:
            best, where = score, index
    return best, where


def repo_and_name(skill_dir: Path, mirror: Path, corpus: Path) -> tuple[str, str]:
    """(owner@repo, directory name) of a skill under the mirror or the corpus's `mirror-sample/`."""
    base = mirror if skill_dir.is_relative_to(mirror) else corpus / "mirror-sample"
    parts = skill_dir.relative_to(base).parts if skill_dir.is_relative_to(base) else skill_dir.parts
    return parts[0], skill_dir.name.lower()


def _display(skill_dir: Path, mirror: Path, corpus: Path) -> str:
    """A skill directory as the labels CSV names it."""
    if skill_dir.is_relative_to(mirror):
        return MIRROR_PREFIX + skill_dir.relative_to(mirror).as_posix()
    return skill_dir.relative_to(corpus).as_posix() if skill_dir.is_relative_to(corpus) else skill_dir.as_posix()


def _labelled(labels: Path, mirror: Path, corpus: Path) -> list[Path]:
    """The SKILL.md of every labelled skill that is present."""
    found = []
    with labels.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            path = row["path"]
            root = mirror / path.removeprefix(MIRROR_PREFIX) if path.startswith(MIRROR_PREFIX) else corpus / path
            if (root / "SKILL.md").is_file():
                found.append(root / "SKILL.md")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    parser.add_argument("--seed", default="fresh3-2026-12-02")
    parser.add_argument("-n", type=int, default=56)
    parser.add_argument("--distinct-templates", action="store_true", help="also skip labelled skills and templates")
    parser.add_argument(
        "--near-duplicates",
        action="store_true",
        help=f"with --distinct-templates: also skip bodies with word {SHINGLE_WORDS}-gram Jaccard "
        f">= {NEAR_DUPLICATE_JACCARD} to a labelled or earlier-drawn skill",
    )
    args = parser.parse_args()
    if args.near_duplicates and not args.distinct_templates:
        print("--near-duplicates needs --distinct-templates", file=sys.stderr)
        return 2
    if not args.mirror.is_dir() or not args.corpus.is_dir():
        print(f"{args.mirror} or {args.corpus} is absent: nothing to draw", file=sys.stderr)
        return 0
    if args.distinct_templates and not args.labels.is_file():
        print(f"{args.labels}: no such labels file", file=sys.stderr)
        return 2
    sample = args.corpus / "mirror-sample"
    seen_paths = {p.parent.relative_to(sample).as_posix() for p in sample.rglob("SKILL.md")}
    seen_bytes = {_digest(p) for p in args.corpus.rglob("SKILL.md") if p.is_file()}
    seen_templates: set[str] = set()
    seen_names: set[tuple[str, str]] = set()
    seen_shingles: list[frozenset[str]] = []
    seen_where: list[str] = []
    if args.distinct_templates:
        for skill_md in _labelled(args.labels, args.mirror, args.corpus):
            if args.near_duplicates:
                seen_shingles.append(_shingles(_template_text(skill_md)))
                seen_where.append(f"labelled {_display(skill_md.parent, args.mirror, args.corpus)}")
            seen_bytes.add(_digest(skill_md))
            seen_templates.add(template_key(skill_md))
            seen_names.add(repo_and_name(skill_md.parent, args.mirror, args.corpus))
            if skill_md.is_relative_to(args.mirror):
                seen_paths.add(skill_md.parent.relative_to(args.mirror).as_posix())
    candidates = []
    for skill_md in args.mirror.rglob("SKILL.md"):
        if not skill_md.is_file():
            continue
        rel = skill_md.parent.relative_to(args.mirror).as_posix()
        if rel in seen_paths or _digest(skill_md) in seen_bytes:
            continue
        candidates.append(rel)
    candidates.sort(key=lambda rel: hashlib.sha256(f"{args.seed}:{rel}".encode()).hexdigest())
    print(f"{len(candidates)} candidates", file=sys.stderr)
    drawn = 0
    skipped = 0
    fuzzy = 0
    for rel in candidates:
        if drawn == args.n:
            break
        if args.distinct_templates:
            text = _template_text(args.mirror / rel / "SKILL.md")
            key = hashlib.sha256(text.encode()).hexdigest()
            repo_name = repo_and_name(args.mirror / rel, args.mirror, args.corpus)
            if key in seen_templates or repo_name in seen_names:
                skipped += 1
                continue
            if args.near_duplicates:
                shingles = _shingles(text)
                score, where = _nearest(shingles, seen_shingles)
                if score >= NEAR_DUPLICATE_JACCARD:
                    skipped += 1
                    fuzzy += 1
                    print(f"near-duplicate (Jaccard {score:.3f}) of {seen_where[where]}: {rel}", file=sys.stderr)
                    continue
                seen_shingles.append(shingles)
                seen_where.append(f"drawn {MIRROR_PREFIX}{rel}")
            seen_templates.add(key)
            seen_names.add(repo_name)
        print(f"{MIRROR_PREFIX}{rel}")
        drawn += 1
    if args.distinct_templates:
        print(f"{skipped} near-duplicates skipped before the {drawn} drawn", file=sys.stderr)
    if args.near_duplicates:
        print(f"{fuzzy} of them by Jaccard >= {NEAR_DUPLICATE_JACCARD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
