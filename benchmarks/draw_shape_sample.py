"""Draw a labelling batch for the shape benchmark: skills from the whole public mirror nobody has labelled.

    python benchmarks/draw_shape_sample.py [--mirror DIR] [--corpus DIR] [--seed fresh3-2026-12-02] [-n 56]

Candidates are the skill directories (those holding a SKILL.md) under the mirror extract
(`/work/mirror-tree/mirrors/repos`, paths `<owner>@<repo>/<path>`), minus every skill of the shared corpus
(`/work/shared/corpus/public-skills`): neither its path under `mirror-sample/` nor a SKILL.md with the same
bytes as any corpus SKILL.md (the mirror holds many copies of one skill). They are ordered by
sha256(seed + ":" + path) and the first n printed as `mirror-tree/<owner>@<repo>/<path>`, the form
benchmarks/compile_shapes.py resolves against --mirror. Prints nothing but a message when a tree is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

DEFAULT_MIRROR = Path("/work/mirror-tree/mirrors/repos")
DEFAULT_CORPUS = Path("/work/shared/corpus/public-skills")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--seed", default="fresh3-2026-12-02")
    parser.add_argument("-n", type=int, default=56)
    args = parser.parse_args()
    if not args.mirror.is_dir() or not args.corpus.is_dir():
        print(f"{args.mirror} or {args.corpus} is absent: nothing to draw", file=sys.stderr)
        return 0
    sample = args.corpus / "mirror-sample"
    seen_paths = {p.parent.relative_to(sample).as_posix() for p in sample.rglob("SKILL.md")}
    seen_bytes = {_digest(p) for p in args.corpus.rglob("SKILL.md") if p.is_file()}
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
    for rel in candidates[: args.n]:
        print(f"mirror-tree/{rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
