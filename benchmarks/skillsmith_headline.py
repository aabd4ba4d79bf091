"""Protocol to reproduce SkillSmith's headline (raw vs compiled skills) on a real model, and its break-even.

    python benchmarks/skillsmith_headline.py [TASK ...] [--model provider/id] [--trials 5] [--agent builtin]
    python benchmarks/skillsmith_headline.py --run-dir runs/<id>          # analyse a finished run

Protocol (real model): pass the paper's seven SkillsBench task directories (those present in
/work/shared/real-tasks and any others you have; this script does not guess which ones are missing), a real
`--model` with its key set, `--trials 5`. One `skillworks run` executes both conditions, `curated` (raw
SKILL.md staged) and `compiled` (the same skills compiled, served over MCP, no raw file), paired per task.
Reported per condition: pass rate, provider-reported solve tokens (input + output, as the gateway recorded
them), iterations (model calls) and agent wall time, each with the mean paired difference per task and a 95%
bootstrap interval (numpy, 10,000 resamples of tasks); compile tokens (the hybrid judge's, from each
contract's `compile` block; 0 for a deterministic compile) and the break-even number of solves
(compile tokens / mean solve-token saving per invocation). A run compiles deterministically; with
`--compile-model provider/id` every skill the compiled condition served is compiled again with the hybrid
judgement (`skillworks compile --model`), and those tokens are the compile cost of the break-even.

Without TASK and --model it runs the quickstart suite with the scripted provider
(`examples/scripted/quickstart-compiled.yaml`): that only proves the protocol runs to completion and the
figures are computed; it is a replay, not a model evaluation.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from skillworks.experiment import RunStore

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "scripted" / "quickstart-compiled.yaml"
METRICS = ("solve_tokens", "iterations", "agent_sec", "reward")


def bootstrap(deltas: list[float], resamples: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """Mean and 95% percentile interval of the mean of `deltas` (one per task)."""
    data = np.asarray(deltas, dtype=float)
    if data.size == 0:
        return (float("nan"),) * 3
    rng = np.random.default_rng(seed)
    means = rng.choice(data, size=(resamples, data.size), replace=True).mean(axis=1)
    return float(data.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def _compile_tokens(record: dict[str, Any], seen: dict[str, int]) -> None:
    """Tokens of each artifact's compile (its contract's `compile` block), once per artifact."""
    for entry in record.get("compiled", []):
        contract = Path(entry.get("path", "")) / "contract.json"
        if contract.is_file() and str(contract) not in seen:
            stats = json.loads(contract.read_text()).get("compile", {})
            seen[str(contract)] = int(stats.get("input_tokens", 0)) + int(stats.get("output_tokens", 0))


def hybrid_compile_tokens(run_dir: Path, model: str) -> tuple[int, int]:
    """Compile every artifact's capsule (the package the compiled condition served) again with the hybrid
    judgement of `model`; (tokens, skills)."""
    from skillworks.compile import compile_to

    capsules = sorted({Path(p) for p in (run_dir / "compiled").glob("*/*/capsule")})
    out = Path(tempfile.mkdtemp(prefix="skillworks-hybrid-compile-"))
    total = 0
    for k, capsule in enumerate(capsules):
        c = compile_to(capsule, out / str(k), model=model).contract
        total += c.compile.input_tokens + c.compile.output_tokens
    return total, len(capsules)


def analyse(run_dir: Path) -> dict[str, Any]:
    results = RunStore(run_dir).read_results()
    per: dict[tuple[str, str], dict[str, list[float]]] = {}
    seen: dict[str, int] = {}
    for r in results:
        cell = per.setdefault((r.task_id, r.condition), {m: [] for m in METRICS})
        cell["solve_tokens"].append(r.usage.input_tokens + r.usage.output_tokens)
        cell["iterations"].append(r.usage.calls)
        cell["agent_sec"].append(r.timings.agent_sec)
        cell["reward"].append(r.reward or 0.0)
        if r.condition == "compiled" and r.skill_source is not None:
            _compile_tokens(r.skill_source.record, seen)  # cached per package: paid once
    tasks = sorted({t for t, c in per if c == "curated"} & {t for t, c in per if c == "compiled"})
    summary: dict[str, Any] = {"run": str(run_dir), "tasks": tasks, "trials": len(results), "metrics": {}}
    for m in METRICS:
        cur = [float(np.mean(per[(t, "curated")][m])) for t in tasks]
        comp = [float(np.mean(per[(t, "compiled")][m])) for t in tasks]
        mean, lo, hi = bootstrap([b - a for a, b in zip(cur, comp, strict=True)])
        summary["metrics"][m] = {
            "curated": float(np.mean(cur)) if cur else None,
            "compiled": float(np.mean(comp)) if comp else None,
            "delta": mean,
            "ci95": [lo, hi],
        }
    summary["solve_token_saving_per_invocation"] = -summary["metrics"]["solve_tokens"]["delta"] if tasks else None
    return with_compile_tokens(summary, sum(seen.values()), "the run's compile (deterministic unless judged)")


def with_compile_tokens(summary: dict[str, Any], tokens: int, source: str) -> dict[str, Any]:
    saving = summary["solve_token_saving_per_invocation"]
    summary["compile_tokens"] = tokens
    summary["compile_tokens_source"] = source
    summary["break_even_solves"] = (tokens / saving if tokens else 0.0) if saving and saving > 0 else None
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tasks", nargs="*", type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--agent", default="builtin")
    parser.add_argument("--run-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--compile-model", default=None, help="also compile the served skills with this hybrid judge (provider/id)"
    )
    args = parser.parse_args()
    run_dir = args.run_dir
    if run_dir is None:
        tasks = [str(t) for t in args.tasks] or [str(REPO / "examples/quickstart")]
        model = args.model or f"scripted/{SCRIPT}"
        out = Path(tempfile.mkdtemp(prefix="skillworks-headline-"))
        cmd = [sys.executable, "-m", "skillworks.cli.main", "run", *tasks, "--agent", args.agent]
        cmd += ["--model", model, "--conditions", "curated,compiled", "--trials", str(args.trials)]
        cmd += ["--concurrency", "2", "--out", str(out), "--run-id", "headline"]
        subprocess.run(cmd, check=True)
        run_dir = out / "headline"
    summary = analyse(run_dir)
    if args.compile_model:
        tokens, skills = hybrid_compile_tokens(run_dir, args.compile_model)
        source = f"hybrid judgement by {args.compile_model} over {skills} skill(s)"
        if args.compile_model.startswith("scripted/"):
            source += " (scripted provider: its tokens are the replay's, not a model's)"
        summary = with_compile_tokens(summary, tokens, source)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"run: {summary['run']}  tasks: {len(summary['tasks'])}  trials: {summary['trials']}")
    print(f"{'metric':14} {'curated':>10} {'compiled':>10} {'delta':>10}  95% CI (bootstrap over tasks)")
    for m, v in summary["metrics"].items():
        if v["curated"] is None:
            continue
        print(
            f"{m:14} {v['curated']:10.1f} {v['compiled']:10.1f} {v['delta']:+10.1f}  "
            f"[{v['ci95'][0]:+.1f}, {v['ci95'][1]:+.1f}]"
        )
    be = summary["break_even_solves"]
    print(
        f"compile tokens: {summary['compile_tokens']} ({summary['compile_tokens_source']}); "
        "solve-token saving per invocation: "
        f"{summary['solve_token_saving_per_invocation']:.0f}; break-even: "
        + ("no saving, never" if be is None else f"{be:.2f} solve(s)")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
