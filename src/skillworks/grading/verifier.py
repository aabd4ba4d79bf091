"""Runs a task's verifier after the agent and reads its reward.

The verifier's files reach the sandbox only here, after the agent has finished. The reward comes from
`/logs/verifier/reward.json` (named values) else `/logs/verifier/reward.txt` (one float), read as
`reward_files` says (no links followed, special and oversized files refused as the agent's failure). A
missing or garbled reward is a VerifierError, never a 0."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skillworks.errors import VerifierError
from skillworks.grading.ctrf import find_ctrf, read_ctrf
from skillworks.grading.reward_files import REWARD_FILE_NAMES, RewardFileRefused, read_reward
from skillworks.results import TestResult
from skillworks.sandbox.base import ExecRequest, ExecResult, Sandbox
from skillworks.tasks.model import Task

VERIFIER_LOG_DIR = "/logs/verifier"
# the verifier's own HOME, emptied before it runs (never the agent's: no planted usercustomize.py,
# .pythonrc, pip.conf or .bashrc of the agent reaches it)
VERIFIER_HOME = "/logs/verifier-home"
# the verifier's user: root of the sandbox (real tasks' verifiers install their test tools with pip/apt).
# In a container whose image user is not root, that is another user than the agent's, and the reset
# dirs belong to it; in the local sandbox it is uid 0 of the verifier's own user namespace (the same
# host user as the agent's: there the pid namespace, not the uid, keeps the agent out; README, Security)
VERIFIER_USER = "root"
# the fixed environment every verifier starts with (the task's verifier.env comes on top); the local
# backend also fixes PATH, the container backend keeps the image's declared one (see README, Security)
VERIFIER_ENV = {"HOME": VERIFIER_HOME, "PYTHONNOUSERSITE": "1"}


@dataclass
class VerifierResult:
    reward: float
    rewards: dict[str, float]
    tests: list[TestResult] = field(default_factory=list)
    exit_code: int = 0
    duration_sec: float = 0.0


def verifier_dirs(task: Task) -> list[str]:
    """The dirs that must start empty for the task's verifier: its logs, its HOME, its mount point."""
    if task.verifier is None:
        return []
    return [VERIFIER_LOG_DIR, VERIFIER_HOME, task.verifier.mount]


def verifier_exec(task: Task, out_dir: Path) -> ExecRequest:
    """How the verifier runs: from its own directory (never the workspace: a csv.py there would shadow
    the stdlib), with the fixed environment, as VERIFIER_USER, its stdout streamed to `out_dir`."""
    verifier = task.verifier
    if verifier is None:
        raise VerifierError(f"task {task.id} has no verifier")
    out_dir.mkdir(parents=True, exist_ok=True)
    return ExecRequest(
        cmd=f"bash {verifier.mount}/{verifier.entrypoint}",
        cwd=verifier.mount,
        env={**VERIFIER_ENV, **verifier.env},
        user=VERIFIER_USER,
        timeout=verifier.timeout_sec,
        stdout_path=out_dir / "stdout.txt",
    )


async def run_verifier(
    task: Task,
    sandbox: Sandbox,
    out_dir: Path,
    *,
    reset: bool = True,
    uploaded: bool = False,
    result: ExecResult | None = None,
) -> VerifierResult:
    """Upload the verifier, run it from its own directory with a fixed environment, download its logs
    to `out_dir`, read the reward. The caller has ended the agent phase (no agent process runs);
    `reset=False` when it also emptied `verifier_dirs(task)` then (``end_agent_phase(reset=...)``),
    `uploaded=True` when that also put the verifier's files in place (``AgentPhaseEnd.uploaded``),
    `result` when it also ran the verifier (``end_agent_phase(then=verifier_exec(...))``)."""
    verifier = task.verifier
    request = verifier_exec(task, out_dir)
    assert verifier is not None
    # The agent could write anywhere it can reach: a planted reward.json, ctrf.json, a conftest.py at
    # the verifier's mount point or a usercustomize.py in a HOME must not survive into grading. They
    # start empty, whatever the agent did to their permissions (SandboxBroken when impossible).
    if result is None:
        if reset:
            await sandbox.reset_dirs(verifier_dirs(task))
        if not uploaded:
            with verifier.upload_source() as source:  # symlinks (inside the task) followed
                await sandbox.upload(source, verifier.mount)
        result = await sandbox.exec(
            request.cmd,
            cwd=request.cwd,
            env=request.env,
            user=request.user,
            timeout=request.timeout,
            stdout_path=request.stdout_path,
        )
    (out_dir / "stderr.txt").write_text(result.stderr)
    logs = out_dir / "logs"
    try:
        await sandbox.download(VERIFIER_LOG_DIR, logs)
    except FileNotFoundError:  # no reward: read_reward says so below
        pass
    except OSError as exc:  # e.g. a FIFO among the logs: refused when it is a reward file, else ours
        await _refuse_undownloaded_reward(sandbox)
        raise VerifierError(f"the verifier's logs could not be downloaded: {type(exc).__name__}") from None
    if result.timed_out:
        raise VerifierError(f"the verifier timed out after {verifier.timeout_sec:g}s")
    try:
        reward, rewards = read_reward(logs)
    except RewardFileRefused:
        raise
    except VerifierError as exc:
        if not any((logs / name).exists() or (logs / name).is_symlink() for name in REWARD_FILE_NAMES):
            await _refuse_undownloaded_reward(sandbox)
        raise VerifierError(f"{exc} (verifier exit code {result.exit_code}; see verifier/stderr.txt)") from None
    report = find_ctrf(logs)
    tests = read_ctrf(report) if report is not None else []
    return VerifierResult(
        reward=reward, rewards=rewards, tests=tests, exit_code=result.exit_code, duration_sec=result.duration_sec
    )


async def _refuse_undownloaded_reward(sandbox: Sandbox) -> None:
    """No reward file arrived: when the sandbox holds one the download left out or failed on (a link,
    a FIFO, a device: downloads never follow or read those), that is a refused reward file."""
    paths = " ".join(f"{VERIFIER_LOG_DIR}/{name}" for name in REWARD_FILE_NAMES)
    odd = '[ -L "$p" ] || { [ -e "$p" ] && [ ! -f "$p" ]; }'
    probe = f'for p in {paths}; do if {odd}; then echo "${{p##*/}}"; fi; done'
    found = await sandbox.exec(probe, user=VERIFIER_USER, timeout=30)
    names = [line for line in found.stdout.split() if line in REWARD_FILE_NAMES]
    if found.ok and names:
        raise RewardFileRefused(f"{names[0]} is not a regular file the download could copy (a link or a special file)")
