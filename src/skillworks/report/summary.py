"""`build_summary`: one or several run directories -> `Summary` (every number of the report)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from skillworks.errors import UserError
from skillworks.report.campaign import campaign_section, excluded_pairs
from skillworks.report.compiled import compiled_comparisons
from skillworks.report.loading import AgentConfig, RunData, load_run
from skillworks.report.model import (
    SCRIPTED_NOTE,
    AgentOut,
    BootstrapSettings,
    DeltaRow,
    ErrorRow,
    FailureModeRow,
    FrameCounts,
    GainSummaryRow,
    IntervalOut,
    MissingTrial,
    OutcomeRow,
    PairedDeltaOut,
    PassRateRow,
    PhaseTimeRow,
    ResolutionOut,
    SkillInvocationRow,
    Summary,
    TaskCell,
    TaskRow,
    TrialLink,
    UsageRow,
    VerificationRow,
)
from skillworks.report.skill_sources import generated_pack_rows, source_usage_rows
from skillworks.results import TrialResult
from skillworks.stats import (
    DEFAULT_RESAMPLES,
    Interval,
    MacroRate,
    PairedDelta,
    delta_pp,
    failure_mode_counts,
    gain_interval,
    is_scored,
    latest_attempts,
    mean_of_defined,
    normalised_gain,
    outcome_counts,
    paired_delta,
    phase_times,
    rate_interval_note,
    skill_invocation,
    task_macro_rate,
    task_mean_interval,
    too_few_tasks_note,
    usage_totals,
    wald_interval,
    wilson_interval,
)

BASELINE = "none"


def _task_interval(m: MacroRate, confidence: float) -> dict[str, IntervalOut | str | None]:
    """The pass rate's interval over tasks (``task_mean_interval``), or the reason there is none."""
    sides = {t: v.side() for t, v in m.per_task.items()}
    found = task_mean_interval(sides, confidence=confidence)
    if found is None:
        return {"task_interval": None, "task_interval_note": rate_interval_note(sides) or too_few_tasks_note(m.n_tasks)}
    return {"task_interval": IntervalOut(low=found[0], high=found[1]), "task_interval_note": None}


def _gain_interval(w: MacroRate, wo: MacroRate, confidence: float) -> dict[str, float | str | None]:
    """The g interval fields of a Δ row (fixed frame, as g itself)."""
    found = gain_interval(
        {t: v.side() for t, v in w.per_task.items()},
        {t: v.side() for t, v in wo.per_task.items()},
        confidence=confidence,
    )
    if isinstance(found, str):
        return {"g_ci_low": None, "g_ci_high": None, "g_ci_note": found}
    return {"g_ci_low": found[0], "g_ci_high": found[1], "g_ci_note": None}


def _no_baseline_reason(wo: MacroRate) -> str | None:
    """Why a condition gets no Δ against this baseline, or None: a baseline without one scored trial
    (all errored or missing) measures the harness, not the agent without the skill."""
    if wo.scored == 0:
        return f"no Δ: the '{BASELINE}' baseline has no scored trial"
    return None


def _paired_deltas(w: MacroRate, wo: MacroRate, confidence: float) -> tuple[PairedDelta, PairedDelta]:
    """The Δ intervals of one (condition, agent) vs its baseline: the fixed frame (every planned trial,
    errors 0) and scored-only (errors left out); both by :func:`skillworks.stats.paired_delta`."""
    frame = paired_delta(
        {t: v.side() for t, v in w.per_task.items()},
        {t: v.side() for t, v in wo.per_task.items()},
        confidence=confidence,
    )
    scored = paired_delta(
        {t: v.side(excluding_errors=True) for t, v in w.per_task.items()},
        {t: v.side(excluding_errors=True) for t, v in wo.per_task.items()},
        confidence=confidence,
    )
    return frame, scored


INTERVAL_NOTE = (
    "Wald and Wilson 95% intervals treat a task-macro rate as a proportion over n = tasks x trials "
    "(the fixed frame), as SkillsBench publishes them: they hold for these tasks, not for tasks like them; "
    "the rate excluding errored trials uses n = scored trials. Δ and g intervals are t-intervals over tasks "
    "(df = tasks − 1) whose variance is floored by the within-task trial noise, so trial-to-trial variance "
    "is in them; only tasks scored on both sides are paired, and below 5 paired tasks no interval is given "
    "(too few tasks). Their coverage is in docs/statistics.md."
)

