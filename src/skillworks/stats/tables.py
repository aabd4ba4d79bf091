"""Per-group tables over a set of trial results: outcomes, failure modes, phase times, skill
invocation and token/cost accounting. Each function takes the results of one group (for instance one
condition x agent cell) and returns a small frozen dataclass; grouping is the caller's business."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillworks.results import TrialResult, Usage
from skillworks.stats.rates import is_scored


@dataclass(frozen=True)
class OutcomeCounts:
    solved: int
    partial: int
    failed: int
    error: int
    missing: int
    """planned trials with no result (0 when the plan is unknown)"""


def outcome_counts(results: Sequence[TrialResult], planned: int | None = None) -> OutcomeCounts:
    """Outcome distribution; ``missing = planned − recorded`` when ``planned`` is given."""
    c = Counter(r.outcome for r in results)
    return OutcomeCounts(
        solved=c["solved"],
        partial=c["partial"],
        failed=c["failed"],
        error=c["error"],
        missing=max(0, planned - len(results)) if planned is not None else 0,
    )


@dataclass(frozen=True)
class FailureModeCounts:
    timeout: int
    execution_error: int
    no_output: int
    verification_failed: int
    unclassified: int
    """trials with outcome failed/partial/error but no failure mode recorded"""
    token_budget: int = 0
    """trials that used more tokens than their budget (--max-trial-tokens)"""


def failure_mode_counts(results: Sequence[TrialResult]) -> FailureModeCounts:
    c = Counter(r.failure_mode for r in results)
    unclassified = sum(1 for r in results if r.failure_mode is None and r.outcome != "solved")
    return FailureModeCounts(
        timeout=c["timeout"],
        execution_error=c["execution_error"],
        no_output=c["no_output"],
        verification_failed=c["verification_failed"],
        unclassified=unclassified,
        token_budget=c["token_budget"],
    )


@dataclass(frozen=True)
class PhaseTimes:
    """Mean seconds per phase over the recorded trials (None when there are none)."""

    n: int
    setup_sec: float | None
    agent_sec: float | None
    verify_sec: float | None
    total_sec: float | None
    total_sec_sum: float


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def phase_times(results: Sequence[TrialResult]) -> PhaseTimes:
    return PhaseTimes(
        n=len(results),
        setup_sec=_mean([r.timings.setup_sec for r in results]),
        agent_sec=_mean([r.timings.agent_sec for r in results]),
        verify_sec=_mean([r.timings.verify_sec for r in results]),
        total_sec=_mean([r.timings.total_sec for r in results]),
        total_sec_sum=float(sum(r.timings.total_sec for r in results)),
    )


@dataclass(frozen=True)
class Resolution:
    """How trials of one subgroup resolved: mean reward and share solved, over scored trials."""

    n: int
    mean_reward: float | None
    solved_rate: float | None


def _resolution(results: Sequence[TrialResult]) -> Resolution:
    rewards = [float(r.reward) for r in results if r.reward is not None]
    return Resolution(
        n=len(results),
        mean_reward=_mean(rewards),
        solved_rate=(sum(1 for r in results if r.outcome == "solved") / len(results)) if results else None,
    )


@dataclass(frozen=True)
class SkillInvocation:
    """Skill Invocation Rate (SkillsBench): the share of trials whose agent invoked at least one skill,
    and how trials resolved with and without an invocation.

    Computed over *scored* trials: an errored trial's skill-use record is incomplete (the agent may
    never have run), so errored trials are left out and counted in ``errored_excluded``.
    """

    trials: int
    invoked_trials: int
    rate: float | None
    invoked: Resolution
    not_invoked: Resolution
    errored_excluded: int
    skills: dict[str, int] = field(default_factory=dict)
    """how many trials invoked each skill"""
    failed_load_trials: int = 0
    """trials (errored ones included) where a load of a skill failed: not counted as an invocation"""
    failed_skills: dict[str, int] = field(default_factory=dict)
    """how many trials failed to load each skill"""
    harness_provided: dict[str, int] = field(default_factory=dict)
    """how many trials' harness showed the agent each of its own (bundled, not staged) skills"""
    staged_trials: int = 0
    """scored trials whose condition staged at least one skill"""
    bypass_trials: int = 0
    """silent bypass: scored trials whose condition staged skills of which the agent loaded none"""
    bypass_rate: float | None = None
    """bypass_trials / staged_trials (None without a staged trial)"""


