"""End-to-end overhead of `skillworks run` on a real SkillsBench task, against a raw podman script.

One oracle trial of lake-warming-attribution (../shared/real-tasks) on the container backend, timed
as a user sees it: the whole `skillworks run ... --agent oracle --conditions none --env container`
command (Python start-up, imports, task loading, image cache check, the trial, results and reports).
The baseline is a shell script with the raw runtime calls for the same steps: `run -d` the image
skillworks built (same flags: cpus, memory, CA bundle), `cp` the solution in, `exec` solve.sh, `cp` the
tests in, `exec` test.sh, `cp` /logs/verifier out, `rm -f`.

Headline: --pairs interleaved pairs (skillworks then raw, raw then skillworks, ...), so both sides of a
pair see the same machine load; per pair the ratio (skillworks / raw) and skillworks' own overhead
(skillworks − raw, seconds); their median, min and max are printed with the 1-minute load average seen
(goal: ratio <= 1.15). The task as written installs pytest from the network in its verifier, in both
commands, which is most of the noise; --prewarmed also runs the same pairs on a labelled variant of the
task whose image already holds that pytest (its verifier's `pip install` then has nothing to fetch).

The task as written is verified in a fresh container (the default since issue 30: one more container
start, overlapped with the agent phase, plus the copy of the workdir and a `diff`); --shared also runs
the same pairs on a labelled variant verified in the agent's own container (the old mode), so the cost
of fresh verification is the difference of the two.

Before the timed pairs, --traced pairs go through a wrapper of the runtime CLI that logs every call
with its start and end time: they give the number of runtime calls per trial (skillworks and the raw
script), the time outside the task's own solve.sh and test.sh (the same work in both, and the noisy
part), whose difference is skillworks' own overhead free of that noise, and the split of the skillworks
command into phases (start-up, image check, container start, staging, agent phase, end of the agent
phase, verifier, teardown, results and reports), each phase being its runtime calls plus the Python
work just before them (medians). The import time of the modules `skillworks run` loads is timed on
its own. With --list-calls the calls themselves are listed.

An installed skillworks has bytecode caches (pip compiles them at install; an editable install writes
them on first use). Under PYTHONDONTWRITEBYTECODE=1 (set on some machines, ours included) an editable
checkout never gets them and every `skillworks` start compiles its own modules from source; the
benchmark therefore compiles them once first (`compileall`) and says so (--no-compile: as found).

    SKILLWORKS_CONTAINER_GLOBAL_FLAGS=... SKILLWORKS_CONTAINER_RUN_FLAGS=... \\
        python benchmarks/real_task_overhead.py [--pairs 5] [--traced 3] [--prewarmed] [--shared]
        [--image-map ubuntu:24.04=localhost/skillworks-base] [--ca-bundle /etc/ssl/certs/ca-certificates.crt]
        [--list-calls]

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
from dataclasses import dataclass
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


def raw_script(
    image: str, task: Path, memory_mb: int, cpus: float, ca_bundle: str | None, logs: Path, cli: str = "podman"
) -> str:
    podman = shlex.join([cli, *shlex.split(os.environ.get("SKILLWORKS_CONTAINER_GLOBAL_FLAGS", ""))])
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


def _image_tag(image_map: list[str], task_dir: Path) -> tuple[str, int, float]:
    from skillworks.sandbox.container import parse_image_map
    from skillworks.sandbox.container.image import IMAGE_REPO, BuildOptions, plan_task_image
    from skillworks.tasks import load_task

    task = load_task(task_dir)
    options = BuildOptions(image_map=parse_image_map(image_map), strip_skills=True)
    *_, content_hash = plan_task_image(task, options)
    resources = task.environment.resources
    return f"{IMAGE_REPO}:{content_hash[:16]}", resources.memory_mb or 4096, resources.cpus or 1


def load() -> str:
    """The 1-minute load average (the machine may be shared), to print next to each figure."""
    return f"load {os.getloadavg()[0]:.2f}"


# --- tracing: a wrapper of the runtime CLI that logs each call with its start and end time ------------
def _tracing_cli(tmp: Path, name: str) -> tuple[Path, Path]:
    log = tmp / f"{name}.calls"
    wrapper = tmp / f"podman-{name}"  # named podman*: skillworks tells podman from docker by the name
    real = shutil.which("podman")
    wrapper.write_text(
        "#!/bin/sh\n"
        "s=$(date +%s.%N)\n"
        f'{real} "$@"\n'
        "rc=$?\n"
        f'printf "%s %s %s\\n" "$s" "$(date +%s.%N)" "$*" >> {shlex.quote(str(log))}\n'
        "exit $rc\n"
    )
    wrapper.chmod(0o755)
    return wrapper, log


@dataclass
class Call:
    start: float
    end: float
    words: str


def _read_calls(log: Path) -> list[Call]:
    calls = []
    for line in log.read_text().splitlines():
        start, end, words = line.split(" ", 2)
        calls.append(Call(float(start), float(end), words))
    return sorted(calls, key=lambda c: c.start)


PHASES = (
    "start-up (imports, tasks, run dir)",
    "image check/build",
    "container start",
    "staging (skills, audit)",
    "agent phase",
    "end of agent phase, outputs copy, verifier",
    "verifier logs out",
    "teardown",
    "results + reports + exit",
)


def _phase_of(call: Call, current: int) -> int:
    """Phases only move forward; each call's sub-command and words say where it belongs."""
    global_flags = shlex.split(os.environ.get("SKILLWORKS_CONTAINER_GLOBAL_FLAGS", ""))
    words = call.words.split()
    while words and words[0] in global_flags:
        words = words[1:]
    sub, text = (words[0] if words else ""), call.words
    if sub in ("version", "image", "build", "images"):
        phase = 1
    elif sub == "run":
        phase = 2  # (the verifier's fresh container starts right after the agent's: same phase)
    elif sub == "diff":
        phase = 5  # what the agent changed outside its outputs (fresh verification)
    elif "SKILL.md" in text:
        phase = 3
    elif "kill -9 -1" in text or ":/logs/agent" in text or " -newer " in text:
        phase = 5  # (since 4560937 the same exec also extracts the tests and runs test.sh)
    elif sub == "cp" and ":/logs/verifier" in text:
        phase = 6
    elif sub == "rm":
        phase = 7
    elif "/logs/verifier" in text or "/tests" in text:
        phase = 5  # the verifier's upload and its own exec, where they are separate calls
    else:  # the agent's own calls (and uploads, which belong to the phase they are in)
        phase = 4 if current < 4 else current
    return max(phase, current)


