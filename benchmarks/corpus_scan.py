"""`skillworks check` over a corpus of real skills: throughput, peak memory, findings per rule, a sample of
findings per rule to label, and precision per security rule from the labelled sample in the repository.

    python benchmarks/corpus_scan.py CORPUS_DIR... [--no-lint] [--workers N] [--sample-out FILE] [--per-rule 10]
                                        [--labels benchmarks/data/security-labels.csv] [--real-tasks DIR]

CORPUS_DIR is for example ../shared/corpus/public-skills (reference skills and a random mirror sample).
The scan runs once, as `skillworks check` does (with --workers scan processes; default: one per core), and
prints skills/s, the CPU it took, the load average of the machine and the peak memory of the whole process
tree (scanner, worker processes and linters); then the report is rendered as text and as JSON to compare
their cost. --sample-out writes up to --per-rule random findings per rule (with evidence, context and the
reason for the severity) as CSV for a person to label. The labels file holds one row per labelled security
finding (rule, file, line, verdict TP/FP, reason, draw); a finding of this scan matches a label on rule, line
and file key: the path from its `<owner>@<repo>` directory on, or the path relative to the corpus directory
when it has none (see _labels.py), so the shared sample and an extracted whole mirror match the same labels.
Precision per rule is computed over the findings of this scan that have a label, for every finding and for
the blocking (error) ones, and unlabelled blocking findings are listed so a precision figure never hides them.

--real-tasks DIR runs the `tasks check` leakage audit over each task directory in DIR and prints its findings
per severity (the goal: no error on the real SkillsBench tasks).

Targets (issue #11): >= 150 skills/s with lint on 2 cores, <= 300 MB peak, text output as fast as JSON,
precision >= 0.8 for every security rule that can block.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import resource
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from _labels import Key, finding_key, load_labels, verdict
from _memory import TreeMemory

from skillworks._aio import run_async
from skillworks.check import check_skills_async, iter_json, iter_sarif
from skillworks.check.model import Dimension, Severity
from skillworks.check.text_output import text_lines

LABELS = Path(__file__).parent / "data" / "security-labels.csv"
STRUCTURAL_LABELS = Path(__file__).parent / "data" / "structural-labels.csv"


def _rel(corpora: list[Path], root: Path, file: str | None) -> str:
    """The finding's path relative to the corpus directory that holds it (labels are keyed on it)."""
    path = root / (file or "SKILL.md")
    for corpus in corpora:
        try:
            return path.relative_to(corpus).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _precision(report_rows: list[dict[str, str]], labels: Path) -> None:
    if not labels.is_file():
        print(f"\nno labels at {labels}")
        return
    labelled = load_labels(labels)
    _held_out(report_rows, labelled)
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    blocking: dict[str, Counter[str]] = defaultdict(Counter)
    unlabelled_blocking = []
    for row in report_rows:
        rows = labelled.get(finding_key(row["rule"], row["file"], row["line"]))
        if rows is None:
            if row["severity"] == "error":
                unlabelled_blocking.append(row)
            continue
        per_rule[row["rule"]][verdict(rows)] += 1
        if row["severity"] == "error":
            blocking[row["rule"]][verdict(rows)] += 1
    matched = sum(sum(c.values()) for c in per_rule.values())
    print(
        f"\nprecision from {labels.name} ({len(labelled)} labelled findings, {matched} matched in this scan on "
        "rule, line and the path from its <owner>@<repo> directory on)"
    )
    print(f"  {'rule':<24} {'all: TP/n':>10} {'prec':>5}   {'blocking: TP/n':>14} {'prec':>5}")
    for rule in sorted(set(per_rule) | set(blocking)):
        a, b = per_rule[rule], blocking[rule]
        na, nb = a["TP"] + a["FP"], b["TP"] + b["FP"]
        pa = f"{a['TP'] / na:.2f}" if na else "-"
        pb = f"{b['TP'] / nb:.2f}" if nb else "-"
        print(f"  {rule:<24} {a['TP']:>4}/{na:<5} {pa:>5}   {b['TP']:>8}/{nb:<5} {pb:>5}")
    current = {finding_key(r["rule"], r["file"], r["line"]) for r in report_rows}
    gone = Counter(verdict(rows) for key, rows in labelled.items() if key not in current)
    n_fp = sum(1 for rows in labelled.values() if verdict(rows) == "FP")
    n_tp = sum(1 for rows in labelled.values() if verdict(rows) == "TP")
    print(
        f"  labelled findings no longer reported: {gone['FP']} of {n_fp} false positives, "
        f"{gone['TP']} of {n_tp} true positives"
    )
    if unlabelled_blocking:
        print(f"  {len(unlabelled_blocking)} blocking finding(s) have no label:")
        for row in unlabelled_blocking[:20]:
            print(f"    {row['rule']} {row['file']}:{row['line']} {row['evidence'][:60]}")


