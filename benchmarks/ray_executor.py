"""Ray executor vs the local executor on one machine, and report generation at SkillsBench scale.

1. 32 sleep-bound trials (the oracle sleeps 2 s in a real bubblewrap sandbox) at 16-way concurrency,
   run by the local asyncio executor and by the Ray executor on a cluster started in-process. Printed:
   wall time of the trials (Ray's start-up apart), efficiency vs ideal (32 × 2 s / 16 = 4 s), and the
   same with Ray reserving the tasks' declared 1 CPU per trial — on a machine with fewer cores than the
   concurrency, that declared reservation is the ceiling, which is what Ray is for.
2. Report generation (`write_reports`) for a synthetic 9,396-trial run (87 tasks × 18 configurations ×
   2 conditions × 3 trials, each with a small trajectory), the goal being ≤ 5 s for the report step after
   the run. The run writes each trial's trajectory page as it records the trial (timed apart), so the
   report step renders summary.json, report.md and report.html and only checks the 14,094 pages; a cold
   report (every page rendered) is printed for comparison.

    python benchmarks/ray_executor.py [--trials 32] [--concurrency 16] [--sleep 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from skillworks import __version__
from skillworks.experiment import AgentConfig, ExperimentSpec, LocalExecutor, run_experiment
from skillworks.experiment.executor import Executor
from skillworks.experiment.spec import task_ref
from skillworks.report.trial_pages import TrialPageWriter
from skillworks.report.write import baselines_of
from skillworks.results import Timings, TrialResult, Usage
from skillworks.tasks import load_task
from skillworks.tasks.model import Task


def sleep_tasks(root: Path, n: int, seconds: float) -> list[Task]:
    tasks = []
    for i in range(n):
        d = root / f"sleep-{i:02d}"
        (d / "environment").mkdir(parents=True)
        (d / "environment" / "in.txt").write_text("x\n")
        (d / "oracle").mkdir()
        (d / "oracle" / "solve.sh").write_text(f"#!/usr/bin/env bash\nsleep {seconds}\necho ok > /app/x.txt\n")
        (d / "verifier").mkdir()
        (d / "verifier" / "test.sh").write_text(
            "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
            "[ -f /app/x.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
        )
        (d / "task.md").write_text(
            textwrap.dedent(
                """\
                ---
                schema_version: "1.3"
                environment:
                  network_mode: no-network
                  cpus: 1
                ---
                Write ok to /app/x.txt.
                """
            )
        )
        tasks.append(load_task(d))
    return tasks


def spec_for(tasks: list[Task], run_id: str, concurrency: int) -> ExperimentSpec:
    return ExperimentSpec(
        run_id=run_id,
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(t) for t in tasks],
        conditions=["none"],
        agents=[AgentConfig(name="oracle")],
        trials=1,
        seed=0,
        concurrency=concurrency,
    )


def timed_run(tasks: list[Task], out: Path, run_id: str, concurrency: int, executor: Executor) -> tuple[float, int]:
    t0 = time.monotonic()
    outcome = asyncio.run(run_experiment(spec_for(tasks, run_id, concurrency), tasks, out / run_id, executor=executor))
    solved = sum(1 for r in outcome.results if r.outcome == "solved")
    return time.monotonic() - t0, solved


def executor_benchmark(n: int, concurrency: int, seconds: float) -> None:
    import ray

    from skillworks.experiment.ray_executor import RayExecutor, local_sandbox_resources

    ideal = n * seconds / concurrency
    print(
        f"{n} trials sleeping {seconds:g} s at concurrency {concurrency} on {os.cpu_count()} cores; ideal {ideal:.1f} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tasks = sleep_tasks(Path(tmp) / "tasks", n, seconds)
        wall, solved = timed_run(tasks, Path(tmp), "local", concurrency, LocalExecutor())
        print(f"  local executor            {wall:6.1f} s  efficiency {ideal / wall:.2f}  solved {solved}/{n}")
        t0 = time.monotonic()
        ray.init(
            address="local",
            num_cpus=os.cpu_count(),
            resources=local_sandbox_resources(),
            include_dashboard=False,
            log_to_driver=False,
            logging_level="WARNING",
        )
        print(f"  ray start-up (in-process) {time.monotonic() - t0:6.1f} s  (once per run, not counted below)")
        try:
            for label, cpus in (("ray, 0.1 CPU per trial", 0.1), ("ray, declared 1 CPU/trial", None)):
                executor = RayExecutor(cpus_per_trial=cpus)
                wall, solved = timed_run(tasks, Path(tmp), f"ray-{cpus}", concurrency, executor)
                ceiling = ideal if cpus else n * seconds / min(concurrency, os.cpu_count() or 1)
                print(
                    f"  {label:25} {wall:6.1f} s  efficiency {ideal / wall:.2f}"
                    f"  (ceiling {ideal / ceiling:.2f} from CPUs)  solved {solved}/{n}"
                )
        finally:
            ray.shutdown()


TRAJECTORY = json.dumps(
    {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "builtin", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Write ok to /app/output/x.txt."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls /app"}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "input.txt"}]},
            },
            {"step_id": 3, "source": "agent", "message": "done"},
        ],
    }
)


def report_benchmark() -> None:
    from skillworks.experiment import RunStore
    from skillworks.report import write_reports

    tasks = [f"task-{i:02d}" for i in range(87)]
    configs = [f"agent{i:02d}-model" for i in range(18)]
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "big"
        store = RunStore(run_dir)
        spec = ExperimentSpec(
            run_id="big",
            created_at=datetime.now(UTC),
            skillworks_version=__version__,
            tasks=[],
            conditions=["none", "curated"],
            agents=[AgentConfig(name=c, options={"label": c}) for c in configs],
            trials=3,
            seed=0,
            concurrency=1,
        )
        store.write_spec(spec)
        now = datetime.now(UTC)
        lines = []
        for task in tasks:
            for cfg in configs:
                for cond in ("none", "curated"):
                    for k in range(3):
                        reward = 1.0 if rng.random() < (0.5 if cond == "curated" else 0.34) else 0.0
                        lines.append(
                            TrialResult(
                                trial_id=f"{task}__{cond}__{cfg}__t{k}",
                                run_id="big",
                                task_id=task,
                                condition=cond,
                                agent=cfg,
                                trial_index=k,
                                seed=k,
                                reward=reward,
                                outcome="solved" if reward else "failed",
                                failure_mode=None if reward else "verification_failed",
                                timings=Timings(total_sec=60.0),
                                usage=Usage(input_tokens=1000, output_tokens=100),
                                started_at=now,
                                finished_at=now + timedelta(seconds=60),
                            ).model_dump_json()
                        )
        store.results_path.write_text("\n".join(lines) + "\n")
        for line in lines:  # every trial leaves a (small) trajectory, as a real run does
            trial_dir = run_dir / "trials" / json.loads(line)["trial_id"]
            trial_dir.mkdir(parents=True)
            (trial_dir / "trajectory.json").write_text(TRAJECTORY)
        results = store.read_results()

        # during the run: the runner writes each trial's page as the trial is recorded
        writer = TrialPageWriter(
            run_dir, baselines=baselines_of(spec.conditions, run_dir), reports=[run_dir / "report.html"]
        )
        t0 = time.monotonic()
        for r in results:
            writer.add(r)
        during = time.monotonic() - t0

        # the report step after the run (each timing parses results.jsonl afresh, as a new process does:
        # touching the file invalidates the parse a report keeps while the file is unchanged)
        stamps = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*.html")}
        os.utime(store.results_path)
        t0 = time.monotonic()
        files = write_reports(run_dir)
        took = time.monotonic() - t0
        os.utime(store.results_path)
        t0 = time.monotonic()
        write_reports(run_dir, formats=("json", "md"))
        core = time.monotonic() - t0
        rendered = sum(1 for p, m in stamps.items() if p.stat().st_mtime_ns != m)
        sizes = ", ".join(f"{k} {Path(v).stat().st_size / 1e6:.1f} MB" for k, v in sorted(files.items()))

        # a report of a run whose pages were never written (e.g. recorded by an older skillworks)
        for page in stamps:
            page.unlink()
        os.utime(store.results_path)
        t0 = time.monotonic()
        write_reports(run_dir)
        cold = time.monotonic() - t0
        print(
            f"report of {len(lines)} trials (goal <= 5 s): the report step after the run {took:.1f} s "
            f"(summary.json + report.md alone {core:.1f} s; {len(stamps)} trajectory/pair pages checked, "
            f"{rendered} rendered again); {sizes}\n"
            f"  those pages written during the run as trials were recorded: {during:.1f} s in all, "
            f"{during / len(lines) * 1000:.1f} ms per trial; a cold report rendering every page: {cold:.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--skip-executors", action="store_true", help="only the report benchmark")
    args = parser.parse_args()
    if not args.skip_executors:
        executor_benchmark(args.trials, args.concurrency, args.sleep)
    report_benchmark()


if __name__ == "__main__":
    main()
