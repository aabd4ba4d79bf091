"""`skillworks power RUN_DIR`: from a finished pilot run, the tasks x trials a given Δ needs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillworks.errors import UserError

PLAN_TRIALS = (1, 2, 3, 5, 10)
"""Trials per task and condition the plan table lists (the pilot's own count is added)."""


def power_lines(
    run_dir: Path,
    *,
    effect_pp: float | None,
    power: float,
    confidence: float,
    baseline: str,
) -> list[str]:
    """What `skillworks power` prints (see docs/commands/run.md)."""
    from skillworks.report.loading import load_run
    from skillworks.stats import is_scored, latest_attempts
    from skillworks.stats.power import detectable_effect, tasks_needed, variance_components

    if effect_pp is not None and not 0.0 < effect_pp <= 100.0:
        raise UserError(f"--effect must be in (0, 100] percentage points, got {effect_pp}")
    if not 0.0 < power < 1.0:
        raise UserError(f"--power must be in (0, 1), got {power}")
    if not 0.0 < confidence < 1.0:
        raise UserError(f"--confidence must be in (0, 1), got {confidence}")
    run = load_run(run_dir)
    if baseline not in run.conditions:
        raise UserError(
            f"no '{baseline}' condition in the run (conditions: {', '.join(run.conditions)}): "
            "power needs a baseline to compare with",
            run.run_dir / "experiment.json",
        )
    rewards: dict[tuple[str, str, str], list[float]] = {}
    for r in latest_attempts(run.results):
        if is_scored(r) and r.reward is not None:
            rewards.setdefault((r.condition, r.agent, r.task_id), []).append(float(r.reward))
    agents = list(dict.fromkeys([a.name for a in run.agents] + [a for _, a, _ in rewards]))
    lines: list[str] = []
    pct = f"{power * 100:.0f}%"
    for cond in (c for c in run.conditions if c != baseline):
        for agent in agents:
            side = {t: rewards.get((cond, agent, t), []) for t in run.tasks}
            base = {t: rewards.get((baseline, agent, t), []) for t in run.tasks}
            if not any(side.values()) and not any(base.values()):
                continue
            head = f"{cond} vs {baseline} ({agent})"
            vc = variance_components(side, base)
            if vc is None:
                paired = sum(1 for t in run.tasks if side[t] and base[t])
                lines.append(f"{head}: too few tasks scored on both sides to estimate variance — n={paired}")
                continue
            trial_note = "" if vc.within_from_trials else " (one trial per task: the 0/1 bound)"
            lines.append(
                f"{head}: pilot {vc.tasks} task(s) x {vc.trials:.1f} trial(s), Δ {vc.delta * 100:+.1f} pp; "
                f"between-task sd {vc.between**0.5 * 100:.1f} pp, "
                f"trial sd (with + without) {vc.within**0.5 * 100:.1f} pp{trial_note}"
            )
            own = detectable_effect(
                vc.tasks, max(1, round(vc.trials)), vc.between, vc.within, confidence=confidence, power=power
            )
            lines.append(
                f"  minimum detectable Δ at {pct} power for this run's size: "
                + (f"{min(own, 1.0) * 100:.1f} pp" if own is not None else f"none — too few tasks (n={vc.tasks})")
            )
            target = effect_pp / 100.0 if effect_pp is not None else abs(vc.delta)
            if target <= 0:
                lines.append("  the pilot's Δ is 0: give --effect PP for the tasks it would need")
                continue
            source = "" if effect_pp is not None else " (the pilot's Δ; --effect to choose)"
            cells = []
            for m in sorted({*PLAN_TRIALS, max(1, round(vc.trials))}):
                n = tasks_needed(target, m, vc.between, vc.within, confidence=confidence, power=power)
                cells.append(f"{m} trial(s): {n} tasks" if n is not None else f"{m} trial(s): unreachable")
            lines.append(f"  Δ {target * 100:.1f} pp{source} at {pct} power needs " + " | ".join(cells))
    if not lines:
        raise UserError("no scored trial in the run: nothing to plan from", run.run_dir / "results.jsonl")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("power")
    def power_cmd(
        run_dir: Annotated[Path, typer.Argument(help="a finished pilot run directory (with a 'none' condition)")],
        effect: Annotated[
            float | None, typer.Option("--effect", help="the Δ to detect, in pp (default: the pilot's Δ)")
        ] = None,
        power: Annotated[float, typer.Option("--power", help="probability of detecting it")] = 0.8,
        confidence: Annotated[float, typer.Option("--confidence", help="confidence of the Δ interval")] = 0.95,
        baseline: Annotated[str, typer.Option("--baseline", help="the condition without the skill")] = "none",
    ) -> None:
        """How many tasks x trials a Δ needs, from a pilot run's between-task and trial variance, and the
        minimum detectable Δ of the pilot's own size."""
        for line in power_lines(run_dir, effect_pp=effect, power=power, confidence=confidence, baseline=baseline):
            typer.echo(line)
