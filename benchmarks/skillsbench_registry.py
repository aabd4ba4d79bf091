"""Reproduce the SkillsBench paper's headline from its public results registry (prints figures).

    .venv/bin/python benchmarks/skillsbench_registry.py [REGISTRY]

REGISTRY defaults to /work/shared/skillsbench/results-registry.json (87 tasks x 18 configurations x 2
conditions; see the README there). Prints each configuration's no-skills and curated pass rates, Δ with its
paired bootstrap interval and g, then the means over configurations beside the paper's: no-skills 33.9%,
curated 50.5%, Δ +16.6 pp, mean g 25.5% (the mean of per-configuration g). The paper's figures are given to
one decimal; the check passes when each computed mean is within 0.06 points of it (25.55 reads as 25.5
there). Exit 0 when all four agree, 1 when one does not; with no registry it says so and exits 0.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from skillworks.importers.results_table import read_results_table, render_table_summary, table_statistics

DEFAULT = Path("/work/shared/skillsbench/results-registry.json")
PAPER = {"no-skills pass rate": 33.9, "curated pass rate": 50.5, "Δ (pp)": 16.6, "mean g": 25.5}
TOLERANCE = 0.06


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not path.is_file():
        print(f"no registry at {path}: nothing to reproduce")
        return 0
    t0 = time.perf_counter()
    rows = read_results_table(path)
    summary = table_statistics(rows, source=str(path), baseline="none", treatment="curated", resamples=2_000)
    elapsed = time.perf_counter() - t0
    print(f"{path}: {summary.rows} rows, {summary.tasks} tasks x {len(summary.configurations)} configurations")
    print(
        f"missing cells {summary.missing_cells}, unpaired cells {summary.unpaired_cells}; read + stats {elapsed:.2f} s"
    )
    print()
    print(render_table_summary(summary))
    print()
    ours = {
        "no-skills pass rate": (summary.mean_rates["none"] or 0.0) * 100,
        "curated pass rate": (summary.mean_rates["curated"] or 0.0) * 100,
        "Δ (pp)": summary.mean_delta_pp or 0.0,
        "mean g": (summary.mean_g or 0.0) * 100,
    }
    ok = True
    print(f"{'headline (mean of configurations)':36s} {'skillworks':>10s} {'paper':>6s}")
    for name, paper in PAPER.items():
        value = ours[name]
        agrees = abs(value - paper) <= TOLERANCE
        ok &= agrees
        print(f"{name:36s} {value:10.2f} {paper:6.1f}  {'ok' if agrees else 'DIFFERS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