Cell = tuple[str, str]  # (condition, agent)


def _interval(iv: Interval | None) -> IntervalOut | None:
    return IntervalOut(low=iv.low, high=iv.high) if iv is not None else None


def _combine_plan(runs: Sequence[RunData]) -> tuple[list[str], list[str], list[AgentConfig]]:
    first = runs[0]
    for run in runs[1:]:
        if set(run.tasks) != set(first.tasks) or set(run.conditions) != set(first.conditions):
            raise UserError(
                f"cannot combine with {first.run_dir}: runs must share the same tasks and conditions",
                run.run_dir,
            )
    agents: dict[str, AgentConfig] = {}
    for run in runs:
        for agent in run.agents:
            agents.setdefault(agent.name, agent)
    return first.tasks, first.conditions, list(agents.values())


def _in_plan(run: RunData, r: TrialResult) -> bool:
    return (
        r.task_id in run.tasks
        and r.condition in run.conditions
        and any(a.name == r.agent for a in run.agents)
        and 0 <= r.trial_index < run.trials
    )


def _error_row(run: RunData, r: TrialResult, superseded: bool) -> ErrorRow:
    return ErrorRow(
        run_id=run.run_id,
        trial_id=r.trial_id,
        task_id=r.task_id,
        condition=r.condition,
        agent=r.agent,
        trial_index=r.trial_index,
        attempt=r.attempt,
        superseded=superseded,
        phase=r.error.phase if r.error else None,
        category=r.error.category if r.error else None,
        message=r.error.message if r.error else "no reward recorded",
    )


def _link(r: TrialResult) -> TrialLink:
    return TrialLink(
        run_id=r.run_id,
        trial_id=r.trial_id,
        trial_index=r.trial_index,
        attempt=r.attempt,
        outcome=r.outcome,
        reward=r.reward,
        trial_dir=f"trials/{r.trial_id}",  # the store's layout; results' own paths are not trusted for writing
    )


@dataclass
class _Grouped:
    outcomes: list[OutcomeRow] = field(default_factory=list)
    failure_modes: list[FailureModeRow] = field(default_factory=list)
    phase_times: list[PhaseTimeRow] = field(default_factory=list)
    skill_invocation: list[SkillInvocationRow] = field(default_factory=list)
    usage: list[UsageRow] = field(default_factory=list)


def _group_rows(
    kept: list[TrialResult],
    cells: list[Cell],
    conditions: list[str],
    planned: dict[Cell, int],
    multi_agent: bool,
) -> _Grouped:
    groups: list[tuple[str, str | None, list[TrialResult], int]] = []
    for cond in conditions:
        cond_cells = [c for c in cells if c[0] == cond]
        for cell in cond_cells:
            rows = [r for r in kept if (r.condition, r.agent) == cell]
            groups.append((cond, cell[1], rows, planned[cell]))
        if multi_agent:
            rows = [r for r in kept if r.condition == cond]
            groups.append((cond, None, rows, sum(planned[c] for c in cond_cells)))
    out = _Grouped()
    for cond, agent, rows, n_planned in groups:
        out.outcomes.append(OutcomeRow(condition=cond, agent=agent, **asdict(outcome_counts(rows, n_planned))))
        out.failure_modes.append(FailureModeRow(condition=cond, agent=agent, **asdict(failure_mode_counts(rows))))
        out.phase_times.append(PhaseTimeRow(condition=cond, agent=agent, **asdict(phase_times(rows))))
        si = skill_invocation(rows)
        out.skill_invocation.append(
            SkillInvocationRow(
                condition=cond,
                agent=agent,
                trials=si.trials,
                invoked_trials=si.invoked_trials,
                rate=si.rate,
                invoked=ResolutionOut(**asdict(si.invoked)),
                not_invoked=ResolutionOut(**asdict(si.not_invoked)),
                errored_excluded=si.errored_excluded,
                skills=si.skills,
                failed_load_trials=si.failed_load_trials,
                failed_skills=si.failed_skills,
                harness_provided=si.harness_provided,
                staged_trials=si.staged_trials,
                bypass_trials=si.bypass_trials,
                bypass_rate=si.bypass_rate,
            )
        )
        out.usage.append(UsageRow(condition=cond, agent=agent, **asdict(usage_totals(rows))))
    return out


