"""End-to-end overhead of `skillworks run` on a real SkillsBench task, against a raw podman script.

One oracle trial of lake-warming-attribution (../shared/real-tasks) on the container backend, timed
as a user sees it: the whole `skillworks run ... --agent oracle --conditions none --env container`
command (Python start-up, imports, task loading, image cache check, the trial, results and reports).
The baseline is a shell script with the raw runtime calls for the same steps: `run -d` the image
skillworks built (same flags: cpus, memory, CA bundle), `cp` the solution in, `exec` solve.sh, `cp` the
tests in, `exec` test.sh, `cp` /logs/verifier out, `rm -f`. Runs alternate between the two, so both
see the same machine load; medians and their ratio are printed (goal: <= 1.15). With --count-calls the
runtime calls of one skillworks trial are listed.

    SKILLWORKS_CONTAINER_GLOBAL_FLAGS=... SKILLWORKS_CONTAINER_RUN_FLAGS=... \\
        python benchmarks/real_task_overhead.py [--runs 3] [--image-map ubuntu:24.04=localhost/skillworks-base]
        [--ca-bundle /etc/ssl/certs/ca-certificates.crt] [--count-calls]

Skips (exit 0, says why) when podman or ../shared/real-tasks is absent. The first skillworks run
builds the image when it is missing (not timed).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ../shared/real-tasks next to the repository (or next to a parent of a worktree)
TASK = (
    next(
        (p / "shared" / "real-tasks" for p in ROOT.parents if (p / "shared" / "real-tasks").is_dir()),
        ROOT.parent / "shared" / "real-tasks",
    )
    / "lake-warming-attribution"
)
SKILLWORKS = Path(sys.executable).with_name("skillworks")


def _skillworks_argv(task: Path, out: Path, image_map: list[str], ca_bundle: str | None, cli: str | None) -> list[str]:
    argv = [str(SKILLWORKS), "run", str(task), "--agent", "oracle", "--conditions", "none", "--env", "container"]
    argv += ["--out", str(out), "--concurrency", "1"]
    for item in image_map:
        argv += ["--image-map", item]
    if ca_bundle:
        argv += ["--ca-bundle", ca_bundle]
    if cli:
        argv += ["--container-cli", cli]
    return argv


def run_skillworks(argv: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"skillworks run failed:\n{proc.stderr[-3000:]}")
    run_dir = Path(argv[argv.index("--out") + 1])
    results = list(run_dir.glob("*/results.jsonl"))
    text = results[0].read_text() if results else ""
    if '"reward":1.0' not in text.replace(" ", ""):
        raise SystemExit(f"the oracle trial did not score 1: {text[:2000]}")
    return elapsed


def raw_script(image: str, task: Path, memory_mb: int, cpus: float, ca_bundle: str | None, logs: Path) -> str:
    podman = shlex.join(["podman", *shlex.split(os.environ.get("SKILLWORKS_CONTAINER_GLOBAL_FLAGS", ""))])
    run_flags = os.environ.get("SKILLWORKS_CONTAINER_RUN_FLAGS", "")
    ca = ""
    if ca_bundle:
        mount = "/run/skillworks-host-ca.crt"
        ca = f"-v {shlex.quote(ca_bundle)}:{mount}:ro " + " ".join(
            f"-e {v}={mount}" for v in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE")
        )
    return f"""set -e
name=raw-bench-$$-$RANDOM
{podman} run -d --name "$name" --entrypoint sleep {run_flags} --cpus {cpus:g} --memory {memory_mb}m \\
  --memory-swap {memory_mb}m {ca} {image} infinity >/dev/null