def _phase_split(t0: float, t1: float, calls: list[Call]) -> list[float]:
    """Seconds per phase: each call's own time plus the Python work between it and the call before."""
    split = [0.0] * len(PHASES)
    current, previous_end = 0, t0
    for i, call in enumerate(calls):
        phase = _phase_of(call, current)
        split[current if i == 0 else phase] += call.start - previous_end  # before the first call: start-up
        split[phase] += call.end - call.start
        current, previous_end = phase, call.end
    split[-1] += t1 - previous_end
    return split


def _task_seconds(calls: list[Call]) -> float:
    """Time in the task's own two commands (solve.sh, test.sh): the same work in both, and the noisy
    part (the verifier installs pytest from the network); what is left is the overhead. Where one exec
    ends the agent phase and runs test.sh (skillworks since 4560937), all of it counts as the task's:
    its own part (a kill, a reset, the upload, in the container) is not separated, so the overhead
    figure leaves out those few hundredths of a second."""
    return sum(
        c.end - c.start for c in calls if " exec " in f" {c.words} " and ("solve.sh" in c.words or "test.sh" in c.words)
    )


def _spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """median (min-max) of a list of figures."""
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def _traced_runs(
    task_dir: Path, image_map: list[str], ca_bundle: str | None, tmp: Path, runs: int, list_calls: bool
) -> None:
    """`runs` traced pairs: calls per trial, the phase split and the time outside the task's commands
    (medians; the tracing wrapper adds a few ms per call)."""
    image, memory_mb, cpus = _image_tag(image_map, task_dir)
    splits: list[list[float]] = []
    own: list[float] = []
    sw_outside: list[float] = []
    raw_outside: list[float] = []
    totals: list[float] = []
    calls: list[Call] = []
    raw_calls: list[Call] = []
    for i in range(runs):
        cli, log = _tracing_cli(tmp, f"skillworks-{i}")
        argv = _skillworks_argv(task_dir, tmp / f"traced-{i}", image_map, ca_bundle, str(cli))
        t0 = time.time()
        run_skillworks(argv)
        t1 = time.time()
        calls = _read_calls(log)
        raw_cli, raw_log = _tracing_cli(tmp, f"raw-{i}")
        r0 = time.time()
        run_raw(raw_script(image, task_dir, memory_mb, cpus, ca_bundle, tmp / f"raw-traced-{i}", str(raw_cli)))
        r1 = time.time()
        raw_calls = _read_calls(raw_log)
        splits.append(_phase_split(t0, t1, calls))
        totals.append(t1 - t0)
        sw_outside.append(t1 - t0 - _task_seconds(calls))
        raw_outside.append(r1 - r0 - _task_seconds(raw_calls))
        own.append(sw_outside[-1] - raw_outside[-1])
        print(
            f"  traced pair {i + 1}: skillworks {t1 - t0:6.2f} s, raw {r1 - r0:6.2f} s, outside the task's "
            f"commands {sw_outside[-1]:.2f} s vs {raw_outside[-1]:.2f} s ({load()})",
            flush=True,
        )
    print(f"runtime calls per trial: skillworks {len(calls)}, raw script {len(raw_calls)}")
    print(
        f"outside the task's own solve.sh and test.sh, median (min-max) of {runs}: "
        f"skillworks {_spread(sw_outside)} s, raw {_spread(raw_outside)} s"
    )
    print(f"  skillworks' own overhead (paired difference): {_spread(own)} s per one-trial run")
    print(f"skillworks run by phase (median of {runs} traced runs; total {statistics.median(totals):.2f} s):")
    for k, name in enumerate(PHASES):
        print(f"  {name:36s} {statistics.median(split[k] for split in splits):6.2f} s")
    if list_calls:
        for label, listed in (("skillworks", calls), ("raw script", raw_calls)):
            print(f"  {label} calls (last traced run):")
            for call in listed:
                words = [w for w in call.words.split() if w not in ("--runtime", "runc", "--cgroup-manager=cgroupfs")]
                print(f"    {call.end - call.start:5.2f} s  {' '.join(words)[:140]}")