def build_summary(
    run_dirs: Path | str | Sequence[Path | str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = None,
    confidence: float = 0.95,
) -> Summary:
    """Every number of the report for one run directory or several (same tasks and conditions).

    ``seed`` seeds the paired bootstrap; by default the first run's experiment seed, else 0.
    """
    dirs = [run_dirs] if isinstance(run_dirs, str | Path) else list(run_dirs)
    if not dirs:
        raise UserError("no run directory given")
    runs = [load_run(d) for d in dirs]
    tasks, conditions, agents = _combine_plan(runs)
    agent_names = [a.name for a in agents]
    cells: list[Cell] = [(c, a) for c in conditions for a in agent_names]
    warnings = [w for run in runs for w in run.warnings]
    ungraded = sum(1 for run in runs for r in run.results if r.outcome == "ungraded")
    if ungraded:
        warnings.append(
            f"{ungraded} trial(s) have no verifier (evals.json cases graded by metrics): they count as unscored "
            "here; eval_report.md grades them (skillworks eval-report)"
        )
    notes: list[str] = []

    # planned trials per cell and task, summed over runs (a run plans every task of the shared set)
    planned_per_task: dict[Cell, int] = {
        cell: sum(run.trials for run in runs if any(a.name == cell[1] for a in run.agents)) for cell in cells
    }

    kept: list[TrialResult] = []
    errors: list[ErrorRow] = []
    missing: list[MissingTrial] = []
    out_of_plan = 0
    superseded = 0
    excluded = excluded_pairs(runs)  # pairs a spend cap kept from running: out of the frame, both sides
    # trials per cell and task in the frame: the planned ones less the excluded pairs
    frames: dict[Cell, dict[str, int]] = {cell: dict.fromkeys(tasks, planned_per_task[cell]) for cell in cells}
    for run in runs:
        for task, agent, _k in excluded[run.run_id]:
            for cell in cells:
                if cell[1] == agent and task in frames[cell]:
                    frames[cell][task] -= 1
    for run in runs:
        latest = [
            r for r in latest_attempts(run.results) if (r.task_id, r.agent, r.trial_index) not in excluded[run.run_id]
        ]
        latest_ids = {id(r) for r in latest}
        for r in run.results:
            if id(r) not in latest_ids and (r.task_id, r.agent, r.trial_index) not in excluded[run.run_id]:
                superseded += 1
                if _in_plan(run, r) and not is_scored(r) and r.outcome != "ungraded":
                    errors.append(_error_row(run, r, superseded=True))
        for r in latest:
            if not _in_plan(run, r):
                out_of_plan += 1
                continue
            kept.append(r)
            if not is_scored(r) and r.outcome != "ungraded":  # ungraded: no verifier, not an error
                errors.append(_error_row(run, r, superseded=False))
        seen = {(r.task_id, r.condition, r.agent, r.trial_index) for r in latest}
        for cond in run.conditions:
            for cfg in run.agents:
                for task in run.tasks:
                    for k in range(run.trials):
                        if (task, cond, cfg.name, k) not in seen and (task, cfg.name, k) not in excluded[run.run_id]:
                            missing.append(
                                MissingTrial(
                                    run_id=run.run_id, task_id=task, condition=cond, agent=cfg.name, trial_index=k
                                )
                            )
    if out_of_plan:
        notes.append(f"{out_of_plan} result(s) outside the plan (task, condition, agent or trial index) ignored")
    if superseded:
        notes.append(f"{superseded} earlier attempt(s) replaced by a retry; the latest attempt counts")
    n_excluded = sum(len(pairs) for pairs in excluded.values())
    if n_excluded:
        notes.append(
            f"{n_excluded} pair(s) (every condition of a task x agent x trial) not run under a spend cap: "
            "left out of the frame on both sides"
        )

    by_cell: dict[Cell, list[TrialResult]] = {cell: [] for cell in cells}
    for r in kept:
        by_cell[(r.condition, r.agent)].append(r)
    macro: dict[Cell, MacroRate] = {
        cell: task_macro_rate(by_cell[cell], [t for t in tasks if frames[cell][t] > 0], frames[cell]) for cell in cells
    }

    ungraded_in = {cell: sum(1 for r in by_cell[cell] if r.outcome == "ungraded") for cell in cells}
    pass_rates: list[PassRateRow] = []
    for cell, m in macro.items():
        n = sum(max(t.planned, t.recorded) for t in m.per_task.values())
        excl = m.rate_excluding_errors
        n_excl = sum(t.scored for t in m.per_task.values())
        pass_rates.append(
            PassRateRow(
                condition=cell[0],
                agent=cell[1],
                n_tasks=m.n_tasks,
                planned=m.planned,
                recorded=m.recorded,
                scored=m.scored,
                errored=m.errored - ungraded_in[cell],
                ungraded=ungraded_in[cell],
                missing=m.missing,
                rate=m.rate,
                n=n,
                wald=_interval(wald_interval(m.rate, n, confidence)),
                wilson=_interval(wilson_interval(m.rate, n, confidence)),
                rate_excluding_errors=excl,
                n_excluding_errors=n_excl,
                wald_excluding_errors=_interval(wald_interval(excl, n_excl, confidence)) if excl is not None else None,
                wilson_excluding_errors=(
                    _interval(wilson_interval(excl, n_excl, confidence)) if excl is not None else None
                ),
                tasks_without_scored=m.tasks_without_scored,
                **_task_interval(m, confidence),
            )
        )
        if m.recorded == 0:
            notes.append(f"no trial recorded for condition '{cell[0]}' x agent '{cell[1]}' (rate 0 by frame)")
        if m.tasks_without_scored:
            notes.append(
                f"'{cell[0]}' x '{cell[1]}': {len(m.tasks_without_scored)} task(s) with no scored trial "
                f"left out of the rate excluding errors: {', '.join(m.tasks_without_scored)}"
            )

    boot_seed = seed if seed is not None else next((r.seed for r in runs if r.seed is not None), 0)
    deltas: list[DeltaRow] = []
    gain_summary: list[GainSummaryRow] = []
    if BASELINE in conditions:
        for cond in conditions:
            if cond == BASELINE:
                continue
            row_gs: list[float | None] = []
            row_ds: list[float | None] = []
            row_w: list[float | None] = []
            row_wo: list[float | None] = []
            for agent in agent_names:
                w, wo = macro[(cond, agent)], macro[(BASELINE, agent)]
                frame, pd = _paired_deltas(w, wo, confidence)
                no_baseline = _no_baseline_reason(wo)
                g = None if no_baseline else normalised_gain(w.rate, wo.rate)
                dpp = None if no_baseline else delta_pp(w.rate, wo.rate)
                deltas.append(
                    DeltaRow(
                        condition=cond,
                        baseline=BASELINE,
                        agent=agent,
                        with_rate=w.rate,
                        without_rate=wo.rate,
                        delta_pp=dpp,
                        ci_low_pp=None if no_baseline else frame.ci_low_pp,
                        ci_high_pp=None if no_baseline else frame.ci_high_pp,
                        ci_method=frame.method,
                        ci_note=no_baseline or frame.note,
                        g=g,
                        g_note=None if g is not None else (no_baseline or "undefined: the baseline is already 100%"),
                        **(
                            _gain_interval(w, wo, confidence)
                            if g is not None
                            else {"g_ci_low": None, "g_ci_high": None, "g_ci_note": None}
                        ),
                        paired=PairedDeltaOut(
                            n_paired=len(pd.paired_tasks),
                            paired_tasks=pd.paired_tasks,
                            unpaired_tasks=pd.unpaired_tasks,
                            delta_pp=pd.delta_pp,
                            ci_low_pp=pd.ci_low_pp,
                            ci_high_pp=pd.ci_high_pp,
                            ci_note=pd.note,
                        ),
                    )
                )
                row_gs.append(g)
                row_ds.append(dpp)
                row_w.append(w.rate)
                row_wo.append(wo.rate)
            mg, md = mean_of_defined(row_gs), mean_of_defined(row_ds)
            gain_summary.append(
                GainSummaryRow(
                    condition=cond,
                    baseline=BASELINE,
                    n_configs=len(agent_names),
                    mean_with_rate=mean_of_defined(row_w).mean,
                    mean_without_rate=mean_of_defined(row_wo).mean,
                    mean_delta_pp=md.mean,
                    mean_g=mg.mean,
                    n_g_undefined=mg.n_undefined,
                )
            )
            if mg.n_undefined:
                notes.append(
                    f"g for '{cond}' is undefined for {mg.n_undefined} configuration(s) whose '{BASELINE}' "
                    "rate is 100%; the mean g leaves them out"
                )
    elif len(conditions) > 1:
        notes.append(f"no '{BASELINE}' condition: no Δ or normalised gain is reported")

    links: dict[tuple[str, str, str], list[TrialLink]] = {}
    for r in sorted(kept, key=lambda r: (r.run_id, r.trial_index)):
        links.setdefault((r.task_id, r.condition, r.agent), []).append(_link(r))
    per_task = [
        TaskRow(
            task_id=task,
            cells=[
                TaskCell(
                    condition=cell[0],
                    agent=cell[1],
                    rate=macro[cell].per_task[task].rate,
                    rate_excluding_errors=macro[cell].per_task[task].rate_excluding_errors,
                    planned=macro[cell].per_task[task].planned,
                    scored=macro[cell].per_task[task].scored,
                    errored=macro[cell].per_task[task].errored,
                    missing=macro[cell].per_task[task].missing,
                    trials=links.get((task, *cell), []),
                )
                for cell in cells
                if task in macro[cell].per_task  # a task whose every pair a spend cap kept from running: none
            ],
        )
        for task in tasks
    ]

    grouped = _group_rows(kept, cells, conditions, {c: sum(frames[c].values()) for c in cells}, len(agents) > 1)

    providers: dict[str, int] = {}
    for r in kept:
        key = r.provider or "unknown"
        providers[key] = providers.get(key, 0) + 1
    scripted = "scripted" in providers or any(a.provider == "scripted" for a in agents)
    if scripted:
        notes.insert(0, SCRIPTED_NOTE)
    if missing:
        notes.append(f"{len(missing)} planned trial(s) have no result; they count 0 in the fixed frame")

    planned_total = sum(m.planned for m in macro.values())
    return Summary(
        run_ids=[r.run_id for r in runs],
        run_dirs=[str(r.run_dir) for r in runs],
        tasks=tasks,
        conditions=conditions,
        agents=[AgentOut(name=a.name, model=a.model, provider=a.provider, harness=a.harness) for a in agents],
        trials_per_task=max(planned_per_task.values(), default=0),
        experiment_seeds=[r.seed for r in runs],
        bootstrap=BootstrapSettings(resamples=resamples, seed=boot_seed, confidence=confidence),
        interval_note=INTERVAL_NOTE,
        counts=FrameCounts(
            planned=planned_total,
            recorded=len(kept),
            scored=sum(1 for r in kept if is_scored(r)),
            errored=sum(1 for r in kept if not is_scored(r) and r.outcome != "ungraded"),
            ungraded=sum(1 for r in kept if r.outcome == "ungraded"),
            missing=len(missing),
            out_of_plan=out_of_plan,
            superseded_attempts=superseded,
        ),
        providers=dict(sorted(providers.items())),
        scripted_provider=scripted,
        notes=notes,
        warnings=warnings,
        pass_rates=pass_rates,
        deltas=deltas,
        gain_summary=gain_summary,
        per_task=per_task,
        errors=errors,
        missing_trials=missing,
        outcomes=grouped.outcomes,
        failure_modes=grouped.failure_modes,
        phase_times=grouped.phase_times,
        skill_invocation=grouped.skill_invocation,
        usage=grouped.usage,
        skill_source_usage=source_usage_rows(kept),
        generated_packs=generated_pack_rows(kept),
        compiled_vs_raw=compiled_comparisons(kept, confidence=confidence),
        verification=[
            VerificationRow(
                task_id=r.task_id,
                condition=r.condition,
                agent=r.agent,
                trial_index=r.trial_index,
                isolation=r.verifier_isolation or "none",
                outputs_not_copied=r.outputs_not_copied,
            )
            for r in kept
            if r.verifier_isolation == "shared" or r.outputs_not_copied
        ],
        fresh_verified=sum(1 for r in kept if r.verifier_isolation == "fresh"),
        campaign=campaign_section(runs),
    )
