"""`skillworks power` on real per-task results: one configuration of the SkillsBench registry as a pilot.

    .venv/bin/python benchmarks/power_from_registry.py [CONFIGURATION] [REGISTRY]

The registry (/work/shared/skillsbench/results-registry.json by default) gives per task, configuration and
condition the trials and how many passed; this writes them as a run directory in a temporary folder (a
trial passes for the first passCount trials, reward 1, else 0 — the order of trials is not recorded, which
changes nothing here) and prints what `skillworks power --effect 10` and the report's Δ / g / pass-rate
intervals say about it. With no registry it says so and exits 0.
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from skillworks.cli.power_cmd import power_lines
from skillworks.report import build_summary
from skillworks.results import TrialResult, outcome_for

DEFAULT = Path("/work/shared/skillsbench/results-registry.json")
CONDITIONS = {"No Skills": "none", "With Skills": "curated"}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _write_pilot(rows: list[dict[str, object]], configuration: str, out: Path) -> int:
    chosen = [r for r in rows if r["model"] == configuration and r["condition"] in CONDITIONS]
    tasks = sorted({str(r["task"]) for r in chosen})
    results = []
    for r in chosen:
        cond = CONDITIONS[str(r["condition"])]
        for k in range(int(str(r["trials"]))):
            reward = 1.0 if k < int(str(r["passCount"])) else 0.0
            results.append(
                TrialResult(
                    trial_id=f"{r['task']}__{cond}__a__t{k}", run_id="registry", task_id=str(r["task"]),
                    condition=cond, agent="a", trial_index=k, seed=k, reward=reward,
                    outcome=outcome_for(reward, None), provider="skillsbench-registry", started_at=T0, finished_at=T0,
                )
            )  # fmt: skip
    experiment = {
        "run_id": "registry",
        "tasks": [{"id": t, "path": t} for t in tasks],
        "conditions": ["none", "curated"],
        "agents": [{"name": "builtin", "model": "registry/" + configuration, "options": {"label": "a"}}],
        "trials": 3,
        "seed": 0,
        "lock": {"skills": {}},
    }
    (out / "experiment.json").write_text(json.dumps(experiment), encoding="utf-8")
    (out / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
    return len(tasks)


def main() -> int:
    configuration = sys.argv[1] if len(sys.argv) > 1 else "Claude Code (Opus 4.7)"
    path = Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT
    if not path.is_file():
        print(f"no registry at {path}: nothing to measure")
        return 0
    rows = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "pilot"
        run.mkdir()
        tasks = _write_pilot(rows, configuration, run)
        print(f"{configuration}: {tasks} tasks from {path}")
        for line in power_lines(run, effect_pp=10.0, power=0.8, confidence=0.95, baseline="none"):
            print(line)
        s = build_summary([run])
        d = s.deltas[0]
        print(f"Δ {d.delta_pp:+.1f} pp, 95% CI [{d.ci_low_pp:+.1f}, {d.ci_high_pp:+.1f}] ({d.ci_method})")
        print(f"g {d.g:.3f}, 95% CI [{d.g_ci_low:+.3f}, {d.g_ci_high:+.3f}]")
        for p in s.pass_rates:
            iv = p.task_interval
            print(f"{p.condition}: {p.rate * 100:.1f}%" + (f" [{iv.low * 100:.1f}, {iv.high * 100:.1f}]" if iv else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
