"""`run_trigger`: does the agent load the skill when it should, and leave it alone when it should not?

    query file ─► one task per query (instruction = the query, empty workspace, no verifier)
    ─► condition with-skill: the skill under test + optional siblings and decoys, nothing else (the agent's
       home is the sandbox's fresh one: the user's installed skills are never visible)
    ─► run_experiment (the same trial pipeline as every run: sandbox, harness, gateway, skill-use detection)
    ─► triggered = the skill under test was loaded (TrialResult.skill_use.invoked)
    ─► trigger.json / trigger.md / trigger.html (+ the run's own summary.json, report.md, report.html)

A cost cap (`max_cost_usd`) stops the run once the recorded trials' cost reaches it; trials not run are
reported as missing, never as misses.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from skillworks import __version__
from skillworks.errors import UserError
from skillworks.evaluate.decoys import choose_decoys
from skillworks.evaluate.workspace import evaluation_copy
from skillworks.experiment.conditions import SkillSet
from skillworks.experiment.plan import TrialSpec
from skillworks.experiment.runner import run_experiment
from skillworks.experiment.spec import AgentConfig, ExperimentSpec, SkillRef, task_ref
from skillworks.experiment.store import RunStore
from skillworks.results import TrialResult
from skillworks.skills.package import SkillPackage, load_skill
from skillworks.stats.rates import latest_attempts
from skillworks.trigger.queries import TriggerQuery, load_queries, query_tasks
from skillworks.trigger.scoring import DEFAULT_THRESHOLD, TriggerScores, score_queries

CONDITION = "with-skill"
TRIGGER_KIND = "trigger"


@dataclass
class TriggerOptions:
    skill: Path
    queries: Path
    agent: str = "builtin"
    model: str | None = None
    api_base: str | None = None
    trials: int = 1
    siblings: list[Path] = field(default_factory=list)
    decoys: list[Path] = field(default_factory=list)
    decoy_count: int | None = None  # topped up with synthetic decoys; default: the given decoys
    threshold: float = DEFAULT_THRESHOLD
    max_cost_usd: float | None = None
    timeout_sec: float = 300.0
    out: Path = Path("runs")
    run_id: str | None = None
    concurrency: int = 2
    seed: int = 0
    env: str = "local"
    env_options: dict[str, Any] = field(default_factory=dict)
    description: str | None = None  # score this description instead of the SKILL.md's (optimiser)
    write_reports: bool = True


@dataclass
class TriggerOutcome:
    run_dir: Path
    scores: TriggerScores
    results: list[TrialResult]
    planned: int
    cost_usd: float
    stopped_by_cost: bool
    reports: dict[str, Path]


def _ref(skill: SkillPackage) -> SkillRef:
    return SkillRef(name=skill.name, path=str(skill.root), package_hash=skill.package_hash)


def _with_description(skill: SkillPackage, description: str) -> SkillPackage:
    """Rewrite the (copied) SKILL.md's description in place; the body stays byte for byte."""
    md = skill.root / "SKILL.md"
    front = dict(skill.frontmatter)
    front["description"] = description
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000)
    md.write_text(f"---\n{head}---\n{skill.body}", encoding="utf-8")
    return load_skill(skill.root)


def _competitors(
    options: TriggerOptions, source: SkillPackage, run_dir: Path
) -> tuple[list[SkillPackage], list[SkillPackage], int]:
    siblings = [load_skill(p) for p in options.siblings]
    given = [load_skill(p) for p in options.decoys]
    names = [source.name, *(s.name for s in siblings), *(d.name for d in given)]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"two skills of the trigger run are named {dupes[0]!r} (the skill, --sibling, --decoy)")
    count = len(given) if options.decoy_count is None else options.decoy_count
    if count < 0:
        raise UserError("--decoys must be a non-negative number")
    choice = choose_decoys(given, count, run_dir / "synthetic-decoys", set(names))
    staged = run_dir / "staged-skills"
    siblings = [evaluation_copy(s, staged / "siblings") for s in siblings]
    decoys = [evaluation_copy(d, staged / "decoys") for d in choice.decoys]
    return siblings, decoys, choice.synthetic


