"""How long the shape classifier takes on real skills: features, signals + cues + model, and the model alone.

    python benchmarks/shape_model_speed.py [CORPUS] [--repeat 3]

Over every skill `discover_skills` finds under CORPUS (default /work/shared/corpus/public-skills; skipped
with a message when absent), timed apart: reading the package and extracting its features (what every
compile does anyway), `classify` on those features (structural signals, text cues, the shipped model's
inference), and the model's `probabilities` alone on the prepared input vectors. Prints the skill count,
total seconds and milliseconds per skill of each, the best of --repeat passes for the last two.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from skillworks.compile import classify, extract_features
from skillworks.compile.classify import model_inputs
from skillworks.compile.features import Features
from skillworks.compile.loading import read_package
from skillworks.compile.shape_model import shipped_model
from skillworks.errors import UserError
from skillworks.skills import discover_skills

DEFAULT = Path("/work/shared/corpus/public-skills")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"{args.corpus} is absent: nothing to time")
        return 0
    roots = discover_skills(args.corpus)
    t = time.perf_counter()
    feats: list[Features] = []
    for root in roots:
        try:
            package, _ = read_package(root)
        except UserError:
            continue
        feats.append(extract_features(package))
    read_sec = time.perf_counter() - t
    model = shipped_model()
    classify_sec = model_sec = float("inf")
    for _ in range(max(1, args.repeat)):
        t = time.perf_counter()
        for f in feats:
            classify(f)
        classify_sec = min(classify_sec, time.perf_counter() - t)
        vectors = [model_inputs(f) for f in feats]
        t = time.perf_counter()
        for v in vectors:
            model.probabilities(v)
        model_sec = min(model_sec, time.perf_counter() - t)
    n = max(1, len(feats))
    print(f"{len(feats)} skills under {args.corpus} ({len(roots) - len(feats)} refused by the loader)")
    for what, sec in (
        ("read + extract features", read_sec),
        ("classify (signals, cues, model)", classify_sec),
        ("model inference alone", model_sec),
    ):
        print(f"  {what:<32} {sec:7.2f} s  {1000 * sec / n:7.3f} ms/skill")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
