"""Real loadability of corpus skills per installed harness (`check --harness`): status counts, the skills a
harness dropped though static check passes them, and seconds per probe.

    python benchmarks/harness_check_corpus.py /work/shared/corpus/public-skills [--harness claude-code,codex]
        [--limit 20] [--also-grep disable-model-invocation]

Skills are taken in sorted order (the first --limit), plus every skill whose SKILL.md contains --also-grep.
Results are cached (XDG_CACHE_HOME/skillworks/harness-check): run with a fresh XDG_CACHE_HOME to time probes.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from pathlib import Path

from skillworks.harness_check import check_harnesses, harness_names


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--harness", default="claude-code,codex")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--also-grep", default="disable-model-invocation: true")
    args = parser.parse_args()
    mds = sorted(args.corpus.rglob("SKILL.md"))
    chosen = mds[: args.limit] + [m for m in mds[args.limit :] if args.also_grep in m.read_text(errors="replace")]
    names = harness_names(args.harness)
    counts: Counter[tuple[str, str]] = Counter()
    dropped: list[str] = []
    probes = 0
    start = time.perf_counter()
    for md in chosen:
        for v in asyncio.run(check_harnesses(md.parent, names, use_cache=False)):
            counts[v.harness, v.status] += 1
            probes += v.status not in ("not-staged", "not-installed")
            if v.should_have_caught:
                dropped.append(f"{md.parent.relative_to(args.corpus)} [{v.harness}]: {v.should_have_caught}")
    wall = time.perf_counter() - start
    print(f"skills: {len(chosen)}; harnesses: {', '.join(names)}; probes run: {probes}")
    for (harness, status), n in sorted(counts.items()):
        print(f"  {harness:12} {status:18} {n}")
    print(f"dropped by a harness although static check passes them: {len(dropped)}")
    for line in dropped:
        print(f"  {line}")
    print(f"wall {wall:.1f} s; {wall / max(probes, 1):.2f} s per probe")


if __name__ == "__main__":
    main()
