"""The parts of Harbor's job and trial files that an import reads (`harbor.models.trial.result.TrialResult`,
`harbor.models.job.config.JobConfig`, as Harbor writes them to `result.json` / `config.json`).

Harbor adds fields from release to release, so these models keep unknown keys (`extra="allow"`) and make
everything optional except what identifies a trial (`task_name`, `trial_name`).

Job directory layout: `<job>/config.json` (the job config), `<job>/result.json` (job totals), one directory
per trial `<job>/<trial_name>/` holding `config.json`, `result.json`, `agent/` (the agent's logs and
`trajectory.json`, ATIF), `verifier/` (`reward.txt` | `reward.json`, `test-stdout.txt`, `ctrf.json`),
`exception.txt` and `trial.log`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class TimingInfo(_Lenient):
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def seconds(self) -> float:
        if self.started_at is None or self.finished_at is None:
            return 0.0
        return max(0.0, (self.finished_at - self.started_at).total_seconds())


class ExceptionInfo(_Lenient):
    exception_type: str = ""
    exception_message: str = ""
    exception_traceback: str = ""
    occurred_at: datetime | None = None


class ModelInfo(_Lenient):
    name: str | None = None
    provider: str | None = None


class AgentInfo(_Lenient):
    name: str = "unknown"
    version: str | None = None
    model_info: ModelInfo | None = None


class AgentContext(_Lenient):
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


class VerifierResult(_Lenient):
    rewards: dict[str, float] | None = None


class TrialAgentConfig(_Lenient):
    name: str | None = None
    model_name: str | None = None


class TrialTaskConfig(_Lenient):
    path: str | None = None


class TrialConfig(_Lenient):
    task: TrialTaskConfig | None = None
    agent: TrialAgentConfig | None = None


class HarborTrialResult(_Lenient):
    task_name: str
    trial_name: str
    task_checksum: str | None = None
    source: str | None = None
    config: TrialConfig | None = None
    agent_info: AgentInfo | None = None
    agent_result: AgentContext | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: TimingInfo | None = None
    agent_setup: TimingInfo | None = None
    agent_execution: TimingInfo | None = None
    verifier: TimingInfo | None = None


class JobConfig(_Lenient):
    job_name: str | None = None
    n_attempts: int | None = None
    orchestrator: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None
