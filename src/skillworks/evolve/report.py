"""The evolve report (SkillFlow's Table 1 and more), a pure function of a run directory:
``evolve_summary.json`` and ``evolve_report.md``.

Per condition (evolved / vanilla / history): completion rate (mean reward over the family tasks; an
errored trial counts 0) with a Wilson interval on the solved share, turns (agent steps), cost and output
tokens per task. Libraries: final and cumulative #skills; %use (share of evolved tasks that read or ran a
stored skill, from skill-use detection). Δ block vs vanilla: absolute for completion (pp, with a paired
bootstrap interval over tasks) and turns, relative % for cost and output tokens. Per family: the learning
curve (reward by position) and the family × condition gain table; the patch history.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillworks.evolve.driver import CONDITIONS, EXTRA_KEY, SEED_GATE_FILE, HistoryLine, family_dir, read_history
from skillworks.experiment.store import RunStore
from skillworks.results import TrialResult
from skillworks.stats.delta import paired_bootstrap_delta
from skillworks.stats.intervals import wilson_interval
from skillworks.stats.rates import latest_attempts


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConditionRow(_Strict):
    condition: str
    tasks: int
    completion: float
    solved: int
    completion_ci: tuple[float, float] | None
    errors: int
    turns_mean: float | None
    cost_usd_mean: float
    output_tokens_mean: float


class DeltaBlock(_Strict):
    condition: str
    baseline: str
    completion_pp: float
    completion_ci_pp: tuple[float, float] | None
    turns: float | None
    cost_pct: float | None
    output_tokens_pct: float | None


class FamilyRow(_Strict):
    family: str
    tasks: int
    final_skills: int
    cumulative_skills: int
    use_pct: float | None
    patches: dict[str, int]
    completion: dict[str, float]
    gain_pp: dict[str, float]
    curve: list[dict[str, object]]
    history: list[HistoryLine]
    seed_rejected: list[dict[str, Any]] = Field(
        default_factory=list, description="--seed-skills the gate kept out of v0 (seed-gate.json): skill, reasons"
    )


class EvolveSummary(_Strict):
    run_id: str
    scripted_provider: bool
    conditions: list[ConditionRow]
    deltas: list[DeltaBlock]
    final_skills: int
    cumulative_skills: int
    skills_per_family: float | None = Field(
        default=None, description="#skills as SkillFlow's Table 1: the mean over families of the final library"
    )
    cumulative_per_family: float | None = Field(
        default=None, description="mean over families of the skills any version held"
    )
    use_pct: float | None
    patch_tokens: dict[str, float]
    families: list[FamilyRow]


def _turns(run_dir: Path, r: TrialResult) -> int | None:
    path = run_dir / r.paths["trajectory"] if "trajectory" in r.paths else None
    if path is None or not path.is_file():
        return None
    steps = json.loads(path.read_text(encoding="utf-8")).get("steps") or []
    return sum(1 for s in steps if s.get("source") == "agent")


def _used_skill(r: TrialResult) -> bool:
    return bool(r.skill_use.read or r.skill_use.scripts_run or r.skill_use.invoked)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rel(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old == 0:
        return None
    return (new - old) / old * 100.0


def build_evolve_summary(run_dir: Path, seed: int = 0) -> EvolveSummary:
    store = RunStore(run_dir)
    spec = store.read_spec()
    info = spec.extra.get(EXTRA_KEY) or {}
    families: list[dict[str, object]] = list(info.get("families") or [])
    results = latest_attempts(store.read_results())
    by_key = {(r.task_id, r.condition): r for r in results}
    all_tasks = [str(t) for f in families for t in f["order"]]  # type: ignore[attr-defined]

    def reward(task: str, cond: str) -> float:
        r = by_key.get((task, cond))
        return float(r.reward) if r is not None and r.reward is not None and r.error is None else 0.0

    rows: list[ConditionRow] = []
    for cond in CONDITIONS:
        rs = [by_key[(t, cond)] for t in all_tasks if (t, cond) in by_key]
        rewards = [reward(t, cond) for t in all_tasks]
        solved = sum(1 for v in rewards if v >= 1.0)
        n = len(all_tasks)
        ci = wilson_interval(solved / n, n) if n else None
        turns = [x for x in (_turns(run_dir, r) for r in rs) if x is not None]
        rows.append(
            ConditionRow(
                condition=cond,
                tasks=n,
                completion=sum(rewards) / n if n else 0.0,
                solved=solved,
                completion_ci=(ci.low, ci.high) if ci else None,
                errors=sum(1 for r in rs if r.error is not None) + (n - len(rs)),
                turns_mean=_mean([float(x) for x in turns]),
                cost_usd_mean=sum(r.usage.cost_usd for r in rs) / n if n else 0.0,
                output_tokens_mean=sum(r.usage.output_tokens for r in rs) / n if n else 0.0,
            )
        )
    by_cond = {r.condition: r for r in rows}
    deltas = []
    for cond in ("evolved", "history"):
        a, b = by_cond[cond], by_cond["vanilla"]
        pd = paired_bootstrap_delta(
            {t: reward(t, cond) for t in all_tasks}, {t: reward(t, "vanilla") for t in all_tasks}, seed=seed
        )
        deltas.append(
            DeltaBlock(
                condition=cond,
                baseline="vanilla",
                completion_pp=(a.completion - b.completion) * 100.0,
                completion_ci_pp=(pd.ci_low_pp, pd.ci_high_pp)
                if pd.ci_low_pp is not None and pd.ci_high_pp is not None
                else None,
                turns=a.turns_mean - b.turns_mean if a.turns_mean is not None and b.turns_mean is not None else None,
                cost_pct=_rel(a.cost_usd_mean, b.cost_usd_mean),
                output_tokens_pct=_rel(a.output_tokens_mean, b.output_tokens_mean),
            )
        )

    fam_rows: list[FamilyRow] = []
    used_all: list[bool] = []
    patch_in = patch_out = 0
    patch_cost = 0.0
    for f in families:
        name = str(f["name"])
        order = [str(t) for t in f["order"]]  # type: ignore[attr-defined]
        fdir = family_dir(run_dir, name)
        history = read_history(fdir / "history.jsonl")
        names: set[str] = set()
        final = 0
        for v in sorted(
            (p for p in (fdir / "library").glob("v*") if p.name[1:].isdigit()), key=lambda p: int(p.name[1:])
        ):
            skills = {p.name for p in v.iterdir() if (p / "SKILL.md").is_file()}
            names |= skills
            final = len(skills)
        used = [_used_skill(by_key[(t, "evolved")]) for t in order if (t, "evolved") in by_key]
        used_all += used
        patches: dict[str, int] = {}
        for h in history:
            patches[h.patch_status] = patches.get(h.patch_status, 0) + 1
            patch_in += h.patch_usage.input_tokens
            patch_out += h.patch_usage.output_tokens
            patch_cost += h.patch_usage.cost_usd
        completion = {c: sum(reward(t, c) for t in order) / len(order) for c in CONDITIONS}
        seed_gate = fdir / SEED_GATE_FILE
        seed_rejected = (
            json.loads(seed_gate.read_text(encoding="utf-8")).get("rejected", []) if seed_gate.is_file() else []
        )
        fam_rows.append(
            FamilyRow(
                family=name,
                tasks=len(order),
                final_skills=final,
                cumulative_skills=len(names),
                use_pct=sum(used) / len(used) * 100.0 if used else None,
                patches=patches,
                completion=completion,
                gain_pp={c: (completion[c] - completion["vanilla"]) * 100.0 for c in ("evolved", "history")},
                curve=[
                    {"position": i, "task_id": t, **{c: reward(t, c) for c in CONDITIONS}}
                    for i, t in enumerate(order, start=1)
                ],
                history=history,
                seed_rejected=[{"skill": v.get("skill"), "reasons": v.get("reasons") or []} for v in seed_rejected],
            )
        )
    return EvolveSummary(
        run_id=spec.run_id,
        scripted_provider=any(r.provider == "scripted" for r in results),
        conditions=rows,
        deltas=deltas,
        final_skills=sum(f.final_skills for f in fam_rows),
        cumulative_skills=sum(f.cumulative_skills for f in fam_rows),
        skills_per_family=sum(f.final_skills for f in fam_rows) / len(fam_rows) if fam_rows else None,
        cumulative_per_family=sum(f.cumulative_skills for f in fam_rows) / len(fam_rows) if fam_rows else None,
        use_pct=sum(used_all) / len(used_all) * 100.0 if used_all else None,
        patch_tokens={"input_tokens": patch_in, "output_tokens": patch_out, "cost_usd": patch_cost},
        families=fam_rows,
    )


def _f(v: float | None, digits: int = 1, suffix: str = "") -> str:
    return "—" if v is None else f"{v:.{digits}f}{suffix}"


def _signed(v: float | None, digits: int = 1, suffix: str = "") -> str:
    return "—" if v is None else f"{v:+.{digits}f}{suffix}"


def render_evolve_markdown(s: EvolveSummary) -> str:
    out = [f"# Skill evolution — run {s.run_id}", ""]
    if s.scripted_provider:
        out += ["> NOTE: results produced with the scripted test provider — not a model evaluation", ""]
    out += ["## Conditions (SkillFlow Table 1)", ""]
    out += [
        "| Condition | Tasks | Completion | Solved (95% Wilson CI) | Errors | Turns | Cost USD / task "
        "| Output tok / task |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in s.conditions:
        ci = f" [{r.completion_ci[0] * 100:.1f}, {r.completion_ci[1] * 100:.1f}]" if r.completion_ci else ""
        out.append(
            f"| {r.condition} | {r.tasks} | {r.completion * 100:.1f}% | {r.solved}/{r.tasks}{ci} | {r.errors} | "
            f"{_f(r.turns_mean)} | {r.cost_usd_mean:.4f} | {r.output_tokens_mean:.0f} |"
        )
    out += ["", "## Δ vs vanilla", ""]
    out += [
        "| Condition | Completion Δ pp (95% paired CI) | Turns Δ | Cost Δ % | Output tokens Δ % |",
        "|---|---|---|---|---|",
    ]
    for d in s.deltas:
        ci = f" [{d.completion_ci_pp[0]:+.1f}, {d.completion_ci_pp[1]:+.1f}]" if d.completion_ci_pp else ""
        out.append(
            f"| {d.condition} | {d.completion_pp:+.1f}{ci} | {_signed(d.turns)} | {_signed(d.cost_pct, 1, '%')} | "
            f"{_signed(d.output_tokens_pct, 1, '%')} |"
        )
    out += ["", "## Libraries", ""]
    out += [
        f"- #skills (per-family mean of the final library, SkillFlow Table 1): {_f(s.skills_per_family, 1, '')}; "
        f"cumulative per family: {_f(s.cumulative_per_family, 1, '')} (over all {len(s.families)} families: "
        f"final {s.final_skills}, cumulative {s.cumulative_skills})",
        f"- %use (evolved tasks that read or ran a stored skill): {_f(s.use_pct, 1, '%')}",
        f"- patch calls: {s.patch_tokens['input_tokens']:,.0f} input / {s.patch_tokens['output_tokens']:,.0f} output "
        f"tokens, {s.patch_tokens['cost_usd']:.4f} USD",
        "",
    ]
    out += ["## Family × condition (completion; gain vs vanilla)", ""]
    out += [
        "| Family | Tasks | evolved | vanilla | history | evolved gain pp | history gain pp | %use |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in s.families:
        out.append(
            f"| {f.family} | {f.tasks} | {f.completion['evolved'] * 100:.1f}% | {f.completion['vanilla'] * 100:.1f}% | "
            f"{f.completion['history'] * 100:.1f}% | {f.gain_pp['evolved']:+.1f} | {f.gain_pp['history']:+.1f} | "
            f"{_f(f.use_pct, 1, '%')} |"
        )
    for f in s.families:
        out += ["", f"## Learning curve: {f.family}", ""]
        out += [
            "| Position | Task | evolved | vanilla | history | Patch | #skills after |",
            "|---|---|---|---|---|---|---|",
        ]
        hist = {h.step: h for h in f.history}
        for p in f.curve:
            pos = int(str(p["position"]))
            h = hist.get(pos)
            patch = "—" if h is None else h.patch_status + (f" ({h.reason})" if h.reason else "")
            out.append(
                f"| {pos} | {p['task_id']} | {p['evolved']} | {p['vanilla']} | {p['history']} | "
                f"{patch.replace('|', '/')} | {h.skills if h else '—'} |"
            )
        out += ["", f"Patches: {', '.join(f'{k} {v}' for k, v in sorted(f.patches.items())) or 'none'}."]
        for v in f.seed_rejected:
            reasons = [str(r) for r in v["reasons"]] or ["(no reason recorded)"]
            out += ["", f"Seed skill {v['skill']!r} kept out of v0 by the gate: {reasons[0]}"]
    out.append("")
    return "\n".join(out)


def write_evolve_report(run_dir: Path) -> dict[str, Path]:
    summary = build_evolve_summary(run_dir)
    json_path = run_dir / "evolve_summary.json"
    md_path = run_dir / "evolve_report.md"
    json_path.write_text(summary.model_dump_json(indent=2))
    md_path.write_text(render_evolve_markdown(summary))
    from skillworks.evolve.report_html import render_evolve_html

    html_path = run_dir / "evolve_report.html"
    html_path.write_text(render_evolve_html(summary), encoding="utf-8")
    return {"evolve_json": json_path, "evolve_md": md_path, "evolve_html": html_path}