class _TriggerGrade:
    """The post-trial hook: a trigger trial's reward is whether the skill under test was loaded (1.0) or not
    (0.0); an errored trial keeps no reward (it is not scored)."""

    def __init__(self, target: str, expected: dict[str, bool]) -> None:
        self.target = target
        self.expected = expected

    async def __call__(self, spec: TrialSpec, result: TrialResult, trial_dir: Path) -> TrialResult:
        if result.outcome == "error" or result.error is not None:
            return result
        triggered = self.target in result.skill_use.invoked
        should = self.expected.get(spec.task.id)
        metrics = {**result.metrics, "triggered": float(triggered)}
        if should is not None:
            metrics["trigger_correct"] = float(triggered == should)
        return result.model_copy(
            update={"reward": float(triggered), "outcome": "solved" if triggered else "failed", "metrics": metrics}
        )


def _check(options: TriggerOptions) -> None:
    if options.trials < 1:
        raise UserError("--trials must be at least 1")
    if not 0.0 < options.threshold <= 1.0:
        raise UserError("--threshold must be in (0, 1]")
    if options.max_cost_usd is not None and options.max_cost_usd <= 0:
        raise UserError("--max-cost must be a positive number of US dollars")


async def run_trigger(
    options: TriggerOptions, console: Console | None = None, queries: list[TriggerQuery] | None = None
) -> TriggerOutcome:
    """Run every query `options.trials` times and score the triggers (see the module docstring)."""
    _check(options)
    source = load_skill(options.skill)
    queries = queries if queries is not None else load_queries(options.queries)
    run_id = options.run_id or f"trigger-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
    run_dir = options.out.resolve() / run_id
    if (run_dir / "experiment.json").exists():
        raise UserError("run directory already exists; choose another --run-id", run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        target = evaluation_copy(source, run_dir / "staged-skills" / "target")
        if options.description is not None:
            target = _with_description(target, options.description)
        siblings, decoys, synthetic = _competitors(options, source, run_dir)
    except UserError:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    tasks = query_tasks(queries, run_dir / "queries", options.timeout_sec)
    extra = {
        TRIGGER_KIND: {
            "skill": source.name,
            "skill_path": str(source.root),
            "target": _ref(target).model_dump(),
            "description": target.description,
            "queries_file": str(options.queries.resolve()),
            "threshold": options.threshold,
            "siblings": [s.name for s in siblings],
            "decoys": [d.name for d in decoys],
            "decoys_synthetic": synthetic,
            "max_cost_usd": options.max_cost_usd,
        }
    }
    spec = ExperimentSpec(
        run_id=run_id,
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(t) for t in tasks],
        conditions=[CONDITION],
        agents=[AgentConfig(name=options.agent, model=options.model, api_base=options.api_base)],
        trials=options.trials,
        seed=options.seed,
        concurrency=options.concurrency,
        env=options.env,
        env_options=dict(options.env_options),
        decoy_skills=[_ref(d) for d in decoys],
        sibling_skills=[_ref(s) for s in siblings],
        baseline_policy="trigger evaluation: one condition, the skill under test with its siblings and decoys",
        extra=extra,
    )
    # the skill under test is the SkillSet's target: the with-skill condition stages it beside the competitors
    skill_set = SkillSet(target=target, siblings=tuple(siblings), decoys=tuple(decoys))
    spent = [0.0]
    stopped = [False]
    job: asyncio.Task[Any] | None = None

    def on_result(result: TrialResult) -> None:
        spent[0] += result.usage.cost_usd or 0.0
        capped = options.max_cost_usd is not None and spent[0] >= options.max_cost_usd
        if capped and job is not None and not stopped[0]:
            stopped[0] = True
            job.cancel()

    job = asyncio.create_task(
        run_experiment(
            spec,
            tasks,
            run_dir,
            skill_set=skill_set,
            console=console,
            on_result=on_result,
            post_trial=_TriggerGrade(target.name, {q.task_id: q.should_trigger for q in queries}),
        )
    )
    try:
        outcome = await job
        planned = outcome.planned
    except asyncio.CancelledError:
        if not stopped[0]:
            raise
        planned = len(tasks) * options.trials
    results = latest_attempts(RunStore(run_dir).read_results())
    competitors = [*(s.name for s in siblings), *(d.name for d in decoys)]
    scores = score_queries(queries, results, target.name, competitors, options.trials, options.threshold, options.seed)
    outcome_ = TriggerOutcome(
        run_dir=run_dir,
        scores=scores,
        results=results,
        planned=planned,
        cost_usd=sum(r.usage.cost_usd or 0.0 for r in results),
        stopped_by_cost=stopped[0],
        reports={},
    )
    if options.write_reports:
        from skillworks.report.write import write_reports
        from skillworks.trigger.report import write_trigger_reports

        outcome_.reports = {f"run_{k}": v for k, v in write_reports(run_dir).items()}
        outcome_.reports.update(write_trigger_reports(outcome_, options))
    return outcome_
