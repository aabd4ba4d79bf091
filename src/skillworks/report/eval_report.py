"""The eval report of an ACES run: `eval_summary.json` (the numbers) and `eval_report.md`.

A pure function of the run directory: every number comes from ``results.jsonl`` (metrics, rewards,
timestamps) plus the run's ``experiment.json`` (which comparisons to make) and the trials' ``skills.json``
(the baseline audit). Re-running it on the same directory gives the same report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from skillworks.errors import UserError
from skillworks.report.eval_routing import RoutingRow, routing_markdown, routing_rows
from skillworks.results import TrialResult
from skillworks.stats.intervals import Interval
from skillworks.stats.lift import (
    DEFAULT_BASELINE,
    DEFAULT_TREATMENT,
    MetricLift,
    default_skill_of,
    metric_names,
    skill_lift,
)
from skillworks.stats.passk import mean_pass_at_k
from skillworks.stats.rates import latest_attempts

SUMMARY_FILE = "eval_summary.json"
MARKDOWN_FILE = "eval_report.md"
HTML_FILE = "eval_report.html"
STRESS_JSON = "decoy_stress.json"
STRESS_MD = "decoy_stress.md"
SCHEMA = "skillworks.eval-summary/1"
ACES_METRICS = (
    "overall",
    "security",
    "skill_execution",
    "skill_efficiency",
    "accuracy",
    "goal_accuracy",
    "behavior_check",
)
GRADER_PREFIX = "grader."


class MetricRow(BaseModel):
    metric: str
    n_paired: int
    n_unpaired: int
    treatment_mean: float | None
    baseline_mean: float | None
    lift: float | None
    ci_normal: tuple[float, float] | None
    ci_bootstrap_skills: tuple[float, float] | None
    ci_bootstrap_cells: tuple[float, float] | None
    n_skills: int
    n_cells: int
    positive_fraction: float | None
    ci_note: str | None = None
    """why there is no ``ci_normal`` (the small-n rule of stats.paired), when there is none"""


class CaseRow(BaseModel):
    skill: str
    agent: str
    task_id: str
    delta: float
    treatment: float
    baseline: float
    treatment_trajectories: list[str]
    baseline_trajectories: list[str]
    treatment_trials: list[str] = Field(default_factory=list)
    baseline_trials: list[str] = Field(default_factory=list)


class UnpairedRow(BaseModel):
    skill: str
    agent: str
    task_id: str
    missing: str


class CellRow(BaseModel):
    skill: str
    agent: str
    n_paired: int
    treatment_mean: float
    baseline_mean: float
    lift: float = Field(description="the overall score's mean paired delta in this cell (overall-score Δ)")
    cell_lift: float | None = Field(
        default=None, description="ACES cell lift: the mean over metrics of this cell's per-metric lifts"
    )
    cell_lift_metrics: int = Field(default=0, description="metrics with a paired lift in this cell")


class CaseScore(BaseModel):
    """One case's mean score of one metric on each side (None: not scored on that side)."""

    skill: str
    agent: str
    task_id: str
    metric: str
    treatment: float | None
    baseline: float | None
    treatment_trials: list[str]
    baseline_trials: list[str]


class UnscoredRow(BaseModel):
    """A trial without an overall score, and why (an infrastructure error, or nothing could be graded)."""

    trial_id: str
    task_id: str
    condition: str
    agent: str
    reason: str


class Comparison(BaseModel):
    treatment: str
    baseline: str
    kind: str = Field(
        default="Skill Lift",
        description="'Skill Lift' (a skill vs its target-withheld baseline) or 'Target delta' (product targets: "
        "the paper keeps the name Skill Lift for the former)",
    )
    metrics: list[MetricRow]
    graders: list[MetricRow] = Field(default_factory=list, description="bring-your-own graders, reported apart")
    reward: MetricRow | None = Field(default=None, description="the verifier reward, where tasks have one")
    negative_cases: list[CaseRow] = Field(default_factory=list, description="overall lift < 0")
    unpaired: list[UnpairedRow] = Field(default_factory=list, description="overall: not scored on both sides")
    cells: list[CellRow] = Field(default_factory=list, description="overall, per skill x agent")
    case_scores: list[CaseScore] = Field(default_factory=list, description="case x metric, both sides")


