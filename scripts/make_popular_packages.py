"""Regenerate the popular-package lists the typosquat rule compares dependency names against.

Sources (nothing typed by hand):
- PyPI: the download ranking of the 15,000 most-downloaded PyPI projects, as carried in the
  `rank_among_15000_most_downloaded` column of the PyPI package list (a TSV: name, version, month, rank,
  summary; on this workplace /work/.library/env/packages/pypi.tsv).
- npm: the `top` list of the npm package `npm-high-impact` (wooorm; the packages with the most downloads or
  dependents), read from its tarball: `npm pack npm-high-impact` then pass the .tgz.

    python scripts/make_popular_packages.py --pypi-tsv pypi.tsv --npm-tgz npm-high-impact-1.13.0.tgz

Each output file starts with `#` lines naming its source and the date it was generated; then one normalised
name a line, most popular first (`skillworks.check.typosquat` reads them).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import re
import sys
import tarfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "skillworks" / "check" / "data"


def pypi_names(tsv: Path) -> list[str]:
    csv.field_size_limit(sys.maxsize)
    ranked: list[tuple[int, str]] = []
    with tsv.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            rank = (row.get("rank_among_15000_most_downloaded") or "").strip()
            if rank.isdigit():
                ranked.append((int(rank), re.sub(r"[-_.]+", "-", row["name"].lower())))
    return [name for _, name in sorted(ranked)]


def npm_names(tgz: Path) -> list[str]:
    with tarfile.open(tgz) as tar:
        member = tar.extractfile("package/lib/top.js")
        if member is None:
            raise SystemExit(f"{tgz}: no package/lib/top.js")
        text = member.read().decode("utf-8")
    return re.findall(r"^\s*'([^']+)',?$", text, re.M)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pypi-tsv", type=Path, required=True)
    ap.add_argument("--npm-tgz", type=Path, required=True)
    args = ap.parse_args()
    pypi, npm = pypi_names(args.pypi_tsv), npm_names(args.npm_tgz)
    if len(pypi) < 1000 or len(npm) < 1000:
        print(f"error: too few names read (pypi {len(pypi)}, npm {len(npm)})", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    sources = {
        "popular-pypi.txt": (
            pypi,
            f"PyPI project list {args.pypi_tsv.name}, column rank_among_15000_most_downloaded (monthly downloads)",
        ),
        "popular-npm.txt": (npm, f"npm package {args.npm_tgz.name.removesuffix('.tgz')}, package/lib/top.js"),
    }
    for name, (names, source) in sources.items():
        header = (
            f"# source: {source}\n# generated: {today} by scripts/make_popular_packages.py\n"
            f"# {len(names)} names, most popular first\n"
        )
        (OUT / name).write_text(header + "\n".join(names) + "\n", encoding="utf-8")
    print(f"popular-pypi.txt {len(pypi)} names, popular-npm.txt {len(npm)} names, most popular first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