def _held_out(report_rows: list[dict[str, str]], labelled: dict[Key, list[dict[str, str]]]) -> None:
    """Precision of the blocking findings per rule on each labelled draw (the `sample` column): a `tune` draw
    was read while the rules were fixed, a `holdout` draw only afterwards. A labelled finding the scan no
    longer reports, or no longer as an error, drops out of the figure (n counts what still blocks)."""
    blocking = {finding_key(r["rule"], r["file"], r["line"]) for r in report_rows if r["severity"] == "error"}
    draws = sorted({r.get("sample") or "" for rows in labelled.values() for r in rows} - {""})
    if not draws:
        return
    print("\nblocking findings per rule and labelled draw (TP/n of the labelled findings still reported as errors)")
    for draw in draws:
        rows = [(k, r) for k, rs in labelled.items() for r in rs if r.get("sample") == draw]
        per_rule: dict[str, Counter[str]] = defaultdict(Counter)
        for key, row in rows:
            per_rule[key[0]]["labelled"] += 1
            if key in blocking:
                per_rule[key[0]][row["verdict"].strip().upper()] += 1
        print(f"  draw {draw} ({len(rows)} labelled)")
        print(f"    {'rule':<26} {'TP/n':>9} {'prec':>5}   {'labelled':>8}")
        for rule in sorted(per_rule):
            c = per_rule[rule]
            n = c["TP"] + c["FP"]
            prec = f"{c['TP'] / n:.2f}" if n else "-"
            print(f"    {rule:<26} {c['TP']:>4}/{n:<4} {prec:>5}   {c['labelled']:>8}")


def _structural(rows: list[dict[str, str]], labels: Path) -> None:
    """Precision of the most frequent structural rules on a labelled sample (drawn from an earlier scan):
    as labelled, and over the labelled findings this scan still reports."""
    if not labels.is_file():
        return
    with labels.open(newline="", encoding="utf-8") as fh:
        labelled = list(csv.DictReader(fh))
    current = {finding_key(r["rule"], r["file"], r["line"]) for r in rows}
    print(f"\nstructural rules, labelled sample {labels.name} ({len(labelled)} findings)")
    print(f"  {'rule':<30} {'labelled TP/n':>13} {'prec':>5}   {'still reported TP/n':>19} {'prec':>5}")
    for rule in sorted({r["rule"] for r in labelled}):
        mine = [r for r in labelled if r["rule"] == rule]
        kept = [r for r in mine if finding_key(r["rule"], r["file"], r["line"]) in current]
        tp, tp_kept = (sum(r["verdict"] == "TP" for r in x) for x in (mine, kept))
        p_all = f"{tp / len(mine):.2f}" if mine else "-"
        p_kept = f"{tp_kept / len(kept):.2f}" if kept else "-"
        print(f"  {rule:<30} {tp:>7}/{len(mine):<5} {p_all:>5}   {tp_kept:>13}/{len(kept):<5} {p_kept:>5}")