class PassAtKRow(BaseModel):
    condition: str
    k: int
    value: float
    n_cases: int


class AuditRow(BaseModel):
    condition: str
    trials: int
    target_absent: int
    support_present: int
    decoys_present: int
    missing_audit: int
    siblings_present: int = 0


class EvalSummary(BaseModel):
    schema_id: str = SCHEMA
    run_id: str
    skill: str | None
    conditions: list[str]
    agents: list[str]
    providers: list[str]
    judge_model: str | None
    workspace: str | None = Field(description="ACES workspace: isolation (the target alone) or group (with siblings)")
    siblings: list[str] = Field(default_factory=list, description="the target's sibling skills (group workspace)")
    case_files: str | None = Field(default=None, description="input files of evals.json cases: own or all")
    trials_per_case: int
    planned: int
    recorded: int
    errored: int
    graded: int
    wall_sec: float | None
    decoys_visible: int
    decoys_synthetic: int
    pass_threshold: float
    comparisons: list[Comparison]
    pass_at_k: list[PassAtKRow]
    audit: list[AuditRow]
    notes: list[str] = Field(default_factory=list)
    weights: dict[str, float] = Field(default_factory=dict, description="metric -> weight in overall (1 unless set)")
    unscored: list[UnscoredRow] = Field(default_factory=list, description="trials without an overall score")
    routing: list[RoutingRow] = Field(
        default_factory=list, description="group workspace: which skill (target or sibling) the agent loaded"
    )


def _ci(interval: Interval | None) -> tuple[float, float] | None:
    return (interval.low, interval.high) if interval is not None else None


_PRODUCT_PREFIX = "product-"  # product-target conditions (skillworks.evaluate.product)


def _cells(overall: MetricLift | None, per_metric: Sequence[MetricLift]) -> list[CellRow]:
    """Cells of the overall score, each with the ACES cell lift: the mean of its per-metric lifts."""
    by_cell: dict[tuple[str, str], list[float]] = {}
    for lift in per_metric:
        for c in lift.cells:
            by_cell.setdefault((c.skill, c.agent), []).append(c.lift)
    rows = []
    for c in overall.cells if overall else []:
        values = by_cell.get((c.skill, c.agent), [])
        rows.append(
            CellRow(**vars(c), cell_lift=sum(values) / len(values) if values else None, cell_lift_metrics=len(values))
        )
    return rows


def _row(lift: MetricLift) -> MetricRow:
    return MetricRow(
        metric=lift.metric,
        n_paired=lift.n_paired,
        n_unpaired=len(lift.unpaired),
        treatment_mean=lift.treatment_mean,
        baseline_mean=lift.baseline_mean,
        lift=lift.lift,
        ci_normal=_ci(lift.normal_ci),
        ci_note=lift.normal_ci_note,
        ci_bootstrap_skills=_ci(lift.bootstrap_skills_ci),
        ci_bootstrap_cells=_ci(lift.bootstrap_cells_ci),
        n_skills=lift.n_skills,
        n_cells=lift.n_cells,
        positive_fraction=lift.positive_fraction,
    )


@dataclass
class _Run:
    run_dir: Path
    spec: dict[str, Any]
    ev: dict[str, Any]
    results: list[TrialResult]


def _read(run_dir: Path, base: Path) -> _Run:
    """One run's spec and latest results; artifact paths are made relative to `base` (the report's dir)."""
    from skillworks.experiment.store import RunStore

    store = RunStore(run_dir)
    if not store.experiment_path.is_file():
        raise UserError("not a run directory (no experiment.json)", run_dir)
    spec = json.loads(store.experiment_path.read_text())
    results = latest_attempts(store.read_results())
    if run_dir.resolve() != base.resolve():
        prefix = Path(os.path.relpath(run_dir.resolve(), base.resolve()))
        results = [
            r.model_copy(update={"paths": {k: (prefix / v).as_posix() for k, v in r.paths.items()}}) for r in results
        ]
    return _Run(run_dir, spec, (spec.get("extra") or {}).get("eval") or {}, results)


