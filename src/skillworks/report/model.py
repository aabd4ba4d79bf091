"""`Summary`: every number of a report, written to ``summary.json`` and read back strictly.

Rates are on [0, 1]; fields ending in ``_pp`` are percentage points. ``agent = None`` in a row means
"all agents of the condition together" (only emitted when a run has more than one agent).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skillworks.report.compiled import CompiledComparison
from skillworks.report.skill_sources import GeneratedPackRow, SourceUsageRow

SUMMARY_SCHEMA_VERSION = 1
SCRIPTED_NOTE = "results produced with the scripted test provider — not a model evaluation"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IntervalOut(_Strict):
    low: float
    high: float


class AgentOut(_Strict):
    name: str = Field(description="the configuration's label, as trial results name it")
    model: str | None = None
    provider: str | None = None
    harness: str | None = Field(default=None, description="the agent (harness) name, e.g. builtin")


class FrameCounts(_Strict):
    planned: int = Field(description="tasks x conditions x agents x trials, over all runs")
    recorded: int = Field(description="planned trials with a result (latest attempt)")
    scored: int = Field(description="recorded trials with a reward and no error")
    errored: int = Field(description="recorded trials without a reward, ungraded ones excepted")
    ungraded: int = Field(default=0, description="trials of tasks without a verifier (eval cases): not errors")
    missing: int = Field(description="planned trials with no result")
    out_of_plan: int = Field(description="results outside the plan (ignored)")
    superseded_attempts: int = Field(description="earlier attempts replaced by a retry")


class BootstrapSettings(_Strict):
    resamples: int
    seed: int
    confidence: float
    method: str = "paired percentile bootstrap over tasks (numpy default_rng)"


class PassRateRow(_Strict):
    condition: str
    agent: str
    n_tasks: int
    planned: int
    recorded: int
    scored: int
    errored: int
    missing: int
    ungraded: int = Field(default=0, description="trials without a verifier (eval cases), not counted as errored")
    rate: float = Field(description="task-macro mean reward, fixed frame (missing/errored = 0)")
    n: int = Field(description="observations for the intervals: tasks x trials (the fixed frame)")
    wald: IntervalOut | None
    wilson: IntervalOut | None
    rate_excluding_errors: float | None
    n_excluding_errors: int = Field(description="scored trials of the tasks that count")
    wald_excluding_errors: IntervalOut | None
    wilson_excluding_errors: IntervalOut | None
    tasks_without_scored: list[str] = Field(description="tasks left out of rate_excluding_errors")
    task_interval: IntervalOut | None = Field(
        default=None,
        description=(
            "clustered Wilson interval over tasks, variance moderated toward the trial noise "
            "(the headline's and PR comment's interval)"
        ),
    )
    task_interval_note: str | None = Field(default=None, description="why there is no task_interval")


class PairedDeltaOut(_Strict):
    n_paired: int
    paired_tasks: list[str]
    unpaired_tasks: list[str]
    delta_pp: float | None
    ci_low_pp: float | None
    ci_high_pp: float | None
    ci_note: str | None = Field(default=None, description="why there is no interval, when there is none")


class DeltaRow(_Strict):
    condition: str
    baseline: str
    agent: str
    with_rate: float
    without_rate: float
    delta_pp: float | None = Field(description="fixed-frame Δ; None when the baseline has no scored trial")
    ci_low_pp: float | None = Field(
        default=None, description="paired interval of the fixed-frame Δ (per-task frame rates), see ci_method"
    )
    ci_high_pp: float | None = None
    ci_method: str | None = Field(default=None, description="how the Δ interval was formed")
    ci_note: str | None = Field(default=None, description="why there is no Δ interval, when there is none")
    g: float | None = Field(description="normalised gain Δ/(1 − without), fixed frame")
    g_note: str | None = None
    g_ci_low: float | None = Field(default=None, description="interval of g over tasks (stats.gain_interval)")
    g_ci_high: float | None = None
    g_ci_note: str | None = Field(default=None, description="why there is no g interval, when there is none")
    # Δ without errored trials is only formed over tasks scored on both sides (DESIGN: paired means paired)
    paired: PairedDeltaOut = Field(
        description="scored-only variant: Δ over tasks scored on both sides (errors left out), bootstrap CI"
    )


class GainSummaryRow(_Strict):
    """The mean row over agent configurations, as SkillsBench reports it."""

    condition: str
    baseline: str
    n_configs: int
    mean_with_rate: float | None = Field(default=None, description="mean over configurations of the rate")
    mean_without_rate: float | None = Field(default=None, description="mean over configurations of the baseline")
    mean_delta_pp: float | None
    mean_g: float | None
    n_g_undefined: int


class TrialLink(_Strict):
    """One trial behind a per-task cell: where its directory is (relative to its run directory)."""

    run_id: str
    trial_id: str
    trial_index: int
    attempt: int
    outcome: str
    reward: float | None
    trial_dir: str


class TaskCell(_Strict):
    condition: str
    agent: str
    rate: float
    rate_excluding_errors: float | None
    planned: int
    scored: int
    errored: int
    missing: int
    trials: list[TrialLink] = Field(default_factory=list, description="latest attempts, by trial index")


class TaskRow(_Strict):
    task_id: str
    cells: list[TaskCell]


class OutcomeRow(_Strict):
    condition: str
    agent: str | None
    solved: int
    partial: int
    failed: int
    error: int
    missing: int


class FailureModeRow(_Strict):
    condition: str
    agent: str | None
    timeout: int
    execution_error: int
    no_output: int
    verification_failed: int
    unclassified: int
    token_budget: int = Field(default=0, description="trials over their token budget (--max-trial-tokens)")


class PhaseTimeRow(_Strict):
    condition: str
    agent: str | None
    n: int
    setup_sec: float | None
    agent_sec: float | None
    verify_sec: float | None
    total_sec: float | None
    total_sec_sum: float


class ResolutionOut(_Strict):
    n: int
    mean_reward: float | None
    solved_rate: float | None


class SkillInvocationRow(_Strict):
    condition: str
    agent: str | None
    trials: int = Field(description="scored trials (errored ones are left out)")
    invoked_trials: int
    rate: float | None
    invoked: ResolutionOut
    not_invoked: ResolutionOut
    errored_excluded: int
    skills: dict[str, int]
    failed_load_trials: int = Field(
        default=0, description="trials (errored included) where a skill load failed; such a load is not an invocation"
    )
    failed_skills: dict[str, int] = Field(default_factory=dict)
    harness_provided: dict[str, int] = Field(
        default_factory=dict, description="skills the harness brought itself (not staged), by trials that listed them"
    )
    staged_trials: int = Field(default=0, description="scored trials whose condition staged at least one skill")
    bypass_trials: int = Field(
        default=0, description="silent bypass: scored trials whose condition staged skills the agent never loaded"
    )
    bypass_rate: float | None = Field(default=None, description="bypass_trials / staged_trials")


class UsageRow(_Strict):
    condition: str
    agent: str | None
    trials: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float
    calls: int
    input_tokens_mean: float | None
    output_tokens_mean: float | None
    cached_tokens_mean: float | None
    cost_usd_mean: float | None
    calls_mean: float | None
    usage_sources: dict[str, int]
    cost_sources: dict[str, int]
    cost_unknown: int = Field(default=0, description="trials with no known price, left out of cost_usd")
    providers: dict[str, int]
    models: dict[str, int]


class ErrorRow(_Strict):
    run_id: str
    trial_id: str
    task_id: str
    condition: str
    agent: str
    trial_index: int
    attempt: int
    superseded: bool = Field(description="a later attempt of the same trial replaced this one")
    phase: str | None
    category: str | None
    message: str


class MissingTrial(_Strict):
    run_id: str
    task_id: str
    condition: str
    agent: str
    trial_index: int


class VerificationRow(_Strict):
    """A trial whose verification needs a second look: verified in the agent's own sandbox (the task's
    `verifier.isolation: shared`), or verified fresh while the agent changed paths that were not copied."""

    task_id: str
    condition: str
    agent: str
    trial_index: int
    isolation: str
    outputs_not_copied: list[str] = Field(default_factory=list)


class CampaignOut(_Strict):
    """Unattended-campaign figures (see `skillworks run --retry-errors / --max-cost / --max-tokens`)."""

    retried: int = Field(description="earlier attempts superseded by a retry (kept, counted in the spend below)")
    not_run: int = Field(description="trials of whole pairs a spend cap kept from running: left out of the frame")
    not_run_trials: list[str] = Field(default_factory=list)
    stopped: list[str] = Field(default_factory=list, description="'<run id>: why its last session stopped early'")
    cost_usd_all_attempts: float = Field(description="spend over every recorded attempt, superseded ones included")
    tokens_all_attempts: int = Field(description="input + output tokens over every recorded attempt")
    cost_usd_superseded: float = Field(description="the part of the spend that superseded attempts used")
    attempts: int = Field(default=0, description="recorded attempts the spend is over")
    cost_unknown_attempts: int = Field(default=0, description="attempts with no known price, left out of the spend")


class Summary(_Strict):
    schema_version: int = SUMMARY_SCHEMA_VERSION
    run_ids: list[str]
    run_dirs: list[str]
    tasks: list[str]
    conditions: list[str]
    agents: list[AgentOut]
    trials_per_task: int = Field(description="planned trials per task and cell, summed over runs")
    experiment_seeds: list[int | None]
    bootstrap: BootstrapSettings
    interval_note: str
    counts: FrameCounts
    providers: dict[str, int] = Field(description="trials per model provider")
    scripted_provider: bool
    notes: list[str]
    warnings: list[str]
    pass_rates: list[PassRateRow]
    deltas: list[DeltaRow]
    gain_summary: list[GainSummaryRow]
    per_task: list[TaskRow]
    outcomes: list[OutcomeRow]
    failure_modes: list[FailureModeRow]
    phase_times: list[PhaseTimeRow]
    skill_invocation: list[SkillInvocationRow]
    usage: list[UsageRow]
    errors: list[ErrorRow]
    missing_trials: list[MissingTrial]
    verification: list[VerificationRow] = Field(
        default_factory=list, description="trials verified in the agent's sandbox (shared) or with outputs not copied"
    )
    fresh_verified: int = Field(default=0, description="trials whose verifier ran in a fresh sandbox")
    skill_source_usage: list[SourceUsageRow] = Field(
        default_factory=list, description="usage of skill-source steps (creator sessions), apart from `usage`"
    )
    generated_packs: list[GeneratedPackRow] = Field(
        default_factory=list, description="every pack a skill source produced, per trial, and what became of it"
    )
    compiled_vs_raw: list[CompiledComparison] = Field(
        default_factory=list, description="raw (curated) vs compiled skills: solve figures, paired deltas, compile cost"
    )
    campaign: CampaignOut | None = Field(
        default=None, description="retries, pairs not run under a spend cap, early stops; None when there were none"
    )
