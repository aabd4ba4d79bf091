"""Peak memory of this process and every process it starts (scan workers, linters), sampled from /proc.

`ru_maxrss` gives the peak of one process only; a scan with worker processes and linters needs the sum.
Two sums are sampled: resident set size (RSS, counts memory that forked workers share with their parent
once per process, so it over-states) and proportional set size (PSS, shares such pages out: the fair
total). Linux only; elsewhere the figures are None.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip().replace(" ", "_") or "?"
    except OSError:
        return "?"


def _kib(path: str, field: str) -> int:
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class TreeMemory:
    """Samples the memory of this process tree every `interval` seconds while running (a context manager).
    The sampler is a separate process (a thread here would change how the scan starts its workers: it forks
    them only while it is the process's one thread); its own memory is not counted."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.available = Path("/proc/self/smaps_rollup").exists()
        self.peak_rss_kib = self.peak_pss_kib = self.peak_processes = 0
        self.sampler_cpu = 0.0  # CPU seconds of the sampler: subtract from RUSAGE_CHILDREN
        self.at_peak = "-"  # the processes at the PSS peak: name:MiB,...
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> TreeMemory:
        if self.available:
            argv = [sys.executable, __file__, str(os.getpid()), str(self.interval)]
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert self._proc.stdout is not None
            self._proc.stdout.readline()  # "ready": the first sample is taken
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            out, _ = self._proc.communicate("", timeout=60)
            rss, pss, processes, cpu, self.at_peak = out.split()
            self.peak_rss_kib, self.peak_pss_kib, self.peak_processes = int(rss), int(pss), int(processes)
            self.sampler_cpu = float(cpu)

    def summary(self) -> str:
        if not self.available:
            return "process-tree memory: not measurable here (no /proc)"
        return (
            f"peak memory of the process tree ({self.peak_processes} processes at most, sampled every "
            f"{self.interval:g}s): {self.peak_pss_kib / 1024:.0f} MiB PSS (shared pages split), "
            f"{self.peak_rss_kib / 1024:.0f} MiB summed RSS (shared pages counted per process); at the peak, "
            f"PSS MiB per process: {self.at_peak.replace(',', ' ')}"
        )


def _sample_until_stdin_closes(root: int, interval: float) -> None:
    me = os.getpid()
    peak = [0, 0, 0]
    stop = threading.Event()

    at_peak: list[str] = []

    def sample() -> None:
        pids = [p for p in (root, *_descendants(root)) if p != me]
        rss = sum(_kib(f"/proc/{p}/status", "VmRSS:") for p in pids)
        each = [(p, _kib(f"/proc/{p}/smaps_rollup", "Pss:")) for p in pids]
        pss = sum(k for _, k in each)
        if pss > peak[1]:
            at_peak[:] = [f"{_name(p)}:{k // 1024}" for p, k in each]
        peak[:] = [max(peak[0], rss), max(peak[1], pss), max(peak[2], len(pids))]

    def loop() -> None:
        while not stop.wait(interval):
            sample()

    sample()
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    print("ready", flush=True)
    sys.stdin.read()
    stop.set()
    thread.join()
    sample()
    print(*peak, time.process_time(), ",".join(at_peak) or "-")


if __name__ == "__main__":
    _sample_until_stdin_closes(int(sys.argv[1]), float(sys.argv[2]))