def _case_scores(
    results: Sequence[TrialResult], treatment: str, baseline: str, metrics: Sequence[str]
) -> list[CaseScore]:
    """Per case (skill, agent, task) and metric: the mean over the trials that scored it, on each side."""
    sides: dict[tuple[str, str, str, str], dict[str, list[tuple[str, float]]]] = {}
    for r in results:
        if r.condition not in (treatment, baseline) or r.error is not None:
            continue
        for m in metrics:
            value = r.reward if m == "reward" else r.metrics.get(m)
            key = (default_skill_of(r.task_id), r.agent, r.task_id, m)
            side = sides.setdefault(key, {treatment: [], baseline: []})
            if value is not None:
                side[r.condition].append((r.trial_id, float(value)))

    def mean(xs: list[tuple[str, float]]) -> float | None:
        return sum(v for _, v in xs) / len(xs) if xs else None

    return [
        CaseScore(
            skill=k[0],
            agent=k[1],
            task_id=k[2],
            metric=k[3],
            treatment=mean(v[treatment]),
            baseline=mean(v[baseline]),
            treatment_trials=[t for t, _ in v[treatment]],
            baseline_trials=[t for t, _ in v[baseline]],
        )
        for k, v in sorted(sides.items(), key=lambda kv: (*kv[0][:3], list(metrics).index(kv[0][3])))
        if v[treatment] or v[baseline]
    ]


def _metrics_file(r: TrialResult, base: Path) -> dict[str, Any] | None:
    path = base / r.paths["metrics"] if "metrics" in r.paths else None
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _unscored_reason(r: TrialResult, report: dict[str, Any] | None) -> str:
    if r.error is not None:
        return f"{r.error.phase} / {r.error.category}: {r.error.message}"
    if report is None:
        return "not graded: no metrics.json"
    if report.get("not_graded"):
        return f"not graded: {report['not_graded']}"
    details = report.get("details") or {}
    reasons = sorted({str(d.get("reason")) for d in details.values() if isinstance(d, dict) and d.get("reason")})
    return "no metric could be scored" + (f": {'; '.join(reasons)}" if reasons else "")


def _weights_and_unscored(
    results: Sequence[TrialResult], base: Path, metrics: Sequence[str]
) -> tuple[dict[str, float], bool, list[UnscoredRow]]:
    seen: list[dict[str, float]] = []
    unscored: list[UnscoredRow] = []
    for r in results:
        report = _metrics_file(r, base)
        if "overall" in r.metrics:
            w = report.get("weights") if report else None
            w = {str(k): float(v) for k, v in w.items()} if isinstance(w, dict) else {}
            if w not in seen:
                seen.append(w)
        else:
            unscored.append(
                UnscoredRow(
                    trial_id=r.trial_id,
                    task_id=r.task_id,
                    condition=r.condition,
                    agent=r.agent,
                    reason=_unscored_reason(r, report),
                )
            )
    first = seen[0] if seen else {}
    weights = {m: first.get(m, 1.0) for m in metrics if m != "overall"}
    return weights, len(seen) > 1, unscored


def is_success(result: TrialResult, threshold: float) -> bool:
    """For pass@k: the verifier's reward is 1 where there is one, else the overall metric >= threshold."""
    if result.reward is not None:
        return result.reward >= 1.0
    overall = result.metrics.get("overall")
    return overall is not None and overall >= threshold


def _audit(run: _Run, baselines: set[str], base: Path) -> dict[str, AuditRow]:
    spec = run.spec
    target = (spec.get("target_skill") or {}).get("name")
    support = {s["name"] for s in spec.get("support_skills") or []}
    decoys = {s["name"] for s in spec.get("decoy_skills") or []}
    siblings = {s["name"] for s in spec.get("sibling_skills") or []}
    rows: dict[str, AuditRow] = {}
    for r in run.results:
        if r.condition not in baselines:
            continue
        row = rows.setdefault(
            r.condition,
            AuditRow(
                condition=r.condition, trials=0, target_absent=0, support_present=0, decoys_present=0, missing_audit=0
            ),
        )
        row.trials += 1
        path = base / r.paths["skills"] if "skills" in r.paths else None
        if path is None or not path.is_file():
            row.missing_audit += 1
            continue
        visible = {v["name"] for v in json.loads(path.read_text()).get("visible", [])}
        row.target_absent += int(target not in visible)
        row.support_present += int(support <= visible)
        row.decoys_present += int(decoys <= visible)
        row.siblings_present += int(siblings <= visible)
    return rows


