"""The JS/TS source-to-sink analysis (`check/js_flow.py`) over every .js/.mjs/.cjs/.ts file under the given
directories: how many files, how many findings per rule (each printed with its line, for hand-checking) and
how fast.

    PYTHONPATH=src python benchmarks/check_js_flows.py /work/shared/corpus [MORE_DIRS...]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from skillworks.check.js_flow import JS_SUFFIXES, analyse_js


def main(roots: list[str]) -> int:
    files = sorted(p for r in roots for p in Path(r).rglob("*") if p.is_file() and p.suffix in JS_SUFFIXES)
    rules: Counter[str] = Counter()
    size = 0
    spent = 0.0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        size += len(text.encode("utf-8", errors="replace"))
        start = time.perf_counter()
        hits = analyse_js(text, path.suffix)
        spent += time.perf_counter() - start
        lines = text.splitlines()
        for h in hits:
            rules[h.rule_id] += 1
            evidence = lines[h.line - 1].strip()[:120] if 0 < h.line <= len(lines) else ""
            print(f"{path}:{h.line}: {h.rule_id} ({'blocks' if h.high else 'warning'}) {h.message} | {evidence}")
    print(f"files {len(files)}  size {size / 1e3:.0f} kB  findings {sum(rules.values())} {dict(rules)}")
    print(f"analysis {spent:.2f} s  ({size / 1e3 / max(spent, 1e-9):.0f} kB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["/work/shared/corpus"]))