def _pairs(label: str, task_dir: Path, image_map: list[str], ca_bundle: str | None, tmp: Path, pairs: int) -> None:
    """Interleaved untraced pairs (AB, BA, AB, ...): per pair the ratio and the own overhead."""
    image, memory_mb, cpus = _image_tag(image_map, task_dir)
    ratios: list[float] = []
    own: list[float] = []
    sw_times: list[float] = []
    raw_times: list[float] = []
    loads: list[float] = []
    for i in range(pairs):
        sw_argv = _skillworks_argv(task_dir, tmp / f"{label}-sw-{i}", image_map, ca_bundle, None)
        script = raw_script(image, task_dir, memory_mb, cpus, ca_bundle, tmp / f"{label}-raw-{i}")
        pair = [("skillworks", lambda a=sw_argv: run_skillworks(a)), ("raw", lambda s=script: run_raw(s))]
        if i % 2:
            pair.reverse()
        times: dict[str, float] = {}
        for name, fn in pair:
            loads.append(os.getloadavg()[0])
            times[name] = fn()
        sw_times.append(times["skillworks"])
        raw_times.append(times["raw"])
        ratios.append(times["skillworks"] / times["raw"])
        own.append(times["skillworks"] - times["raw"])
        print(
            f"  pair {i + 1} ({' then '.join(n for n, _ in pair)}): skillworks {times['skillworks']:6.2f} s, "
            f"raw {times['raw']:6.2f} s, ratio {ratios[-1]:.2f}x ({load()})",
            flush=True,
        )
    print(f"{label}: lake-warming-attribution, one oracle trial, {pairs} interleaved pairs, median (min-max)")
    print(f"  skillworks run (whole command): {_spread(sw_times)} s")
    print(f"  raw podman script:              {_spread(raw_times)} s")
    print(f"  own overhead (skillworks - raw): {_spread(own)} s")
    print(f"  ratio: {_spread(ratios)}x  (goal <= 1.15x; 1-min load {min(loads):.1f}-{max(loads):.1f})")