def build_eval_summary(
    run_dirs: Path | Sequence[Path], *, out: Path | None = None, resamples: int = 2000, seed: int = 0
) -> EvalSummary:
    """The eval summary of one run directory, or of several combined (e.g. one run per skill, so that the
    cluster bootstrap has several skills); trajectory links are relative to `out` (default: the first run)."""
    dirs = [run_dirs] if isinstance(run_dirs, Path) else list(run_dirs)
    if not dirs:
        raise UserError("give at least one run directory")
    base = out or dirs[0]
    runs = [_read(d, base) for d in dirs]
    ev = runs[0].ev
    results = [r for run in runs for r in run.results]
    comparisons_spec: list[dict[str, str]] = []
    for run in runs:
        for pair in run.ev.get("comparisons") or [{"treatment": DEFAULT_TREATMENT, "baseline": DEFAULT_BASELINE}]:
            if pair not in comparisons_spec:
                comparisons_spec.append(pair)
    names = metric_names(results)
    aces = [m for m in ACES_METRICS if m in names]
    graders = sorted(m for m in names if m.startswith(GRADER_PREFIX))
    has_reward = any(r.reward is not None for r in results)
    comparisons: list[Comparison] = []
    for pair in comparisons_spec:
        kw: dict[str, Any] = {
            "treatment": pair["treatment"],
            "baseline": pair["baseline"],
            "resamples": resamples,
            "seed": seed,
        }
        lifts = {m: skill_lift(results, m, **kw) for m in aces}
        overall = lifts.get("overall")
        comparisons.append(
            Comparison(
                treatment=pair["treatment"],
                baseline=pair["baseline"],
                kind="Target delta" if pair["treatment"].startswith(_PRODUCT_PREFIX) else "Skill Lift",
                metrics=[_row(lifts[m]) for m in aces],
                graders=[_row(skill_lift(results, m, **kw)) for m in graders],
                reward=_row(skill_lift(results, "reward", **kw)) if has_reward else None,
                negative_cases=[
                    CaseRow(
                        skill=c.key.skill,
                        agent=c.key.agent,
                        task_id=c.key.task_id,
                        delta=c.delta,
                        treatment=c.treatment.mean,
                        baseline=c.baseline.mean,
                        treatment_trajectories=list(c.treatment.trajectories),
                        baseline_trajectories=list(c.baseline.trajectories),
                        treatment_trials=list(c.treatment.trial_ids),
                        baseline_trials=list(c.baseline.trial_ids),
                    )
                    for c in (overall.negative_cases if overall else [])
                ],
                unpaired=[
                    UnpairedRow(skill=u.key.skill, agent=u.key.agent, task_id=u.key.task_id, missing=u.missing)
                    for u in (overall.unpaired if overall else [])
                ],
                cells=_cells(overall, [lifts[m] for m in aces if m != "overall"]),
                case_scores=_case_scores(
                    results, pair["treatment"], pair["baseline"], [*aces, *(["reward"] if has_reward else [])]
                ),
            )
        )
    threshold = float(ev.get("pass_threshold", 1.0))
    trials = max(int(run.spec.get("trials", 1)) for run in runs)
    conditions = list(dict.fromkeys(c for run in runs for c in run.spec.get("conditions") or []))
    pass_rows: list[PassAtKRow] = []
    if trials > 1:
        for condition in conditions:
            counts: dict[str, list[int]] = {}
            for r in results:
                if r.condition == condition and r.outcome != "error" and r.error is None:
                    entry = counts.setdefault(f"{r.agent}/{r.task_id}", [0, 0])
                    entry[0] += 1
                    entry[1] += int(is_success(r, threshold))
            for k in range(1, trials + 1):
                pk = mean_pass_at_k([(case, n, c) for case, (n, c) in counts.items()], k)
                if pk is not None:
                    pass_rows.append(PassAtKRow(condition=condition, k=k, value=pk.value, n_cases=pk.n_cases))
    baselines = {pair["baseline"] for pair in comparisons_spec}
    audit: dict[str, AuditRow] = {}
    for run in runs:
        for cond, row in _audit(run, baselines, base).items():
            if cond in audit:
                for key in ("trials", "target_absent", "support_present", "decoys_present", "siblings_present",
                            "missing_audit"):  # fmt: skip
                    setattr(audit[cond], key, getattr(audit[cond], key) + getattr(row, key))
            else:
                audit[cond] = row
    started = [r.started_at for r in results]
    finished = [r.finished_at for r in results]
    providers = sorted({r.provider for r in results if r.provider})
    notes: list[str] = []
    if "scripted" in providers or any(str(run.ev.get("judge_provider")) == "scripted" for run in runs):
        notes.append("scripted provider: replayed model turns (a harness check), not a real model's result")
    synthetic = sum(int(run.ev.get("decoys_synthetic", 0)) for run in runs)
    visible = sum(int(run.ev.get("decoys_visible", 0)) for run in runs)
    if synthetic:
        notes.append(f"{synthetic} of {visible} decoy skills were synthetic")
    if any(run.ev.get("judge_model") is None for run in runs):
        notes.append("no judge model: accuracy and behavior_check are not scored (pass --judge-model)")
    weights, weights_vary, unscored = _weights_and_unscored(results, base, aces)
    if weights_vary:
        notes.append(
            "the metric weights differ between trials (per-case weights in evals.json); the first set is shown"
        )
    if len(runs) > 1:
        notes.append(f"{len(runs)} run directories combined: {', '.join(str(run.run_dir) for run in runs)}")
    planned = 0
    agents: list[str] = []
    for run in runs:
        run_agents = [a.get("name", "") for a in run.spec.get("agents") or []]
        agents += [a for a in run_agents if a not in agents]
        planned += (
            len(run.spec.get("tasks") or [])
            * len(run.spec.get("conditions") or [])
            * len(run_agents)
            * int(run.spec.get("trials", 1))
        )
    skills = list(dict.fromkeys(str(run.ev.get("skill")) for run in runs if run.ev.get("skill")))
    return EvalSummary(
        run_id=", ".join(str(run.spec.get("run_id")) for run in runs),
        skill=", ".join(skills) or None,
        conditions=conditions,
        agents=agents,
        providers=providers,
        judge_model=ev.get("judge_model"),
        workspace=ev.get("workspace"),
        siblings=list(dict.fromkeys(n for run in runs for n in run.ev.get("sibling_names") or [])),
        case_files=ev.get("case_files"),
        trials_per_case=trials,
        planned=planned,
        recorded=len(results),
        errored=sum(1 for r in results if r.outcome == "error"),
        graded=sum(1 for r in results if "overall" in r.metrics),
        wall_sec=(max(finished) - min(started)).total_seconds() if results else None,
        decoys_visible=visible,
        decoys_synthetic=synthetic,
        pass_threshold=threshold,
        comparisons=comparisons,
        pass_at_k=pass_rows,
        audit=list(audit.values()),
        notes=notes,
        weights=weights,
        unscored=unscored,
        routing=routing_rows((run.spec, run.results) for run in runs),
    )


