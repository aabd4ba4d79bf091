"""`skillworks compile` over a corpus of real skills: shape distribution, throughput, failures.

    python benchmarks/compile_corpus.py [CORPUS] [--limit N] [--write]

CORPUS defaults to /work/shared/corpus/public-skills (skipped with a message when absent) and falls back
to the project's own skills (examples/ and tests/fixtures). Every SKILL.md below it is read tolerantly and
compiled offline (deterministic), as `skillworks compile` does: a skill that breaks the spec compiles as
`insufficient` (counted as invalid), an exception in the compiler is a crash. With --write the artifacts are
also written to a temporary directory (capsule copy + contract.json). Goals: >= 20 skills/s; among skills that
ship an executable, >= 90% of contracts with at least one runnable operator (a script operator whose script is
in the capsule, under a policy that executes).
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
from skillworks.compile.contract import BoundaryContract
from skillworks.compile.effects import code_effects
from skillworks.compile.executables import is_executable
from skillworks.compile.loading import read_package
from skillworks.errors import UserError
from skillworks.skills import discover_skills
from skillworks.skills.package import SkillPackage

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
    refused = invalid = 0
    crashes: list[str] = []
    operators = 0
    runnable = Counter[str]()  # over skills that ship an executable / that have anything under scripts/
    steps = runnable_steps = nonlinear = 0
    risks: Counter[str] = Counter()
    t0 = time.perf_counter()
    compile_sec = 0.0
    for root in roots:
        try:
            package, problem = read_package(root)
        except UserError:
            refused += 1
            continue
        except Exception as exc:  # the loader crashing is a finding too
            crashes.append(f"{root}: load: {type(exc).__name__}: {exc}")
            continue
        t = time.perf_counter()
        try:
            contract = compile_skill(package, problem=problem)
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
        invalid += any(d.startswith("invalid skill") for d in contract.diagnostics)
        _count_runnable(package, contract, runnable)
        if contract.graph is not None:
            steps += len(contract.graph.steps)
            runnable_steps += sum(1 for st in contract.graph.steps if st.execution is not None)
            nonlinear += sum(
                1 for st in contract.graph.steps for d in st.depends_on if int(d[1:]) != int(st.id[1:]) - 1
            )
        risks.update(r for o in contract.operators for r in o.risks)
    wall = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    compiled = sum(shapes.values())
    print(
        f"skills found: {len(roots)}  compiled: {compiled} (invalid, compiled as insufficient: {invalid})  "
        f"unreadable: {refused}  compiler crashes: {len(crashes)}"
    )
    for name, counter in (("shape", shapes), ("contract type", types), ("validation", levels)):
        dist = ", ".join(f"{k} {v} ({v / max(1, compiled):.0%})" for k, v in counter.most_common())
        print(f"{name}: {dist}")
    print(f"operators: {operators} ({operators / max(1, compiled):.1f} per compiled skill)")
    for group, label in (("exec", "ship an executable"), ("scripts_dir", "have files under scripts/")):
        total, ok = runnable[group], runnable[group + "_ok"]
        print(
            f"skills that {label}: {total}; contracts with >= 1 runnable operator: {ok} "
            f"({ok / max(1, total):.1%}; goal >= 90% for executables)"
        )
    print(
        f"workflow steps: {steps}, runnable {runnable_steps} ({runnable_steps / max(1, steps):.1%}); "
        f"non-linear dependency edges: {nonlinear}"
    )
    print("operator risk flags: " + ", ".join(f"{k} {v}" for k, v in risks.most_common()))
    print(
        f"throughput: {compiled / max(compile_sec, 1e-9):.1f} skills/s compiling "
        f"({compiled / max(wall, 1e-9):.1f} skills/s including load{', write' if args.write else ''}; "
        f"goal >= 20)"
    )
    clean = "value = compute(x)  # nothing risky here\n" * 50_000  # ~2 MB: a whole syntax tree to walk
    t = time.perf_counter()
    code_effects(clean, "python3")
    scan = time.perf_counter() - t
    mb = len(clean) / 1e6
    print(f"risk scan of a whole script: {mb:.1f} MB in {scan:.2f} s ({mb / scan:.1f} MB/s)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    for crash in crashes[:10]:
        print("CRASH", crash)


def _count_runnable(package: SkillPackage, contract: BoundaryContract, counts: Counter[str]) -> None:
    executes = contract.policy.action == "execute"
    ok = executes and any(
        o.execution.kind == "script" and (package.root / (o.execution.script or "")).is_file()
        for o in contract.operators
    )
    if any(is_executable(package.root, a.path) for a in package.assets):
        counts["exec"] += 1
        counts["exec_ok"] += ok
    if any(a.path.startswith("scripts/") for a in package.assets):
        counts["scripts_dir"] += 1
        counts["scripts_dir_ok"] += ok


if __name__ == "__main__":
    main()
