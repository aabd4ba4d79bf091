"""Draw a labelling batch for the shape benchmark: skills from the whole public mirror nobody has labelled.

    python benchmarks/draw_shape_sample.py [--mirror DIR] [--corpus DIR] [--labels CSV]
        [--seed fresh3-2026-12-02] [-n 56] [--distinct-templates]

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


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def template_key(skill_md: Path) -> str:
    text = skill_md.read_text(encoding="utf-8", errors="replace")
    body = _FRONTMATTER.sub("", text, count=1).lower()
    name = skill_md.parent.name.lower()
    parts = sorted({name, *(p for p in re.split(r"[-_]", name) if len(p) >= 2)}, key=len, reverse=True)
    for part in parts:
        body = body.replace(part, " ")
    key = _NON_WORD.sub(" ", body).strip()
    return hashlib.sha256(key.encode()).hexdigest()


def repo_and_name(skill_dir: Path, mirror: Path, corpus: Path) -> tuple[str, str]:
    """(owner@repo, directory name) of a skill under the mirror or the corpus's `mirror-sample/`."""
    base = mirror if skill_dir.is_relative_to(mirror) else corpus / "mirror-sample"
    parts = skill_dir.relative_to(base).parts if skill_dir.is_relative_to(base) else skill_dir.parts
    return parts[0], skill_dir.name.lower()


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
    args = parser.parse_args()
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
    if args.distinct_templates:
        for skill_md in _labelled(args.labels, args.mirror, args.corpus):
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
    for rel in candidates:
        if drawn == args.n:
            break
        if args.distinct_templates:
            key = template_key(args.mirror / rel / "SKILL.md")
            repo_name = repo_and_name(args.mirror / rel, args.mirror, args.corpus)
            if key in seen_templates or repo_name in seen_names:
                skipped += 1
                continue
            seen_templates.add(key)
            seen_names.add(repo_name)
        print(f"mirror-tree/{rel}")
        drawn += 1
    if args.distinct_templates:
        print(f"{skipped} near-duplicates skipped before the {drawn} drawn", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