trap '{podman} rm -f -t 0 "$name" >/dev/null' EXIT
tar -C {shlex.quote(str(task))} -cf - --transform 's,^solution,solution,' solution | {podman} cp - "$name":/
{podman} exec -w /root "$name" bash /solution/solve.sh >/dev/null
tar -C {shlex.quote(str(task))} -cf - tests | {podman} cp - "$name":/
{podman} exec -w /root "$name" bash /tests/test.sh >/dev/null
{podman} cp "$name":/logs/verifier {shlex.quote(str(logs))}
grep -qx 1 {shlex.quote(str(logs))}/reward.txt
"""


def run_raw(script: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"raw script failed:\n{proc.stderr[-3000:]}")
    return elapsed


def _image_tag(image_map: list[str], ca_bundle: str | None) -> tuple[str, int, float]:
    from skillworks.sandbox.container import parse_image_map
    from skillworks.sandbox.container.image import IMAGE_REPO, BuildOptions, plan_task_image
    from skillworks.tasks import load_task

    task = load_task(TASK)
    options = BuildOptions(image_map=parse_image_map(image_map), strip_skills=True)
    *_, content_hash = plan_task_image(task, options)
    resources = task.environment.resources
    return f"{IMAGE_REPO}:{content_hash[:16]}", resources.memory_mb or 4096, resources.cpus or 1


def _count_calls(argv: list[str], tmp: Path) -> None:
    """One skillworks trial through a wrapper that logs every runtime call."""
    log = tmp / "calls.log"
    wrapper = tmp / "podman"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\nexec {shutil.which("podman")} "$@"\n')
    wrapper.chmod(0o755)
    out = tmp / "count"
    argv = _skillworks_argv(TASK, out, *_args_of(argv), str(wrapper))
    run_skillworks(argv)
    calls = log.read_text().splitlines()
    print(f"runtime calls in one skillworks trial: {len(calls)}")
    for call in calls:
        words = [
            w for w in call.split() if not w.startswith("--runtime") and w not in ("runc", "--cgroup-manager=cgroupfs")
        ]
        print("   ", " ".join(words)[:150])


def _args_of(argv: list[str]) -> tuple[list[str], str | None]:
    maps = [argv[i + 1] for i, a in enumerate(argv) if a == "--image-map"]
    ca = argv[argv.index("--ca-bundle") + 1] if "--ca-bundle" in argv else None
    return maps, ca


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image-map", action="append", default=None)
    parser.add_argument("--ca-bundle", default=os.environ.get("SSL_CERT_FILE"))
    parser.add_argument("--count-calls", action="store_true")
    args = parser.parse_args()
    image_map = args.image_map if args.image_map is not None else ["ubuntu:24.04=localhost/skillworks-base"]
    if shutil.which("podman") is None:
        print("skipped: podman is not installed")
        return
    if not TASK.is_dir():
        print(f"skipped: {TASK} is absent")
        return
    with tempfile.TemporaryDirectory(prefix="sw-bench-") as tmp_name:
        tmp = Path(tmp_name)
        warm = _skillworks_argv(TASK, tmp / "warm", image_map, args.ca_bundle, None)
        print("warm-up run (builds the image when missing) ...", flush=True)
        run_skillworks(warm)
        if args.count_calls:
            _count_calls(warm, tmp)
        image, memory_mb, cpus = _image_tag(image_map, args.ca_bundle)
        sw_times: list[float] = []
        raw_times: list[float] = []
        for i in range(args.runs):
            sw_argv = _skillworks_argv(TASK, tmp / f"sw-{i}", image_map, args.ca_bundle, None)
            script = raw_script(image, TASK, memory_mb, cpus, args.ca_bundle, tmp / f"raw-{i}")
            pair = [("skillworks", lambda a=sw_argv: run_skillworks(a)), ("raw", lambda s=script: run_raw(s))]
            if i % 2:
                pair.reverse()
            for label, fn in pair:
                elapsed = fn()
                (sw_times if label == "skillworks" else raw_times).append(elapsed)
                print(f"  run {i + 1} {label:10s} {elapsed:6.2f} s", flush=True)
        sw, raw = statistics.median(sw_times), statistics.median(raw_times)
        print(f"lake-warming-attribution, one oracle trial, {args.runs} runs each (median)")
        print(f"  skillworks run (whole command): {sw:6.2f} s")
        print(f"  raw podman script:              {raw:6.2f} s")
        print(f"  ratio: {sw / raw:.2f}x  (goal <= 1.15x)")


if __name__ == "__main__":
    main()
