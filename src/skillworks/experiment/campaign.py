"""Unattended campaigns: what a long run may do on its own.

- Retry of errored trials (`--retry-errors`): a trial whose latest attempt is an error (of the named
  categories, or any) runs again; the earlier attempt's trial dir is kept, renamed `<trial id>__a<attempt>`,
  and the new result (attempt + 1) supersedes it in the fixed frame (`stats.latest_attempts`).
- A circuit breaker: N consecutive errors of one category stop the run (what runs is cancelled, nothing
  new starts); the run is resumable.
- Spend caps (`--max-cost`, `--max-tokens`): a *pair* (every condition of one task x agent x trial index)
  starts only when the spend so far, what running trials may still spend, and the pair itself stay within
  the cap; once a pair is refused no new pair starts. Refused pairs are recorded as not run in
  `campaign.json` and left out of the frame (both conditions together), so the comparison stays paired.

A stop (breaker or cap) is `RunOutcome.stopped`, one line; the CLI exits 3 on it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillworks.errors import UserError
from skillworks.experiment.plan import TrialSpec
from skillworks.results import TrialResult

CAMPAIGN_FILE = "campaign.json"
DEFAULT_MAX_CONSECUTIVE_ERRORS = 10

PairKey = tuple[str, str, int]  # task id, agent label, trial index


@dataclass(frozen=True)
class CampaignLimits:
    """What a session of a run may do unattended. ``retry_errors``: None runs no errored trial again; an
    empty set retries every error category. ``max_consecutive_errors`` 0 turns the breaker off."""

    retry_errors: frozenset[str] | None = None
    max_consecutive_errors: int = DEFAULT_MAX_CONSECUTIVE_ERRORS
    max_cost_usd: float | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.max_consecutive_errors < 0:
            raise UserError("--max-consecutive-errors must be 0 (off) or more")
        if self.max_cost_usd is not None and not self.max_cost_usd >= 0:
            raise UserError(f"--max-cost must be a number of USD >= 0, got {self.max_cost_usd}")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise UserError(f"--max-tokens must be >= 0, got {self.max_tokens}")


def pair_key(task_id: str, agent: str, trial_index: int) -> PairKey:
    return (task_id, agent, trial_index)


def attempt_dir_name(trial_id: str, attempt: int) -> str:
    """Where an attempt superseded by a retry keeps its files, beside the trial's own dir."""
    return f"{trial_id}__a{attempt}"


def spent_tokens(result: TrialResult) -> int:
    return result.usage.input_tokens + result.usage.output_tokens


def select_retries(results: Iterable[TrialResult], categories: frozenset[str] | None) -> dict[str, int]:
    """Trial id -> attempt number of its latest attempt, for each trial whose latest attempt errored in
    one of ``categories`` (all when empty; none when None)."""
    if categories is None:
        return {}
    from skillworks.stats.rates import latest_attempts

    out: dict[str, int] = {}
    for r in latest_attempts(results):
        if r.outcome != "error":
            continue
        category = r.error.category if r.error is not None else "no_reward"
        if not categories or category in categories:
            out[r.trial_id] = r.attempt
    return out


def set_aside_attempt(trials_dir: Path, trial_id: str, attempt: int) -> None:
    """Rename the trial dir of the attempt a retry supersedes (kept, never deleted)."""
    path = trials_dir / trial_id
    if not path.exists():
        return
    dest = trials_dir / attempt_dir_name(trial_id, attempt)
    n = 1
    while dest.exists():  # an earlier set-aside of the same number (a retry interrupted before it recorded)
        dest = trials_dir / f"{attempt_dir_name(trial_id, attempt)}.{n}"
        n += 1
    path.rename(dest)


def pair_order(todo: list[TrialSpec]) -> list[TrialSpec]:
    """The trials grouped by pair, pairs in the order they first appear: a pair's conditions run together."""
    groups: dict[PairKey, list[TrialSpec]] = {}
    for spec in todo:
        groups.setdefault(pair_key(spec.task.id, spec.agent.label, spec.trial_index), []).append(spec)
    return [s for group in groups.values() for s in group]


