"""`run_eval`: the ACES live evaluation of one skill, start to finish.

    load the skill and its evals.json cases (+ any task dirs) ─► case input files (own | all)
    ─► workspace: isolation (the target alone) | group (the target + its sibling skills)
    ─► conditions: with-skill vs target-withheld (or the product targets), support, siblings, decoys in both
    ─► run_experiment with the metrics hook (six metrics, custom graders, judge via the gateway)
    ─► eval report (Skill Lift, intervals, negative-lift cases, pass@k)

With ``decoy_counts`` the same cases run once per count, with that many decoys visible, each in its own
run directory ``<run>/decoys-<n>``; ``<run>/decoy_stress.json`` and ``.md`` compare lift and wall time.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from rich.console import Console

from skillworks import __version__
from skillworks.errors import UserError
from skillworks.evaluate.decoys import choose_decoys
from skillworks.evaluate.grading import EvalGrader
from skillworks.evaluate.judge import GatewayJudge
from skillworks.evaluate.product import Product, load_product, register_product_conditions
from skillworks.evaluate.siblings import WorkspaceMode, find_siblings
from skillworks.evaluate.workspace import CaseFiles, evaluation_copy, prepare_workspaces
from skillworks.experiment.runner import RunOutcome, run_experiment
from skillworks.experiment.spec import AgentConfig, ExperimentSpec, SkillRef, task_ref
from skillworks.experiment.store import RunStore
from skillworks.grading.graders import Grader, entry_point_graders, load_grader
from skillworks.provision.conditions import SkillSet
from skillworks.skills.package import SkillPackage, load_skill
from skillworks.tasks.evals_json import find_evals_file, load_eval_cases
from skillworks.tasks.loader import load_tasks
from skillworks.tasks.model import Task

WITH_SKILL = "with-skill"
TARGET_WITHHELD = "target-withheld"
PLAN_FILE = "eval_plan.json"
PLAN_SCHEMA = "skillworks.eval-plan/2"
_CASE_FILES_OF_V1 = {"isolation": "own", "group": "all"}  # plan /1: `workspace` chose the case input files


@dataclass
class EvalOptions:
    skill: Path
    support: list[Path] = field(default_factory=list)
    decoys: list[Path] = field(default_factory=list)
    tasks: list[Path] = field(default_factory=list)  # bring-your-own task dirs beside evals.json
    workspace: WorkspaceMode = "isolation"  # which skills a trial sees: the target alone, or with its siblings
    siblings: list[Path] = field(default_factory=list)  # group: the sibling skill dirs (default: the collection's)
    case_files: CaseFiles = "own"  # input files of evals.json cases: each case its own, or all cases' files
    agents: list[str] = field(default_factory=lambda: ["builtin"])  # several: skill × agent cells
    model: str | None = None
    api_base: str | None = None
    judge_model: str | None = None  # default: the agent's model unless it is scripted
    judge_api_base: str | None = None  # for --judge-model (a defaulted judge uses api_base)
    trials: int = 1
    graders: list[str] = field(default_factory=list)  # "module:func"
    entry_point_graders: bool = True
    decoy_counts: list[int] | None = None
    targets: Path | None = None  # product mode YAML
    weights: dict[str, float] = field(default_factory=dict)
    judge_context: str = "trajectory"  # what the accuracy judge sees: "trajectory" (ACES) or "answer"
    goal_mode: str = "match"  # goal accuracy: "match" (deterministic) or "llm" (judged)
    pass_threshold: float = 1.0
    out: Path = Path("runs")
    run_id: str | None = None
    concurrency: int = 2
    seed: int = 0
    env: str = "local"
    env_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvalRun:
    run_dir: Path
    outcome: RunOutcome
    decoys_given: int
    decoys_synthetic: int


@dataclass
class EvalOutcome:
    run_dir: Path
    runs: list[EvalRun]
    reports: dict[str, Path]


def _ref(skill: SkillPackage) -> SkillRef:
    return SkillRef(name=skill.name, path=str(skill.root), package_hash=skill.package_hash)


def judge_model_for(options: EvalOptions) -> str | None:
    if options.judge_model:
        return options.judge_model
    if options.model and not options.model.startswith("scripted/"):
        return options.model
    return None


def _load_tasks(options: EvalOptions, target: SkillPackage) -> list[Task]:
    tasks: list[Task] = []
    if find_evals_file(options.skill) is not None:
        tasks += load_eval_cases(options.skill, target.name)
    for path in options.tasks:
        tasks += load_tasks(path)
    if not tasks:
        raise UserError("no cases: the skill has no evals/evals.json and no --tasks were given", options.skill)
    ids = [t.id for t in tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"two tasks share the id {dupes[0]!r}")
    return tasks


def _load_skills(paths: list[Path], kind: str) -> list[SkillPackage]:
    skills = [load_skill(p) for p in paths]
    names = [s.name for s in skills]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"two {kind} skills are named {dupes[0]!r}")
    return skills


def baseline_policy(
    target: SkillPackage,
    support: list[SkillPackage],
    decoys: list[SkillPackage],
    siblings: list[SkillPackage] | None = None,
) -> str:
    def names(skills: list[SkillPackage]) -> str:
        return ", ".join(f"{s.name}@{s.short_hash}" for s in skills) or "none"

    sib = f", sibling skills [{names(siblings)}]" if siblings else ""
    return (
        f"target-withheld: the target skill {target.name}@{target.short_hash} is absent from baseline trials "
        f"(none of its files are staged); support skills [{names(support)}]{sib} and decoy skills [{names(decoys)}] "
        "are visible in both conditions; skills baked into task images are stripped"
    )


def _graders(options: EvalOptions) -> list[Grader]:
    graders = [load_grader(g) for g in options.graders]
    if options.entry_point_graders:
        graders += entry_point_graders()
    names = [g.name for g in graders]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"two graders are named {dupes[0]!r}")
    return graders


def _absolute_model(model: str | None) -> str | None:
    """``scripted/<relative script path>`` made absolute; other model ids unchanged."""
    if model is None or not model.startswith("scripted/"):
        return model
    script = Path(model.removeprefix("scripted/"))
    return f"scripted/{script.resolve()}" if script.exists() else model


def _absolute(options: EvalOptions) -> EvalOptions:
    """The options with every path made absolute (the plan must work from any directory on resume)."""
    return replace(
        options,
        model=_absolute_model(options.model),
        judge_model=_absolute_model(options.judge_model),
        skill=options.skill.resolve(),
        support=[p.resolve() for p in options.support],
        decoys=[p.resolve() for p in options.decoys],
        siblings=[p.resolve() for p in options.siblings],
        tasks=[p.resolve() for p in options.tasks],
        targets=options.targets.resolve() if options.targets else None,
        out=options.out.resolve(),
    )


def write_plan(options: EvalOptions, run_dir: Path) -> Path:
    """eval_plan.json: the options the run was started with (the source of `--resume`)."""
    path = run_dir / PLAN_FILE
    data = TypeAdapter(EvalOptions).dump_python(options, mode="json")
    path.write_text(json.dumps({"schema": PLAN_SCHEMA, "options": data}, indent=2))
    return path


def read_plan(run_dir: Path) -> EvalOptions:
    path = run_dir / PLAN_FILE
    if not path.is_file():
        raise UserError(f"not an eval run directory (no {PLAN_FILE})", run_dir)
    try:
        data = json.loads(path.read_text())
        options = dict(data["options"])
        if data.get("schema") == "skillworks.eval-plan/1":
            options["case_files"] = _CASE_FILES_OF_V1.get(str(options.pop("workspace", "isolation")), "own")
        return TypeAdapter(EvalOptions).validate_python(options)
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"unreadable {PLAN_FILE}: {' '.join(str(exc).split())[:200]}", path) from None


@dataclass
class _Shared:
    """What every run of one eval shares (one run, or one per decoy count)."""

    options: EvalOptions
    source: SkillPackage
    target: SkillPackage
    tasks: list[Task]
    support: list[SkillPackage]
    siblings: list[SkillPackage]
    product: Product | None
    judge: GatewayJudge | None
    judge_model: str | None
    graders: list[Grader]
    console: Console | None
    resume: bool


async def resume_eval(run_dir: Path, console: Console | None = None) -> EvalOutcome:
    """Continue an interrupted eval run with the options of its eval_plan.json: recorded trials are kept,
    the others run; the skills and cases must be unchanged."""
    return await run_eval(read_plan(run_dir), console, resume=True)


async def run_eval(options: EvalOptions, console: Console | None = None, *, resume: bool = False) -> EvalOutcome:
    from skillworks.report.eval_report import write_decoy_stress_report, write_eval_report

    if options.trials < 1:
        raise UserError("--trials must be at least 1")
    if not options.agents or len(set(options.agents)) != len(options.agents):
        raise UserError("give each --agent once (at least one)")
    source = load_skill(options.skill)
    tasks = _load_tasks(options, source)
    support = _load_skills(options.support, "support")
    decoys = _load_skills(options.decoys, "decoy")
    clash = {source.name} & ({s.name for s in support} | {d.name for d in decoys})
    clash |= {s.name for s in support} & {d.name for d in decoys}
    if clash:
        raise UserError(f"skill {sorted(clash)[0]!r} is given in more than one role (target, support, decoy)")
    found = find_siblings(source, options.workspace, options.siblings, {s.name for s in [*support, *decoys]})
    graders = _graders(options)
    run_id = options.run_id or f"eval-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
    options = _absolute(replace(options, run_id=run_id))
    run_dir = options.out / run_id
    if not resume:
        if (run_dir / PLAN_FILE).exists() or (run_dir / "experiment.json").exists():
            raise UserError("run directory already exists; continue it with --resume", run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_plan(options, run_dir)
    target = evaluation_copy(source, run_dir / "staged-skills" / "target")
    siblings = [evaluation_copy(s, run_dir / "staged-skills" / "siblings") for s in found]
    tasks = prepare_workspaces(tasks, run_dir / "workspaces", options.case_files)
    product: Product | None = None
    if options.targets is not None:
        product = load_product(options.targets, run_dir / "staged-skills" / "product")
        register_product_conditions(product)
    judge_model = judge_model_for(options)
    judge_base = options.judge_api_base if options.judge_model else options.api_base
    judge = GatewayJudge(judge_model, judge_base) if judge_model else None
    shared = _Shared(
        options, source, target, tasks, support, siblings, product, judge, judge_model, graders, console, resume
    )

    runs: list[EvalRun] = []
    if judge is not None:
        await judge.start()
    try:
        if not options.decoy_counts:
            runs.append(await _one_run(shared, run_dir, run_id, decoys, 0))
        else:
            taken = {source.name, *(s.name for s in [*support, *siblings])}
            for count in options.decoy_counts:
                choice = choose_decoys(decoys, count, run_dir / "synthetic-decoys", taken)
                sub_id = f"{run_id}-decoys-{count}"
                runs.append(await _one_run(shared, run_dir / f"decoys-{count}", sub_id, list(choice.decoys),
                                           choice.synthetic))  # fmt: skip
    finally:
        if judge is not None:
            await judge.stop()
    reports: dict[str, Path] = {}
    for run in runs:
        reports.update({f"{run.run_dir.name}/{k}": v for k, v in write_eval_report(run.run_dir).items()})
    if options.decoy_counts:
        reports.update(write_decoy_stress_report(run_dir, [r.run_dir for r in runs]))
    return EvalOutcome(run_dir, runs, reports)


async def _one_run(shared: _Shared, run_dir: Path, run_id: str, decoys: list[SkillPackage], synthetic: int) -> EvalRun:
    options, product, judge = shared.options, shared.product, shared.judge
    conditions = product.conditions if product else [WITH_SKILL, TARGET_WITHHELD]
    treatment_pairs = (
        [(t.condition, product.baseline.condition) for t in product.targets if t is not product.baseline]
        if product
        else [(WITH_SKILL, TARGET_WITHHELD)]
    )
    eval_extra: dict[str, Any] = {
        "kind": "aces-eval",
        "skill": shared.source.name,
        "skill_path": str(shared.source.root),
        "workspace": options.workspace,
        "sibling_names": [s.name for s in shared.siblings],
        "case_files": options.case_files,
        "judge_model": shared.judge_model,
        "judge_provider": judge.provider if judge else None,
        "graders": [g.source for g in shared.graders],
        "weights": options.weights,
        "judge_context": options.judge_context,
        "goal_mode": options.goal_mode,
        "pass_threshold": options.pass_threshold,
        "comparisons": [{"treatment": a, "baseline": b} for a, b in treatment_pairs],
        "decoys_visible": len(decoys),
        "decoys_synthetic": synthetic,
        "decoy_names": [d.name for d in decoys],
    }
    if product is not None:
        eval_extra["product"] = {"file": str(product.source), "targets": product.describe()}
    spec = ExperimentSpec(
        run_id=run_id,
        created_at=datetime.now(UTC),
        skillworks_version=__version__,
        tasks=[task_ref(t) for t in shared.tasks],
        conditions=conditions,
        agents=[AgentConfig(name=a, model=options.model, api_base=options.api_base) for a in options.agents],
        trials=options.trials,
        seed=options.seed,
        concurrency=options.concurrency,
        env=options.env,
        env_options=dict(options.env_options),
        target_skill=_ref(shared.target),
        support_skills=[_ref(s) for s in shared.support],
        decoy_skills=[_ref(d) for d in decoys],
        sibling_skills=[_ref(s) for s in shared.siblings],
        baseline_policy=baseline_policy(shared.target, shared.support, decoys, shared.siblings),
        extra={"eval": eval_extra},
    )
    skill_set = SkillSet(
        target=shared.target, support=tuple(shared.support), decoys=tuple(decoys), siblings=tuple(shared.siblings)
    )
    grader = EvalGrader(
        run_dir,
        skill_set,
        judge=judge,
        graders=shared.graders,
        weights=options.weights,
        judge_sees_trajectory=options.judge_context != "answer",
        goal_mode=options.goal_mode,
    )
    resuming = shared.resume and (run_dir / "experiment.json").is_file()
    if resuming:
        _check_skills_unchanged(spec, run_dir)
        spec = spec.model_copy(update={"created_at": RunStore(run_dir).read_spec().created_at})
    outcome = await run_experiment(
        spec,
        shared.tasks,
        run_dir,
        skill_set=skill_set,
        resume=resuming,
        console=shared.console,
        keep_workspace=bool(shared.graders),
        post_trial=grader,
    )
    return EvalRun(run_dir, outcome, len(decoys) - synthetic, synthetic)


def _check_skills_unchanged(spec: ExperimentSpec, run_dir: Path) -> None:
    """On resume the staged skills must be the ones the recorded trials saw."""
    old = RunStore(run_dir).read_spec()

    def refs(s: ExperimentSpec) -> set[tuple[str, str]]:
        items = {(r.name, r.package_hash) for r in [*s.support_skills, *s.decoy_skills, *s.sibling_skills]}
        if s.target_skill is not None:
            items.add((s.target_skill.name, s.target_skill.package_hash))
        return items

    changed = sorted({name for name, _ in refs(old) ^ refs(spec)})
    if changed:
        raise UserError(f"cannot resume: skills changed since the run started: {', '.join(changed)}", run_dir)