def _prewarmed_task(tmp: Path) -> Path:
    """A copy of the task whose image already holds the verifier's pytest (labelled variant: the
    verifier's `pip install` finds everything installed and fetches nothing)."""
    copy = tmp / "prewarmed" / TASK.name
    shutil.copytree(TASK, copy, symlinks=False)
    test_sh = (TASK / "tests" / "test.sh").read_text()
    pins = next(line for line in test_sh.splitlines() if line.startswith("pip3 install"))
    dockerfile = copy / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + f"\nRUN {pins}\n")
    return copy


def _shared_task(tmp: Path) -> Path:
    """A copy of the task verified the old way, in the agent's own container (`verifier.isolation =
    "shared"`): the difference to the task as written is the cost of the fresh verifier container."""
    copy = tmp / "shared" / TASK.name
    shutil.copytree(TASK, copy, symlinks=False)
    toml = copy / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\n", '[verifier]\nisolation = "shared"\n', 1))
    return copy


def _compile_bytecode() -> None:
    """Bytecode caches for skillworks' own modules, as an installed package has them."""
    import compileall

    import skillworks

    package = Path(skillworks.__file__).parent
    started = time.perf_counter()
    compileall.compile_dir(package, quiet=1)
    print(
        f"bytecode caches of {package} present (compileall, {time.perf_counter() - started:.2f} s; "
        f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})"
    )


def _import_time() -> float:
    """Seconds to start Python and import what `skillworks run` imports (a run's own start-up floor)."""
    code = (
        "import skillworks.cli.main, rich.console, skillworks.experiment, skillworks.report, "
        "skillworks.report.headline, skillworks.tasks, skillworks.sandbox.container"
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="interleaved untraced pairs (headline)")
    parser.add_argument("--traced", type=int, default=3, help="traced pairs (calls, phases, own overhead)")
    parser.add_argument("--prewarmed", action="store_true", help="also the variant whose image holds pytest")
    parser.add_argument(
        "--shared", action="store_true", help="also the variant verified in the agent's container (old mode)"
    )
    parser.add_argument("--no-compile", action="store_true", help="leave skillworks' bytecode caches as found")
    parser.add_argument("--image-map", action="append", default=None)
    parser.add_argument("--ca-bundle", default=os.environ.get("SSL_CERT_FILE"))
    parser.add_argument("--list-calls", action="store_true", help="list the runtime calls of the traced run")
    args = parser.parse_args()
    image_map = args.image_map if args.image_map is not None else ["ubuntu:24.04=localhost/skillworks-base"]
    if shutil.which("podman") is None:
        print("skipped: podman is not installed")
        return
    if not TASK.is_dir():
        print(f"skipped: {TASK} is absent")
        return
    print(f"machine: {os.cpu_count()} CPUs, {load()} at start")
    if not args.no_compile:
        _compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="sw-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tasks = [("task as written", TASK)]
        if args.prewarmed:
            tasks.append(("prewarmed variant (image holds the verifier's pytest)", _prewarmed_task(tmp)))
        if args.shared:
            tasks.append(("shared-verifier variant (verifier.isolation = shared)", _shared_task(tmp)))
        for label, task_dir in tasks:
            print(f"warm-up run of the {label} (builds the image when missing) ...", flush=True)
            run_skillworks(_skillworks_argv(task_dir, tmp / f"warm-{len(label)}", image_map, args.ca_bundle, None))
            image, memory_mb, cpus = _image_tag(image_map, task_dir)
            run_raw(raw_script(image, task_dir, memory_mb, cpus, args.ca_bundle, tmp / f"warm-raw-{len(label)}"))
        if args.traced:
            _traced_runs(TASK, image_map, args.ca_bundle, tmp, args.traced, args.list_calls)
            imports = [_import_time() for _ in range(3)]
            print(f"python start-up + imports of `skillworks run`: {_spread(imports)} s ({load()})")
        for label, task_dir in tasks:
            _pairs(label, task_dir, image_map, args.ca_bundle, tmp, args.pairs)


if __name__ == "__main__":
    main()