def skill_invocation(results: Sequence[TrialResult]) -> SkillInvocation:
    scored = [r for r in results if is_scored(r)]
    with_skill = [r for r in scored if r.skill_use.invoked]
    without = [r for r in scored if not r.skill_use.invoked]
    per_skill: Counter[str] = Counter()
    for r in with_skill:
        per_skill.update(set(r.skill_use.invoked))
    staged = [r for r in scored if r.skills_staged]
    bypassed = [r for r in staged if not r.skill_use.invoked]
    return SkillInvocation(
        trials=len(scored),
        invoked_trials=len(with_skill),
        rate=len(with_skill) / len(scored) if scored else None,
        invoked=_resolution(with_skill),
        not_invoked=_resolution(without),
        errored_excluded=len(results) - len(scored),
        skills=dict(sorted(per_skill.items())),
        failed_load_trials=sum(1 for r in results if r.skill_use.failed),
        failed_skills=dict(sorted(Counter(n for r in results for n in set(r.skill_use.failed)).items())),
        harness_provided=dict(sorted(Counter(n for r in results for n in set(r.skill_use.harness_provided)).items())),
        staged_trials=len(staged),
        bypass_trials=len(bypassed),
        bypass_rate=len(bypassed) / len(staged) if staged else None,
    )


@dataclass(frozen=True)
class UsageTotals:
    """Token, cost and call accounting of a group; means are per recorded trial."""

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
    usage_sources: dict[str, int] = field(default_factory=dict)
    cost_sources: dict[str, int] = field(default_factory=dict)
    providers: dict[str, int] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    cost_unknown: int = 0
    """trials whose cost is not known (see :func:`cost_is_known`): cost_usd leaves them out"""


def cost_is_known(result: TrialResult) -> bool:
    """False when a trial talked to a priced provider but no price was found: no cost source (or "none")
    and a provider that is not the scripted test double. A trial without a provider (oracle, nop) cost 0."""
    return usage_cost_known(result.usage, result.provider)


def usage_cost_known(usage: Usage, provider: str | None) -> bool:
    """:func:`cost_is_known` for one usage record (a trial's, or its creator session's) of a provider."""
    if usage.cost_source not in (None, "none"):
        return True
    return provider in (None, "scripted")


def trial_cost_text(result: TrialResult, digits: int = 4) -> str:
    """One trial's cost, ``$0.1234``, or ``unknown`` (see :func:`cost_is_known`): never a made-up $0."""
    return f"${result.usage.cost_usd:.{digits}f}" if cost_is_known(result) else "unknown"


def cost_text(cost_usd: float, unknown: int, trials: int, digits: int = 4) -> str:
    """``0.1234``; ``unknown`` when no trial's cost is known; ``0.1234 + unknown (k trials)`` when some are."""
    if unknown and unknown >= trials:
        return "unknown"
    text = f"{cost_usd:.{digits}f}"
    return f"{text} + unknown ({unknown} trial{'s' if unknown != 1 else ''})" if unknown else text


def usage_totals(results: Sequence[TrialResult]) -> UsageTotals:
    n = len(results)
    inp = sum(r.usage.input_tokens for r in results)
    out = sum(r.usage.output_tokens for r in results)
    cached = sum(r.usage.cached_tokens for r in results)
    cost = float(sum(r.usage.cost_usd for r in results))
    calls = sum(r.usage.calls for r in results)

    def mean(total: float) -> float | None:
        return total / n if n else None

    def counts(values: list[str]) -> dict[str, int]:
        return dict(sorted(Counter(values).items()))

    return UsageTotals(
        trials=n,
        input_tokens=inp,
        output_tokens=out,
        cached_tokens=cached,
        cost_usd=cost,
        calls=calls,
        input_tokens_mean=mean(inp),
        output_tokens_mean=mean(out),
        cached_tokens_mean=mean(cached),
        cost_usd_mean=mean(cost),
        calls_mean=mean(calls),
        usage_sources=counts([r.usage.source for r in results]),
        cost_sources=counts([r.usage.cost_source or "none" for r in results]),
        providers=counts([r.provider or "unknown" for r in results]),
        models=counts([r.model or "unknown" for r in results]),
        cost_unknown=sum(1 for r in results if not cost_is_known(r)),
    )