def _f(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _i(ci: tuple[float, float] | None) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci is not None else "–"


def _metric_table(rows: Sequence[MetricRow]) -> list[str]:
    out = [
        "| metric | paired | unpaired | treatment | baseline | lift | 95% CI (cases) | bootstrap (skills) "
        "| bootstrap (skill×agent) | positive |",
        "|---|---:|---:|---:|---:|---:|---|---|---|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r.metric} | {r.n_paired} | {r.n_unpaired} | {_f(r.treatment_mean)} | {_f(r.baseline_mean)} "
            f"| {_f(r.lift, True)} | {_i(r.ci_normal) if r.ci_normal or not r.ci_note else r.ci_note} "
            f"| {_i(r.ci_bootstrap_skills)} | {_i(r.ci_bootstrap_cells)} "
            f"| {_f(r.positive_fraction)} |"
        )
    return out


def _workspace(s: EvalSummary) -> str:
    """e.g. ``group (target + siblings a, b)``; case input files after a semicolon."""
    text = s.workspace or "–"
    if s.workspace == "group":
        text += f" (target + siblings {', '.join(s.siblings) or '–'})"
    elif s.workspace == "isolation":
        text += " (the target alone)"
    return text + (f"; case files {s.case_files}" if s.case_files else "")


def _ci_text(row: MetricRow) -> str:
    """``95% CI [a, b]``, or the small-n note when the lift has no interval."""
    return row.ci_note if row.ci_normal is None and row.ci_note else f"95% CI {_i(row.ci_normal)}"


def render_eval_markdown(s: EvalSummary) -> str:
    lines = [f"# Eval report: {s.skill or s.run_id}", ""]
    lines.append(
        f"run `{s.run_id}` · agents {', '.join(s.agents)} · providers {', '.join(s.providers) or '–'} · judge "
        f"{s.judge_model or '–'} · workspace {_workspace(s)} · {s.trials_per_case} trial(s) per case · "
        f"{s.recorded}/{s.planned} trials recorded, {s.errored} errored, {s.graded} graded · decoys visible "
        f"{s.decoys_visible} · wall {_f(s.wall_sec)} s"
    )
    lines.append("")
    for note in s.notes:
        lines.append(f"> note: {note}")
    if s.notes:
        lines.append("")
    if s.weights:
        used = ", ".join(f"{m} {w:g}" for m, w in s.weights.items())
        lines += [f"Metric weights in the overall score: {used}.", ""]
    for c in s.comparisons:
        lines += [f"## {c.kind}: {c.treatment} vs {c.baseline}", ""]
        overall = next((m for m in c.metrics if m.metric == "overall"), None)
        if overall is not None:
            lines += [
                f"Overall lift **{_f(overall.lift, True)}** ({_ci_text(overall)}) over "
                f"{overall.n_paired} paired case(s); positive in {_f(overall.positive_fraction)} of them.",
                "",
            ]
        lines += [*_metric_table(c.metrics), ""]
        if c.reward is not None:
            lines += ["### Verifier reward (beside the metrics)", "", *_metric_table([c.reward]), ""]
        if c.graders:
            lines += ["### Custom graders (not in the overall score)", "", *_metric_table(c.graders), ""]
        if c.cells:
            lines += [
                "### Cells (skill × agent)",
                "",
                "Cell lift: the mean over metrics of the cell's per-metric lifts (ACES); overall-score Δ: the "
                "mean paired delta of the weighted overall score.",
                "",
                "| skill | agent | paired | treatment (overall) | baseline (overall) | overall-score Δ | cell lift |",
                "|---|---|---:|---:|---:|---:|---:|",
            ]
            lines += [
                f"| {x.skill} | {x.agent} | {x.n_paired} | {_f(x.treatment_mean)} | {_f(x.baseline_mean)} "
                f"| {_f(x.lift, True)} | {_f(x.cell_lift, True)} |"
                for x in c.cells
            ]
            lines.append("")
        lines += ["### Negative-lift cases (overall)", ""]
        if not c.negative_cases:
            lines.append("none")
        for n in c.negative_cases:
            t_links = ", ".join(f"[{c.treatment}]({p})" for p in n.treatment_trajectories)
            b_links = ", ".join(f"[{c.baseline}]({p})" for p in n.baseline_trajectories)
            lines.append(
                f"- `{n.task_id}` ({n.agent}): {_f(n.treatment)} vs {_f(n.baseline)} = {_f(n.delta, True)} · "
                f"{t_links} · {b_links}"
            )
        lines.append("")
        if c.unpaired:
            lines += ["### Unpaired cases (overall)", ""]
            lines += [f"- `{u.task_id}` ({u.agent}): no score for the {u.missing}" for u in c.unpaired]
            lines.append("")
    if s.pass_at_k:
        lines += ["## pass@k", "", "| condition | k | pass@k | cases |", "|---|---:|---:|---:|"]
        lines += [f"| {p.condition} | {p.k} | {_f(p.value)} | {p.n_cases} |" for p in s.pass_at_k]
        lines += ["", f"success: verifier reward 1, else overall ≥ {s.pass_threshold:g}", ""]
    lines += routing_markdown(s.routing)
    if s.audit:
        lines += [
            "## Baseline audit (skills.json)",
            "",
            "| condition | trials | target absent | support present | siblings present | decoys present | no audit |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {a.condition} | {a.trials} | {a.target_absent} | {a.support_present} | {a.siblings_present} "
            f"| {a.decoys_present} | {a.missing_audit} |"
            for a in s.audit
        ]
        lines.append("")
    return "\n".join(lines)


def write_eval_report(run_dirs: Path | Sequence[Path], out: Path | None = None) -> dict[str, Path]:
    """Write eval_summary.json, eval_report.md and eval_report.html (with the runs' trajectory pages) for
    one run dir (into it) or several (into `out`)."""
    dirs = [run_dirs] if isinstance(run_dirs, Path) else list(run_dirs)
    if out is None and len(dirs) > 1:
        raise UserError("give an output directory to combine several run directories")
    out = out or dirs[0]
    out.mkdir(parents=True, exist_ok=True)
    summary = build_eval_summary(dirs, out=out)
    json_path, md_path, html_path = out / SUMMARY_FILE, out / MARKDOWN_FILE, out / HTML_FILE
    json_path.write_text(summary.model_dump_json(indent=2))
    md_path.write_text(render_eval_markdown(summary))
    html_path.write_text(_eval_html(summary, dirs, out, html_path), encoding="utf-8")
    return {"eval_summary": json_path, "eval_report": md_path, "eval_html": html_path}


def _eval_html(summary: EvalSummary, dirs: Sequence[Path], out: Path, html_path: Path) -> str:
    """The HTML page, after writing the runs' trajectory pages (which link back to it and the run report)."""
    from skillworks.report.eval_html import render_eval_html
    from skillworks.report.trial_pages import write_trial_pages
    from skillworks.report.write import baselines_of

    reports = [p for p in (out / "report.html",) if p.is_file()] + [html_path]
    pages = {}
    for run_dir in dirs:
        from skillworks.experiment.store import RunStore

        results = RunStore(run_dir).read_results()
        pages[str(run_dir)] = write_trial_pages(
            run_dir, results, baselines=baselines_of(summary.conditions, run_dir), reports=reports
        )
    return render_eval_html(summary, out, pages)


def read_eval_summary(path: Path) -> EvalSummary:
    return EvalSummary.model_validate_json(path.read_text())


class StressRow(BaseModel):
    decoys: int
    synthetic: int
    run_dir: str
    n_paired: int
    lift: float | None
    ci_normal: tuple[float, float] | None
    wall_sec: float | None
    trials: int


def write_decoy_stress_report(root: Path, run_dirs: Sequence[Path]) -> dict[str, Path]:
    rows: list[StressRow] = []
    for run_dir in run_dirs:
        s = build_eval_summary(run_dir)
        overall = next((m for m in s.comparisons[0].metrics if m.metric == "overall"), None) if s.comparisons else None
        rows.append(
            StressRow(
                decoys=s.decoys_visible,
                synthetic=s.decoys_synthetic,
                run_dir=run_dir.relative_to(root).as_posix() if run_dir.is_relative_to(root) else str(run_dir),
                n_paired=overall.n_paired if overall else 0,
                lift=overall.lift if overall else None,
                ci_normal=overall.ci_normal if overall else None,
                wall_sec=s.wall_sec,
                trials=s.recorded,
            )
        )
    json_path, md_path = root / STRESS_JSON, root / STRESS_MD
    json_path.write_text(json.dumps([r.model_dump() for r in rows], indent=2))
    lines = [
        "# Visible-skill stress",
        "",
        "| decoys visible | synthetic | paired | overall lift | 95% CI | wall s | trials | run |",
        "|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    lines += [
        f"| {r.decoys} | {r.synthetic} | {r.n_paired} | {_f(r.lift, True)} | {_i(r.ci_normal)} | {_f(r.wall_sec)} "
        f"| {r.trials} | [{r.run_dir}]({r.run_dir}/{MARKDOWN_FILE}) |"
        for r in rows
    ]
    md_path.write_text("\n".join(lines) + "\n")
    return {"decoy_stress": json_path, "decoy_stress_md": md_path}
