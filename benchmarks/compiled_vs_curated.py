"""Raw vs compiled skills on the quickstart tasks: disclosed skill tokens, solve tokens, calls, time, pass rate.

    python benchmarks/compiled_vs_curated.py [--run-dir DIR] [--trials 2] [--model scripted/...]

Without --run-dir it runs `skillworks run examples/quickstart --agent builtin --conditions curated,compiled`
with the scripted provider script `examples/scripted/quickstart-compiled.yaml` (a replay of the turns an
agent that uses the skill would take: NOT a model evaluation; its turns carry no usage numbers, so the
scripted provider counts the tokens of every real request). Pass `--model provider/id` (with its key set)
to measure a real model instead.

Disclosed skill tokens per trial, from the trial's ATIF trajectory (the same offline estimator for both):
  curated  = the skill listing in the system prompt + the `skill` tool's definition + what loading the
             skill returned (the `skill` tool, or reading a SKILL.md);
  compiled = the compiled-skill note in the system prompt + the runtime tools' definitions + every runtime
             answer that disclosed skill text (status guidance: the contract on selection, doc search,
             fallback files). Operator output (status execute) is the work itself, as running the bundled
             script is under curated, and is counted in neither.
Goal: >= 50% fewer disclosed skill tokens under compiled, pass rate unchanged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from skillworks.check.tokens import estimate_tokens
from skillworks.experiment import RunStore

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "scripted" / "quickstart-compiled.yaml"
_SKILL_PROMPT_MARK = "You have skills:"
_COMPILED_PROMPT_MARK = "Compiled skills are available"
_RUNTIME_TOOLS = ("list_skill_assets", "get_skill_asset", "search_skill_docs")


def _disclosed(trajectory: dict[str, Any]) -> int:
    steps = trajectory["steps"]
    system = next((s["message"] for s in steps if s["source"] == "system"), "")
    total = 0
    for mark in (_SKILL_PROMPT_MARK, _COMPILED_PROMPT_MARK):
        if mark in system:
            total += estimate_tokens(system[system.index(mark) :])
    for definition in trajectory["agent"].get("tool_definitions") or []:
        name = definition["function"]["name"]
        if name == "skill" or name.startswith("run_") or name in _RUNTIME_TOOLS:
            total += estimate_tokens(json.dumps(definition))
    for step in steps:
        calls = {c["tool_call_id"]: c for c in step.get("tool_calls") or []}
        for result in (step.get("observation") or {}).get("results") or []:
            call = calls.get(result.get("source_call_id"))
            content = result.get("content") or ""
            if not isinstance(content, str) or call is None:
                continue
            name, args = call["function_name"], call.get("arguments") or {}
            if name == "skill" or (name == "bash" and "SKILL.md" in str(args.get("command", ""))):
                total += estimate_tokens(content)
            elif name.startswith("run_") or name in _RUNTIME_TOOLS:
                try:
                    status = json.loads(content).get("status")
                except ValueError:
                    status = None
                if status == "guidance":
                    total += estimate_tokens(content)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", type=Path, help="measure an existing run instead of running one")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--model", default=f"scripted/{SCRIPT}")
    args = parser.parse_args()
    run_dir = args.run_dir
    if run_dir is None:
        out = Path(tempfile.mkdtemp(prefix="skillworks-compiled-bench-"))
        cmd = [
            sys.executable,
            "-m",
            "skillworks.cli.main",
            "run",
            str(REPO / "examples/quickstart"),
            "--agent",
            "builtin",
            "--model",
            args.model,
            "--conditions",
            "curated,compiled",
            "--trials",
            str(args.trials),
            "--concurrency",
            "4",
            "--out",
            str(out),
            "--run-id",
            "bench",
        ]
        subprocess.run(cmd, check=True)
        run_dir = out / "bench"
    results = RunStore(run_dir).read_results()
    rows: dict[str, dict[str, list[float]]] = {}
    per_task: dict[tuple[str, str], list[float]] = {}
    compile_sec = 0.0
    for r in results:
        trial = run_dir / "trials" / r.trial_id
        trajectory = json.loads((trial / "trajectory.json").read_text())
        disclosed = _disclosed(trajectory)
        row = rows.setdefault(
            r.condition, {k: [] for k in ("reward", "disclosed", "input", "output", "calls", "agent_sec")}
        )
        row["reward"].append(r.reward or 0.0)
        row["disclosed"].append(disclosed)
        row["input"].append(r.usage.input_tokens)
        row["output"].append(r.usage.output_tokens)
        row["calls"].append(r.usage.calls)
        row["agent_sec"].append(r.timings.agent_sec)
        per_task.setdefault((r.task_id, r.condition), []).append(disclosed)
        if r.skill_source is not None:
            compile_sec += sum(float(c.get("compile_sec") or 0) for c in r.skill_source.record.get("compiled", []))
    print(f"run: {run_dir}  provider: {results[0].provider if results else '-'}")
    print(
        f"{'condition':10} {'pass':>6} {'disclosed skill tok':>20} {'solve in tok':>13} {'out tok':>8} "
        f"{'calls':>6} {'agent s':>8}"
    )
    for cond in ("curated", "compiled"):
        if cond not in rows:
            continue
        row = rows[cond]
        print(
            f"{cond:10} {statistics.mean(row['reward']):6.0%} {statistics.mean(row['disclosed']):20.0f} "
            f"{statistics.mean(row['input']):13.0f} {statistics.mean(row['output']):8.0f} "
            f"{statistics.mean(row['calls']):6.1f} {statistics.mean(row['agent_sec']):8.2f}"
        )
    tasks = sorted({t for t, _ in per_task})
    ratios = []
    for task in tasks:
        cur, comp = per_task.get((task, "curated")), per_task.get((task, "compiled"))
        if cur and comp:
            ratio = 1 - statistics.mean(comp) / statistics.mean(cur)
            ratios.append(ratio)
            print(
                f"  {task:28} disclosed: curated {statistics.mean(cur):6.0f}  compiled {statistics.mean(comp):6.0f}"
                f"  ({ratio:+.0%} fewer)"
            )
    if ratios:
        print(
            f"disclosed skill tokens under compiled: {statistics.mean(ratios):.0%} fewer on average "
            f"(goal >= 50%); compile time {compile_sec:.2f} s in total (offline, no tokens)"
        )


if __name__ == "__main__":
    main()
