"""Shape classification against hand labels: accuracy per split, per-shape precision/recall, confusion matrix.

    python benchmarks/compile_shapes.py [--corpus DIR] [--mirror DIR] [--labels CSV] [--headline fresh5,fresh6]
        [--model provider/model] [--errors]

Labels: benchmarks/data/shape-labels.csv (path, shape, split, reason), 319 public skills labelled by reading
each SKILL.md (definitions in docs/commands/compile.md). A path is under --corpus
(/work/shared/corpus/public-skills), or, when it starts with `mirror-tree/`, under --mirror (the whole
public mirror extract, /work/mirror-tree/mirrors/repos). Splits: `train` (63) and `held-out` (49), 112
corpus skills drawn by hash of their path and split by a second hash; `fresh` (47), the first by
sha256("fresh-2026-12-02:" + path) in neither split; `fresh2` (44), the first by
sha256("fresh2-2026-12-02:" + path) in none of those; `fresh3` (56), the first skills of the whole mirror
that are not in the corpus by sha256("fresh3-2026-12-02:" + path) (benchmarks/draw_shape_sample.py),
labelled and committed before the current model was designed or run on them; `fresh4` (60), a second
held-out set by another labeller, the first by sha256("fresh4-2026-12-02:" + path) with --distinct-templates
(no labelled skill, no near-duplicate template), labelled and committed before the model was run on them.
`fresh5` (80) and `fresh6` (80; drawn with --near-duplicates too), labelled after the current model was
fitted by labellers who never ran the classifier. The hand rules were
tuned on `train`. The shipped model (`shape_model.json`, fitted by benchmarks/train_shape_model.py) is
trained on `train`, `held-out`, `fresh`, `fresh2`, `fresh3` and `fresh4` (all 319 labels; the JSON's
`trained_on` says so and this script prints it), so the figures of those splits are in-sample; its honest
estimates are the grouped cross-validation and leave-one-split-out figures of train_shape_model.py, printed
here from the JSON. The headline is the pool of HEADLINE_SPLITS (`--headline`, default `fresh5,fresh6`): the splits
the shipped model was never trained on; a headline split the model was trained on is refused, and an absent
one is said to be absent. The deterministic
classifier is measured on the content (a spec violation such as a bad name, which `compile` turns into
`insufficient`, is left out of this measure). With --model the hybrid judgement runs too (through the
gateway; the scripted provider only exercises the plumbing) and is reported apart, with its tokens.
Skipped with a message when the corpus is absent.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

from skillworks.compile import classify, extract_features
from skillworks.compile.loading import read_package
from skillworks.compile.shape_model import MODEL_PATH
from skillworks.stats import wilson_interval

SHAPES = ("workflow", "dispatcher", "reference", "insufficient")
DEFAULT_CORPUS = Path("/work/shared/corpus/public-skills")
DEFAULT_MIRROR = Path("/work/mirror-tree/mirrors/repos")
MIRROR_PREFIX = "mirror-tree/"
DEFAULT_LABELS = Path(__file__).resolve().parent / "data" / "shape-labels.csv"
HEADLINE_SPLITS = ("fresh5", "fresh6")  # never trained on: set after each retraining
SPLIT_ORDER = ("fresh5", "fresh4", "fresh3", "fresh2", "fresh", "held-out", "train")
SPLIT_NOTES = {
    "fresh5": "labelled after the shipped model was fitted",
    "fresh4": "second labeller, drawn with --distinct-templates",
    "fresh3": "whole-mirror draw, labelled before any model ran on it",
}


def report(title: str, pairs: list[tuple[str, str]]) -> None:
    n = len(pairs)
    correct = sum(1 for gold, got in pairs if gold == got)
    interval = wilson_interval(correct / n, n) if n else None
    ci = f" (95% Wilson interval {interval.low:.1%}-{interval.high:.1%})" if interval else ""
    print(f"\n{title}: accuracy {correct}/{n} = {correct / max(1, n):.1%}{ci}")
    print(f"{'shape':<13} {'precision':>9} {'recall':>7} {'n':>4}")
    for shape in SHAPES:
        tp = sum(1 for g, p in pairs if g == p == shape)
        predicted = sum(1 for _, p in pairs if p == shape)
        actual = sum(1 for g, _ in pairs if g == shape)
        prec = f"{tp / predicted:.0%}" if predicted else "-"
        rec = f"{tp / actual:.0%}" if actual else "-"
        print(f"{shape:<13} {prec:>9} {rec:>7} {actual:>4}")
    counts = Counter(pairs)
    print("confusion (rows: label, columns: predicted)")
    print(" " * 13 + "".join(f"{s[:10]:>11}" for s in SHAPES))
    for gold in SHAPES:
        print(f"{gold:<13}" + "".join(f"{counts[(gold, p)]:>11}" for p in SHAPES))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="root of `mirror-tree/` paths")
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    parser.add_argument("--model", default=None, help="also run the hybrid LLM judgement (provider/model)")
    parser.add_argument("--errors", action="store_true", help="list the misclassified skills of the headline splits")
    parser.add_argument(
        "--headline",
        default=",".join(HEADLINE_SPLITS),
        help=f"comma-separated never-trained-on splits pooled as the headline (default {','.join(HEADLINE_SPLITS)})",
    )
    args = parser.parse_args()
    headline = tuple(s for s in args.headline.split(",") if s)
    if not args.corpus.is_dir():
        print(f"{args.corpus} is absent: nothing to measure")
        return 0
    rows = list(csv.DictReader(args.labels.open(encoding="utf-8")))
    shipped = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    trained_on = set(shipped["trained_on"])
    if trained_on & set(headline):
        print(f"--headline: {', '.join(sorted(trained_on & set(headline)))} is a training split of {MODEL_PATH.name}")
        return 2
    found = {row["split"] for row in rows}
    splits = tuple(s for s in SPLIT_ORDER if s in found) + tuple(sorted(found - set(SPLIT_ORDER)))
    results: dict[str, list[tuple[str, str]]] = {s: [] for s in splits}
    hybrid: dict[str, list[tuple[str, str]]] = {s: [] for s in splits}
    rules: dict[str, list[tuple[str, str]]] = {s: [] for s in splits}  # the hand-written thresholds alone
    tokens = [0, 0]
    cost = 0.0
    for row in rows:
        path = row["path"]
        root = args.mirror / path.removeprefix(MIRROR_PREFIX) if path.startswith(MIRROR_PREFIX) else args.corpus / path
        if not (root / "SKILL.md").is_file():
            print(f"missing: {row['path']}", file=sys.stderr)
            continue
        package, _ = read_package(root)
        decision = classify(extract_features(package))
        results[row["split"]].append((row["shape"], decision.shape))
        rule = next((e.supports for e in decision.evidence if e.feature == "hand_rules"), decision.shape)
        rules[row["split"]].append((row["shape"], str(rule or decision.shape)))
        if args.errors and row["split"] in headline and decision.shape != row["shape"]:
            print(f"{row['split']} error: {row['path']}: label {row['shape']}, got {decision.shape} ({row['reason']})")
        if args.model:
            import asyncio
            import tempfile

            from skillworks.compile.judge import judge_shape

            log = Path(tempfile.mkdtemp()) / "judge.jsonl"
            judgement = asyncio.run(judge_shape(package, decision, args.model, log, None))
            shape = judgement.shape if judgement.decided and judgement.shape else decision.shape
            hybrid[row["split"]].append((row["shape"], shape))
            tokens[0] += judgement.usage.input_tokens
            tokens[1] += judgement.usage.output_tokens
            cost += judgement.usage.cost_usd or 0.0
    print(f"labelled skills: {sum(len(v) for v in results.values())} ({args.labels.name})")
    held = shipped.get("leave_split_out", {})
    print(
        f"shipped model: trained on {'+'.join(shipped['trained_on'])} ({shipped['examples']} public skills "
        f"+ {shipped['fixture_examples']} fixtures); {shipped['cv_folds']}-fold grouped CV "
        f"(x{shipped.get('cv_repeats', 1)}) {shipped['cv_accuracy']:.1%} (fold sd {shipped.get('cv_fold_sd', 0):.1%})"
        + "".join(f"; trained without {s}: {v['correct']}/{v['n']} on it" for s, v in held.items())
        + " (benchmarks/train_shape_model.py)"
    )
    pooled = [pair for split in headline for pair in results.get(split, [])]
    if pooled:
        report(f"never trained on, pooled (headline): {' + '.join(headline)}", pooled)
    else:
        print(f"\nheadline splits {', '.join(headline)}: absent from {args.labels.name} (no never-trained-on labels)")
    for split in splits:
        status = "in-sample: the model is trained on it" if split in trained_on else "never trained on"
        note = f"{SPLIT_NOTES[split]}; " if split in SPLIT_NOTES else ""
        report(f"{split} split ({note}{status})", results[split])
    for split in splits:
        pairs = rules[split]
        correct = sum(g == p for g, p in pairs)
        share = correct / max(1, len(pairs))
        print(f"hand rules alone (evidence, not a model input), {split}: {correct}/{len(pairs)} = {share:.1%}")
    if args.model:
        for split in splits:
            report(f"hybrid with {args.model}, {split}", hybrid[split])
        print(f"judge tokens: {tokens[0]} in + {tokens[1]} out, cost ${cost:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
