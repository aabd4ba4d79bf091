"""`skillworks compile` over a corpus of real skills: shape distribution, throughput, failures.

    python benchmarks/compile_corpus.py [CORPUS] [--limit N] [--write]

CORPUS defaults to /work/shared/corpus/public-skills (skipped with a message when absent) and falls back
to the project's own skills (examples/ and tests/fixtures). Every SKILL.md below it is loaded and compiled
offline (deterministic); a skill the loader refuses is counted apart (it is not a compiler failure), an
exception in the compiler is a crash. With --write the artifacts are also written to a temporary
directory (capsule copy + contract.json), which is what `skillworks compile` does. Goal: >= 20 skills/s.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from skillworks.compile import compile_skill
from skillworks.compile.compiler import write_artifact
from skillworks.errors import UserError
from skillworks.skills import discover_skills, load_skill

DEFAULT = Path("/work/shared/corpus/public-skills")
REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=0, help="compile at most N skills")
    parser.add_argument("--write", action="store_true", help="also write the artifacts (contract + capsule)")
    args = parser.parse_args()
    roots: list[Path]
    if args.corpus is not None:
        roots = discover_skills(args.corpus)
    elif DEFAULT.is_dir():
        roots = discover_skills(DEFAULT)
    else:
        print(f"{DEFAULT} is absent: compiling the project's own skills instead")
        roots = discover_skills(REPO / "examples") + discover_skills(REPO / "tests/fixtures")
    if args.limit:
        roots = roots[: args.limit]
    out = Path(tempfile.mkdtemp(prefix="skillworks-compile-bench-"))
    shapes: Counter[str] = Counter()
    types: Counter[str] = Counter()
    levels: Counter[str] = Counter()
    refused = 0
    crashes: list[str] = []
    operators = 0
    t0 = time.perf_counter()
    compile_sec = 0.0
    for root in roots:
        try:
            package = load_skill(root)
        except UserError:
            refused += 1
            continue
        except Exception as exc:  # the loader crashing is a finding too
            crashes.append(f"{root}: load: {type(exc).__name__}: {exc}")
            continue
        t = time.perf_counter()
        try:
            contract = compile_skill(package)
            if args.write:
                write_artifact(contract, package, out)
        except Exception as exc:
            crashes.append(f"{root}: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")
            continue
        compile_sec += time.perf_counter() - t
        shapes[contract.shape] += 1
        types[contract.type] += 1
        levels[contract.validation_level] += 1
        operators += len(contract.operators)
    wall = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    compiled = sum(shapes.values())
    print(
        f"skills found: {len(roots)}  compiled: {compiled}  refused by the loader: {refused}  "
        f"compiler crashes: {len(crashes)}"
    )
    for name, counter in (("shape", shapes), ("contract type", types), ("validation", levels)):
        dist = ", ".join(f"{k} {v} ({v / max(1, compiled):.0%})" for k, v in counter.most_common())
        print(f"{name}: {dist}")
    print(f"operators: {operators} ({operators / max(1, compiled):.1f} per compiled skill)")
    print(
        f"throughput: {compiled / max(compile_sec, 1e-9):.1f} skills/s compiling "
        f"({compiled / max(wall, 1e-9):.1f} skills/s including load{', write' if args.write else ''}; "
        f"goal >= 20)"
    )
    from skillworks.compile.operators import risks_of

    clean = "value = compute(x)  # nothing risky here\n" * 50_000  # ~2 MB with no match: the worst case
    t = time.perf_counter()
    risks_of(clean)
    scan = time.perf_counter() - t
    mb = len(clean) / 1e6
    print(f"risk scan of a whole script: {mb:.1f} MB in {scan:.2f} s ({mb / scan:.1f} MB/s)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    for crash in crashes[:10]:
        print("CRASH", crash)


if __name__ == "__main__":
    main()