@dataclass
class CampaignGate:
    """Decides, as each trial is about to start, whether it may; and, as each trial ends, whether the run
    must stop. One per session of a run (driver side, single event loop: no locks needed)."""

    limits: CampaignLimits
    pair_sizes: dict[PairKey, int]
    spent_cost: float = 0.0
    spent_tokens: int = 0
    est_cost: float = 0.0  # the dearest trial so far: what a trial may spend
    est_tokens: int = 0
    stopped: str | None = None
    breaker_tripped: bool = False
    admitted: set[PairKey] = field(default_factory=set)
    refused: set[PairKey] = field(default_factory=set)
    committed: int = 0  # trials of admitted pairs not finished yet
    _streak_category: str | None = None
    _streak: int = 0

    @classmethod
    def for_session(cls, limits: CampaignLimits, todo: list[TrialSpec], recorded: list[TrialResult]) -> CampaignGate:
        sizes: dict[PairKey, int] = {}
        for spec in todo:
            key = pair_key(spec.task.id, spec.agent.label, spec.trial_index)
            sizes[key] = sizes.get(key, 0) + 1
        gate = cls(limits=limits, pair_sizes=sizes)
        for r in recorded:  # every attempt ever recorded counts toward the run's spend
            gate._spend(r)
        return gate

    def _spend(self, result: TrialResult) -> None:
        self.spent_cost += result.usage.cost_usd
        self.spent_tokens += spent_tokens(result)
        self.est_cost = max(self.est_cost, result.usage.cost_usd)
        self.est_tokens = max(self.est_tokens, spent_tokens(result))

    def admit(self, spec: TrialSpec) -> bool:
        key = pair_key(spec.task.id, spec.agent.label, spec.trial_index)
        if self.breaker_tripped:  # what the breaker kept from running is missing (resumable), not excluded
            return False
        if key in self.admitted:
            return True
        if self.stopped is not None or key in self.refused:
            self.refused.add(key)
            return False
        n = self.pair_sizes.get(key, 1)
        after = self.committed + n
        cap = self.limits
        if cap.max_cost_usd is not None and self.spent_cost + after * self.est_cost > cap.max_cost_usd:
            self.stopped = (
                f"spend cap reached: ${self.spent_cost:.4f} spent, the next pair may cost "
                f"${n * self.est_cost:.4f} more (--max-cost {cap.max_cost_usd:g})"
            )
        elif cap.max_cost_usd is not None and self.spent_cost >= cap.max_cost_usd:
            self.stopped = f"spend cap reached: ${self.spent_cost:.4f} spent (--max-cost {cap.max_cost_usd:g})"
        elif cap.max_tokens is not None and (
            self.spent_tokens + after * self.est_tokens > cap.max_tokens or self.spent_tokens >= cap.max_tokens
        ):
            self.stopped = (
                f"token cap reached: {self.spent_tokens} tokens used, the next pair may use "
                f"{n * self.est_tokens} more (--max-tokens {cap.max_tokens})"
            )
        if self.stopped is not None:
            self.refused.add(key)
            return False
        self.admitted.add(key)
        self.committed += n
        return True

    def finished(self, result: TrialResult) -> bool:
        """Account for a finished trial; True when the circuit breaker trips on it."""
        self.committed -= 1
        self._spend(result)
        if result.outcome != "error":
            self._streak_category, self._streak = None, 0
            return False
        category = result.error.category if result.error is not None else "no_reward"
        if category == self._streak_category:
            self._streak += 1
        else:
            self._streak_category, self._streak = category, 1
        limit = self.limits.max_consecutive_errors
        if limit and self._streak >= limit and not self.breaker_tripped:
            self.breaker_tripped = True
            message = result.error.message if result.error is not None else "no reward"
            message = " ".join(message.split())[:160]
            self.stopped = (
                f"circuit breaker: {self._streak} consecutive '{category}' errors (last: {message}); "
                f"resume with --retry-errors={category}"
            )
            return True
        return False


def not_run_trials(todo: list[TrialSpec], gate: CampaignGate, recorded_now: set[str]) -> list[TrialSpec]:
    """Trials of the pairs a cap refused that have no result of this session."""
    return [
        s
        for s in todo
        if pair_key(s.task.id, s.agent.label, s.trial_index) in gate.refused and s.trial_id not in recorded_now
    ]


def write_campaign(run_dir: Path, *, stopped: str | None, not_run: list[TrialSpec], retried: int) -> None:
    """`campaign.json`: how the last session of the run ended. Rewritten by every session."""
    rows = [
        {"trial_id": s.trial_id, "task_id": s.task.id, "condition": s.condition, "agent": s.agent.label}
        | {"trial_index": s.trial_index}
        for s in not_run
    ]
    data: dict[str, Any] = {"stopped": stopped, "not_run": rows, "retried": retried}
    tmp = run_dir / f"{CAMPAIGN_FILE}.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, run_dir / CAMPAIGN_FILE)


@dataclass(frozen=True)
class NotRun:
    trial_id: str
    task_id: str
    condition: str
    agent: str
    trial_index: int

    @property
    def pair(self) -> PairKey:
        return pair_key(self.task_id, self.agent, self.trial_index)


@dataclass(frozen=True)
class CampaignRecord:
    stopped: str | None = None
    not_run: list[NotRun] = field(default_factory=list)
    retried: int = 0


def read_campaign(run_dir: Path) -> CampaignRecord:
    """The last session's record (none for a run that never had one). A bad file is a UserError."""
    path = run_dir / CAMPAIGN_FILE
    if not path.is_file():
        return CampaignRecord()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"not valid JSON: {exc}", path) from None
    if not isinstance(data, dict):
        data = {"retried": None}
    stopped, not_run, retried = (data.get(k) for k in ("stopped", "not_run", "retried"))
    rows: list[NotRun] = []
    for row in not_run if isinstance(not_run, list) else [None]:
        try:
            assert isinstance(row, dict) and isinstance(row["trial_index"], int)
            rows.append(NotRun(**{k: row[k] for k in ("trial_id", "task_id", "condition", "agent", "trial_index")}))
        except (AssertionError, KeyError, TypeError):
            rows = []
            stopped = 0  # reported below
            break
    if not (stopped is None or isinstance(stopped, str)) or not isinstance(retried, int):
        raise UserError(
            "expected {stopped: str|null, not_run: [{trial_id, task_id, condition, agent, trial_index}], retried: int}",
            path,
        )
    return CampaignRecord(stopped=stopped, not_run=rows, retried=retried)
