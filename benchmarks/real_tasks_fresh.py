"""Oracle pass rates of real SkillsBench tasks (../shared/real-tasks) under the fresh verifier (the default
since issue 30) and under `verifier.isolation: shared` (the old mode), on the container backend.

For each task (default: r2r-mpc-control, whose oracle is flaky by the task's own unseeded noise, so a
single trial or a unit test cannot say whether fresh verification changed its score) one
`skillworks run --agent oracle --trials K` runs the task as written, verified in a fresh container with the
agent's outputs copied in, and one runs a temporary copy whose task.toml adds `isolation = "shared"` under
`[verifier]` (verified in the agent's own container). Printed per task and mode: the pass rate (trials with
reward 1), the rewards, errored trials, the verifier's failed tests with how many trials failed each (the
same tests failing in both modes is the task's own noise), and every path of `outputs_not_copied` (what
the oracle changed outside the copied outputs: empty means the fresh verifier saw all of it). The same
image serves both modes (the copy's environment is the same); the first run builds it (timed with the
trials).

    SKILLWORKS_CONTAINER_GLOBAL_FLAGS=... SKILLWORKS_CONTAINER_RUN_FLAGS=... SKILLWORKS_CONTAINER_BUILD_FLAGS=... \\
        python benchmarks/real_tasks_fresh.py [--trials 3] [--task r2r-mpc-control ...]
        [--image-map ubuntu:24.04=localhost/skillworks-base] [--ca-bundle /etc/ssl/certs/ca-certificates.crt]

Skips (exit 0, says why) when podman or ../shared/real-tasks is absent. The tasks of real-tasks that cannot
run on this machine are listed with the reason (NOT_RUNNABLE).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from skillworks.grading import read_ctrf

ROOT = Path(__file__).resolve().parents[1]
REAL = next(
    (p / "shared" / "real-tasks" for p in ROOT.parents if (p / "shared" / "real-tasks").is_dir()),
    ROOT.parent / "shared" / "real-tasks",
)
# from ../shared/real-tasks/README.md: why these cannot run here (no internet but PyPI/Debian/npm)
NOT_RUNNABLE = {
    "flood-risk-analysis": "its solution downloads data from the internet (oracle 0 here)",
    "suricata-custom-exfil": "foreign base image jasonish/suricata:7.0.11 (cannot be pulled or mapped here)",
    "syzkaller-ppdev-syzlang": "its Dockerfile runs git clone from the internet at build time",
}


def _shared_copy(task: Path, tmp: Path) -> Path:
    copy = tmp / "shared" / task.name
    shutil.copytree(task, copy, symlinks=False)
    toml = copy / "task.toml"
    text = toml.read_text()
    if "[verifier]\n" not in text:
        raise SystemExit(f'{toml}: no [verifier] table to add isolation = "shared" to')
    toml.write_text(text.replace("[verifier]\n", '[verifier]\nisolation = "shared"\n', 1))
    return copy


def _run(task: Path, out: Path, trials: int, image_map: list[str], ca_bundle: str | None) -> tuple[list[dict], float]:
    argv = [sys.executable, "-m", "skillworks.cli.main", "run", str(task), "--agent", "oracle"]
    argv += ["--conditions", "none", "--env", "container", "--trials", str(trials), "--concurrency", "1"]
    argv += ["--out", str(out), "--run-id", "r"]
    for item in image_map:
        argv += ["--image-map", item]
    if ca_bundle:
        argv += ["--ca-bundle", ca_bundle]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    path = out / "r" / "results.jsonl"
    if not path.is_file():
        raise SystemExit(f"skillworks run of {task} wrote no results (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    results = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for result in results:  # the verifier's failed tests, from whatever CTRF report it wrote (real tasks
        # name it ctrf-report.json, which skillworks' own `tests` field does not read)
        logs = out / "r" / "trials" / result["trial_id"] / "verifier" / "logs"
        tests = [t for report in sorted(logs.glob("ctrf*.json")) for t in read_ctrf(report)]
        result["failed_tests"] = sorted({t.name for t in tests if t.status == "failed"})
    return results, elapsed


def _line(mode: str, results: list[dict], elapsed: float) -> str:
    rewards = [r["reward"] for r in results]
    passed = sum(1 for r in rewards if r == 1.0)
    errors = [r["error"]["category"] for r in results if r.get("error")]
    not_copied = sorted({p for r in results for p in r.get("outputs_not_copied") or []})
    isolation = sorted({str(r.get("verifier_isolation")) for r in results})
    failed = Counter(name for r in results for name in r["failed_tests"])
    return (
        f"  {mode:<7} pass rate {passed}/{len(results)}  rewards {rewards}  errors {errors or 'none'}  "
        f"verifier {','.join(isolation)}  outputs_not_copied {not_copied or 'none'}  ({elapsed:.0f} s)\n"
        f"          failed tests (trials): {dict(failed.most_common()) or 'none'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3, help="oracle trials per task and mode")
    parser.add_argument("--task", action="append", help="a task of real-tasks (repeat); default r2r-mpc-control")
    parser.add_argument("--image-map", action="append", default=None)
    parser.add_argument("--ca-bundle", default="/etc/ssl/certs/ca-certificates.crt")
    args = parser.parse_args()
    if shutil.which("podman") is None or not REAL.is_dir():
        print(f"skipped: needs podman and {REAL}")
        return 0
    image_map = args.image_map or ["ubuntu:24.04=localhost/skillworks-base"]
    ca_bundle = args.ca_bundle if args.ca_bundle and Path(args.ca_bundle).is_file() else None
    names = args.task or ["r2r-mpc-control"]
    print(f"oracle trials per task and mode: {args.trials}; image map {image_map}")
    with tempfile.TemporaryDirectory(prefix="sw-real-fresh-") as tmp_name:
        tmp = Path(tmp_name)
        for name in names:
            task = REAL / name
            if name in NOT_RUNNABLE or not task.is_dir():
                print(f"{name}: not run: {NOT_RUNNABLE.get(name, 'not in real-tasks')}")
                continue
            print(f"{name}:")
            for mode, path in (("fresh", task), ("shared", _shared_copy(task, tmp))):
                results, elapsed = _run(path, tmp / f"{name}-{mode}", args.trials, image_map, ca_bundle)
                print(_line(mode, results, elapsed), flush=True)
    for name, why in NOT_RUNNABLE.items():
        if name not in names:
            print(f"{name}: not run here: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
