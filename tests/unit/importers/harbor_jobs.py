"""Write Harbor job directories in Harbor's on-disk format (job config.json, one dir per trial with result.json,
config.json, agent/trajectory.json, verifier/ files), as `harbor run` leaves them. Hand-built from Harbor's
documented models (TrialResult, AgentInfo, AgentContext, VerifierResult, ExceptionInfo, TimingInfo)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
AGENT = "claude-code"
MODEL = "anthropic/claude-haiku-4-5"
LABEL = "claude-code-claude-haiku-4-5"  # skillworks' label for (claude-code, anthropic/claude-haiku-4-5)


def iso(t: datetime) -> str:
    return t.isoformat()


@dataclass
class HarborTrial:
    task: str
    reward: float | None  # None: no verifier result
    k: int = 0  # order of start within the task
    exception: tuple[str, str] | None = None  # (type, message)
    exception_at: str = "agent"  # setup | agent | verify: when the exception happened
    trajectory: dict[str, Any] | None = None
    tokens: tuple[int, int, int] | None = (1000, 200, 50)  # agent_result n_input / n_output / n_cache
    cost: float | None = 0.01
    rewards: dict[str, float] | None = None  # instead of {"reward": reward}


def write_job(root: Path, name: str, trials: list[HarborTrial], *, n_attempts: int = 3) -> Path:
    job = root / name
    job.mkdir(parents=True)
    (job / "config.json").write_text(
        json.dumps(
            {
                "job_name": name,
                "jobs_dir": str(root),
                "n_attempts": n_attempts,
                "timeout_multiplier": 1.0,
                "orchestrator": {"type": "local", "n_concurrent_trials": 4, "quiet": False, "kwargs": {}},
                "environment": {"type": "docker", "force_build": False, "delete": True, "kwargs": {}},
                "verifier": {"override_timeout_sec": None, "disable": False},
                "agents": [{"name": AGENT, "model_name": MODEL, "kwargs": {}}],
                "datasets": [{"path": "tasks"}],
            },
            indent=2,
        )
    )
    for i, t in enumerate(trials):
        write_trial(job, t, suffix=f"{i:03d}{name[:3]}x")
    (job / "result.json").write_text(json.dumps({"id": "0b9c", "n_total_trials": len(trials), "stats": {}}))
    return job


def write_trial(job: Path, t: HarborTrial, *, suffix: str) -> Path:
    trial_name = f"{t.task}__{suffix}"
    d = job / trial_name
    (d / "agent").mkdir(parents=True)
    (d / "verifier").mkdir()
    start = T0 + timedelta(minutes=t.k)
    env_end = start + timedelta(seconds=0.5)
    agent_start = env_end + timedelta(seconds=0.5)
    agent_end = agent_start + timedelta(seconds=10)
    verify_end = agent_end + timedelta(seconds=2)
    result: dict[str, Any] = {
        "id": f"7e1d2c3b-0000-4000-8000-{abs(hash(trial_name)) % 10**12:012d}",
        "task_name": t.task,
        "trial_name": trial_name,
        "trial_uri": f"file://{d}",
        "task_id": {"path": f"tasks/{t.task}"},
        "source": "tasks",
        "task_checksum": f"sha256-{t.task}",
        "config": {
            "task": {"path": f"tasks/{t.task}", "git_url": None, "overwrite": False},
            "trials_dir": str(job),
            "agent": {"name": AGENT, "model_name": MODEL, "kwargs": {}},
            "timeout_multiplier": 1.0,
        },
        "agent_info": {
            "name": AGENT,
            "version": "2.1.12",
            "model_info": {"name": MODEL.split("/", 1)[1], "provider": "anthropic"},
        },
        "agent_result": None,
        "verifier_result": None,
        "exception_info": None,
        "started_at": iso(start),
        "finished_at": iso(verify_end),
        "environment_setup": {"started_at": iso(start), "finished_at": iso(env_end)},
        "agent_setup": {"started_at": iso(env_end), "finished_at": iso(agent_start)},
        "agent_execution": None,
        "verifier": None,
    }
    setup_failed = t.exception is not None and t.exception_at == "setup"
    if setup_failed:
        result["finished_at"] = iso(start + timedelta(seconds=5))
        result["environment_setup"] = {"started_at": iso(start), "finished_at": iso(start + timedelta(seconds=5))}
        result["agent_setup"] = None
    else:
        result["agent_execution"] = {"started_at": iso(agent_start), "finished_at": iso(agent_end)}
        if t.tokens is not None:
            n_in, n_out, n_cache = t.tokens
            result["agent_result"] = {
                "n_input_tokens": n_in,
                "n_cache_tokens": n_cache,
                "n_output_tokens": n_out,
                "cost_usd": t.cost,
                "rollout_details": None,
                "metadata": None,
            }
    graded = t.reward is not None or t.rewards is not None
    if graded:
        result["verifier"] = {"started_at": iso(agent_end), "finished_at": iso(verify_end)}
        rewards = t.rewards if t.rewards is not None else {"reward": t.reward}
        result["verifier_result"] = {"rewards": rewards}
        (d / "verifier" / "reward.txt").write_text(f"{t.reward}\n")
        (d / "verifier" / "test-stdout.txt").write_text("1 passed\n" if t.reward == 1 else "1 failed\n")
    if t.exception is not None:
        at = {"setup": start + timedelta(seconds=5), "agent": agent_end, "verify": verify_end}[t.exception_at]
        result["exception_info"] = {
            "exception_type": t.exception[0],
            "exception_message": t.exception[1],
            "exception_traceback": f"Traceback (most recent call last):\n  ...\n{t.exception[0]}: {t.exception[1]}",
            "occurred_at": iso(at),
        }
        (d / "exception.txt").write_text(result["exception_info"]["exception_traceback"])
    (d / "result.json").write_text(json.dumps(result, indent=2))
    (d / "config.json").write_text(json.dumps(result["config"], indent=2))
    (d / "trial.log").write_text("trial log\n")
    (d / "agent" / "claude-code.txt").write_text('{"type":"system","subtype":"init"}\n')
    if t.trajectory is not None:
        (d / "agent" / "trajectory.json").write_text(json.dumps(t.trajectory, indent=2))
    return d


def claude_code_trajectory(*, skill_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An ATIF trajectory shaped as Harbor's Claude Code converter writes it: one step per content block of
    an assistant message, each carrying that message's whole usage (two API calls over four agent steps)."""
    call1 = {"prompt_tokens": 1200, "completion_tokens": 90, "cached_tokens": 1000}
    call2 = {"prompt_tokens": 1500, "completion_tokens": 40, "cached_tokens": 1200}
    calls = skill_calls or [
        {"tool_call_id": "toolu_01", "function_name": "Bash", "arguments": {"command": "ls /app"}},
    ]
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": "Summarize data.csv into report.md."},
        {
            "step_id": 2,
            "source": "agent",
            "message": "Let me look.",
            "metrics": call1,
            "model_name": "claude-haiku-4-5",
        },
    ]
    for call in calls:
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "agent",
                "message": f"Executed {call['function_name']} {call['tool_call_id']}",
                "tool_calls": [call],
                "observation": {"results": [{"source_call_id": call["tool_call_id"], "content": "ok"}]},
                "metrics": call1,
                "model_name": "claude-haiku-4-5",
            }
        )
    steps.append({"step_id": len(steps) + 1, "source": "agent", "message": "Done.", "metrics": call2})
    steps.append({"step_id": len(steps) + 1, "source": "agent", "message": "", "metrics": call2})
    n = len(steps)
    return {
        "schema_version": "ATIF-v1.2",
        "session_id": "0c5e4b1a-2f3d-4e5f-9a8b-7c6d5e4f3a2b",
        "agent": {"name": "claude-code", "version": "2.1.12", "model_name": "claude-haiku-4-5"},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": 1200 * (1 + len(calls)) + 1500 * 2,
            "total_completion_tokens": 90 * (1 + len(calls)) + 40 * 2,
            "total_cached_tokens": 1000 * (1 + len(calls)) + 1200 * 2,
            "total_steps": n,
        },
    }
