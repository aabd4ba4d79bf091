"""Import a table of per-task results (task × configuration × condition: mean reward, trial count), such as
the SkillsBench leaderboard registry, and compute the paper's statistics from it.

Accepted files: a JSON array of objects (or `{"rows": [...]}`), or a CSV with a header. Columns (first alias
found wins): task `task`|`task_id`; configuration `configuration`|`config`|`model`|`agent`; condition
`condition`; mean reward `mean_reward`|`reward` (on [0, 1]) or `score` (percent, as the registry has it);
trials `trials`|`n_trials` (optional). Condition names "No Skills" / "With Skills" (the registry's) read as
`none` / `curated`; others are kept as written.

Statistics, as SkillsBench defines them: per configuration, the pass rate of a condition is the task-macro
mean of the tasks' mean rewards; Δ = with − without over the tasks present on both sides (paired), with a
paired bootstrap interval over tasks; g = Δ / (1 − without). The mean row is the mean over configurations of
each condition's pass rate, of Δ, and of g (defined values only: the mean of per-configuration g, not g of
the means). A cell (task × configuration × condition) absent from the table is counted and listed as
missing, never imputed; a task on one side only is unpaired and left out of Δ and g.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillworks.errors import UserError
from skillworks.stats.delta import DEFAULT_RESAMPLES, mean_of_defined, normalised_gain, paired_bootstrap_delta

CONDITION_NAMES = {"no skills": "none", "with skills": "curated", "curated skills": "curated"}
_ALIASES = {
    "task": ("task", "task_id"),
    "configuration": ("configuration", "config", "model", "agent"),
    "condition": ("condition",),
    "trials": ("trials", "n_trials"),
}


@dataclass(frozen=True)
class ResultRow:
    task: str
    configuration: str
    condition: str
    mean_reward: float
    trials: int | None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigurationStats(_Strict):
    configuration: str
    rates: dict[str, float] = Field(description="condition -> task-macro mean reward over its tasks")
    n_tasks: dict[str, int] = Field(description="condition -> tasks present")
    missing: dict[str, list[str]] = Field(description="condition -> tasks of the table absent for it")
    n_paired: int
    unpaired_tasks: list[str]
    without_rate: float | None = Field(description="baseline rate over the paired tasks")
    with_rate: float | None = Field(description="treatment rate over the paired tasks")
    delta_pp: float | None
    ci_low_pp: float | None
    ci_high_pp: float | None
    g: float | None


class TableSummary(_Strict):
    """What `skillworks import results --out` writes (and reads back)."""

    schema_version: int = 1
    source: str
    baseline: str
    treatment: str
    tasks: int
    rows: int
    configurations: list[ConfigurationStats]
    mean_rates: dict[str, float | None] = Field(description="condition -> mean over configurations")
    mean_delta_pp: float | None
    mean_g: float | None = Field(description="mean of the per-configuration g (defined values)")
    n_g_undefined: int
    missing_cells: int
    unpaired_cells: int
    bootstrap_resamples: int
    bootstrap_seed: int


def read_results_table(path: Path) -> list[ResultRow]:
    """Parse the table; any bad row is a UserError naming the file and the row."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError("file not found", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read: {exc}", path) from None
    records: list[Any]
    if text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"not valid JSON: {exc.msg} at line {exc.lineno}", path) from None
        found = data.get("rows") if isinstance(data, dict) else data
        if not isinstance(found, list):
            raise UserError("expected a JSON array of rows (or an object with 'rows')", path)
        records = found
        where = "row"
    else:
        records = list(csv.DictReader(io.StringIO(text)))
        where = "line"
    if not records:
        raise UserError("no rows", path)
    rows: list[ResultRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    for i, record in enumerate(records):
        number = i + 2 if where == "line" else i + 1
        label = f"{where} {number}"
        if not isinstance(record, dict):
            raise UserError(f"{label}: expected an object", path)
        row = _row(record, label, path)
        key = (row.task, row.configuration, row.condition)
        if key in seen:
            raise UserError(f"{label}: duplicate of {where} {seen[key]} (task, configuration, condition)", path)
        seen[key] = number
        rows.append(row)
    return rows


def _field(record: dict[str, Any], name: str) -> Any:
    return next((record[a] for a in _ALIASES[name] if record.get(a) not in (None, "")), None)


def _row(record: dict[str, Any], label: str, path: Path) -> ResultRow:
    values = {name: _field(record, name) for name in ("task", "configuration", "condition")}
    for name, value in values.items():
        if value is None:
            raise UserError(f"{label}: missing {name} (one of: {', '.join(_ALIASES[name])})", path)
    reward_raw = next((record[k] for k in ("mean_reward", "reward") if record.get(k) not in (None, "")), None)
    if reward_raw is not None:
        raw, scale = reward_raw, 1.0
    elif record.get("score") not in (None, ""):
        raw, scale = record["score"], 100.0
    else:
        raise UserError(f"{label}: missing mean_reward, reward or score", path)
    try:
        reward = float(raw) / scale
    except (TypeError, ValueError):
        raise UserError(f"{label}: not a number: {raw!r}", path) from None
    if math.isnan(reward) or not 0.0 <= reward <= 1.0:
        raise UserError(f"{label}: mean reward {raw!r} is outside [0, {scale:g}]", path)
    trials_raw = _field(record, "trials")
    trials = None
    if trials_raw is not None:
        try:
            trials = int(trials_raw)
        except (TypeError, ValueError):
            raise UserError(f"{label}: trials is not an integer: {trials_raw!r}", path) from None
    condition = str(values["condition"]).strip()
    return ResultRow(
        str(values["task"]),
        str(values["configuration"]),
        CONDITION_NAMES.get(condition.lower(), condition),
        reward,
        trials,
    )


def table_statistics(
    rows: list[ResultRow],
    *,
    source: str = "",
    baseline: str = "none",
    treatment: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> TableSummary:
    """Per-configuration rates, Δ (paired bootstrap CI) and g, and the mean row (see the module docstring)."""
    conditions = list(dict.fromkeys(r.condition for r in rows))
    if baseline not in conditions:
        raise UserError(f"baseline condition '{baseline}' is not in the table (conditions: {', '.join(conditions)})")
    others = [c for c in conditions if c != baseline]
    treatment = treatment or ("curated" if "curated" in others else (others[0] if others else None))
    if treatment is None or treatment not in conditions:
        raise UserError(f"treatment condition '{treatment}' is not in the table (conditions: {', '.join(conditions)})")
    tasks = sorted({r.task for r in rows})
    cells: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        cells[r.configuration][r.condition][r.task] = r.mean_reward
    configs: list[ConfigurationStats] = []
    missing_cells = unpaired_cells = 0
    for name in sorted(cells):
        by_cond = cells[name]
        rates = {c: sum(by_cond[c].values()) / len(by_cond[c]) for c in conditions if by_cond.get(c)}
        missing = {c: [t for t in tasks if t not in by_cond.get(c, {})] for c in (baseline, treatment)}
        missing_cells += sum(len(v) for v in missing.values())
        with_side, without_side = by_cond.get(treatment, {}), by_cond.get(baseline, {})
        paired = paired_bootstrap_delta(
            {t: with_side.get(t) for t in tasks},
            {t: without_side.get(t) for t in tasks},
            resamples=resamples,
            seed=seed,
        )
        unpaired = [t for t in paired.unpaired_tasks if t in with_side or t in without_side]
        unpaired_cells += len(unpaired)
        n = len(paired.paired_tasks)
        w = sum(with_side[t] for t in paired.paired_tasks) / n if n else None
        wo = sum(without_side[t] for t in paired.paired_tasks) / n if n else None
        configs.append(
            ConfigurationStats(
                configuration=name,
                rates=rates,
                n_tasks={c: len(by_cond[c]) for c in conditions if by_cond.get(c)},
                missing={c: v for c, v in missing.items() if v},
                n_paired=n,
                unpaired_tasks=unpaired,
                without_rate=wo,
                with_rate=w,
                delta_pp=paired.delta_pp,
                ci_low_pp=paired.ci_low_pp,
                ci_high_pp=paired.ci_high_pp,
                g=normalised_gain(w, wo) if w is not None and wo is not None else None,
            )
        )
    gains = mean_of_defined([c.g for c in configs])
    return TableSummary(
        source=source,
        baseline=baseline,
        treatment=treatment,
        tasks=len(tasks),
        rows=len(rows),
        configurations=configs,
        mean_rates={c: mean_of_defined([cfg.rates.get(c) for cfg in configs]).mean for c in (baseline, treatment)},
        mean_delta_pp=mean_of_defined([c.delta_pp for c in configs]).mean,
        mean_g=gains.mean,
        n_g_undefined=gains.n_undefined,
        missing_cells=missing_cells,
        unpaired_cells=unpaired_cells,
        bootstrap_resamples=resamples,
        bootstrap_seed=seed,
    )


def render_table_summary(summary: TableSummary) -> str:
    """The per-configuration table and the mean row as Markdown."""
    b, t = summary.baseline, summary.treatment
    lines = [
        f"| configuration | {b} | {t} | Δ pp [95% CI] | g | paired | missing cells |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def pct(v: float | None, digits: int = 1) -> str:
        return "—" if v is None else f"{v * 100:.{digits}f}%"

    for c in summary.configurations:
        delta = "—" if c.delta_pp is None else f"{c.delta_pp:+.1f} [{c.ci_low_pp:+.1f}, {c.ci_high_pp:+.1f}]"
        missing = sum(len(v) for v in c.missing.values())
        lines.append(
            f"| {c.configuration} | {pct(c.rates.get(b))} | {pct(c.rates.get(t))} | {delta} | {pct(c.g)} | "
            f"{c.n_paired} (+{len(c.unpaired_tasks)} unpaired) | {missing} |"
        )
    mean_delta = "—" if summary.mean_delta_pp is None else f"{summary.mean_delta_pp:+.2f}"
    g_note = f" ({summary.n_g_undefined} undefined)" if summary.n_g_undefined else ""
    lines.append(
        f"| **mean of {len(summary.configurations)} configurations** | {pct(summary.mean_rates.get(b), 2)} | "
        f"{pct(summary.mean_rates.get(t), 2)} | {mean_delta} | {pct(summary.mean_g, 2)}{g_note} | | "
        f"{summary.missing_cells} |"
    )
    return "\n".join(lines)