def _real_tasks(tasks_dir: Path) -> None:
    from skillworks.check import audit_task_leakage
    from skillworks.tasks import load_task

    print(f"\nleakage audit on the tasks in {tasks_dir}")
    for task_dir in sorted(p for p in tasks_dir.iterdir() if p.is_dir()):
        try:
            task = load_task(task_dir)
        except Exception as exc:  # a task that does not load is reported, not fatal
            print(f"  {task_dir.name:<28} does not load: {exc}")
            continue
        counts = Counter(f.severity.value for f in audit_task_leakage(task))
        rules = Counter(f.rule_id for f in audit_task_leakage(task) if f.severity is Severity.ERROR)
        errors = f" errors: {dict(rules)}" if rules else ""
        print(
            f"  {task_dir.name:<28} skills {len(task.skills)}  error {counts['error']}  warning "
            f"{counts['warning']}  info {counts['info']}{errors}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, nargs="+")
    parser.add_argument("--no-lint", action="store_true")
    parser.add_argument("--workers", type=int, default=None, help="scan processes (default: one per core)")
    parser.add_argument("--sample-out", type=Path, help="write a random sample of findings per rule (CSV)")
    parser.add_argument("--per-rule", type=int, default=10)
    parser.add_argument("--sample-errors", action="store_true", help="sample only blocking findings without a label")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--real-tasks", type=Path)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    corpora: list[Path] = [c.resolve() for c in args.corpus]
    for c in corpora:
        if not c.is_dir():
            print(f"error: {c}: not a directory", file=sys.stderr)
            return 2
    corpus = corpora[0] if len(corpora) == 1 else Path(os.path.commonpath(corpora))

    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    cpu0 = _cpu()
    with TreeMemory() as memory:
        report = run_async(check_skills_async(corpora, lint=not args.no_lint, workers=args.workers))
    elapsed = time.perf_counter() - start
    cpu_self, cpu_children = (b - a for a, b in zip(cpu0, _cpu(), strict=True))
    cpu_children -= memory.sampler_cpu
    n = len(report.skills)
    cores = len(os.sched_getaffinity(0))
    print(f"corpus {' '.join(map(str, corpora))}")
    print(
        f"skills {n} in {elapsed:.1f}s wall = {n / elapsed:.0f} skills/s with {report.workers} scan worker "
        f"process(es) on {cores} cores, lint {'off' if args.no_lint else 'on'}"
    )
    cpu = cpu_self + cpu_children
    print(
        f"cpu: {cpu:.1f}s in all ({cpu_self:.1f}s this process, {cpu_children:.1f}s worker and linter processes) "
        f"= {1000 * cpu / n:.1f} ms per skill -> {cores * n / cpu:.0f} skills/s if the {cores} cores were idle"
    )
    print(f"load average: {load_before:.1f} before the run, {os.getloadavg()[0]:.1f} after (1-minute)")
    print(memory.summary())
    print(
        f"peak RSS of one process: this one {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB, "
        f"largest child {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB"
    )

    # rendered as `check` writes them: piece by piece, never held whole
    t = time.perf_counter()
    text_size = sum(len(line) + 1 for line in text_lines(report, verbose=True, width=80))
    t_text = time.perf_counter() - t
    t = time.perf_counter()
    json_size = sum(len(piece) for piece in iter_json(report))
    t_json = time.perf_counter() - t
    t = time.perf_counter()
    sarif_size = sum(len(piece) for piece in iter_sarif(report, base=corpus))
    t_sarif = time.perf_counter() - t
    print(
        f"render: text {t_text:.2f}s ({text_size / 1e6:.1f} MB), json {t_json:.2f}s ({json_size / 1e6:.1f} MB), "
        f"sarif {t_sarif:.2f}s ({sarif_size / 1e6:.1f} MB)"
    )
    print(f"gate: {len(report.failed())} of {n} skills fail")

    rows: list[dict[str, str]] = []
    for s in report.skills:
        for f in s.findings:
            rows.append(
                {
                    "rule": f.rule_id,
                    "severity": f.severity.value,
                    "file": _rel(corpora, s.root, f.file),
                    "line": str(f.line or ""),
                    "evidence": (f.evidence or "").replace("\n", " "),
                    "context": f.context.value if f.context else "",
                    "reason": f.reason or "",
                    "security": "1" if f.dimension is Dimension.SECURITY else "",
                }
            )
    by_rule: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        by_rule[row["rule"]][row["severity"]] += 1
    print(f"\nfindings per rule ({len(rows)} in all)")
    print(f"  {'rule':<30} {'error':>6} {'warning':>8} {'info':>6}")
    for rule in sorted(by_rule, key=lambda r: (-sum(by_rule[r].values()), r)):
        counts = by_rule[rule]
        print(f"  {rule:<30} {counts['error']:>6} {counts['warning']:>8} {counts['info']:>6}")

    security = [r for r in rows if r["security"]]
    if args.sample_out:
        rng = random.Random(args.seed)
        grouped: dict[str, list[dict[str, str]]] = defaultdict(list)
        known: set[Key] = set()
        if args.sample_errors and args.labels.is_file():
            known = set(load_labels(args.labels))
        for row in security if security else rows:
            if args.sample_errors and (
                row["severity"] != "error" or finding_key(row["rule"], row["file"], row["line"]) in known
            ):
                continue
            grouped[row["rule"]].append(row)
        with args.sample_out.open("w", newline="", encoding="utf-8") as fh:
            fields = ["rule", "severity", "file", "line", "context", "evidence", "reason", "verdict", "why"]
            writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
            writer.writeheader()
            for rule in sorted(grouped):
                for row in rng.sample(grouped[rule], min(args.per_rule, len(grouped[rule]))):
                    writer.writerow({**row, "verdict": "", "why": ""})
        print(f"\nwrote a sample of findings to label: {args.sample_out}")
    _precision(security, args.labels)
    _structural(rows, STRUCTURAL_LABELS)
    if args.real_tasks:
        _real_tasks(args.real_tasks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
