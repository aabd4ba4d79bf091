"""The raw-vs-compiled block of a report: for every agent that ran both the `compiled` condition and its raw
baseline (`curated`), the solve-stage figures per condition (tokens, model calls, agent wall time, pass
rate) with paired deltas over tasks and intervals that carry the trials' spread
(:func:`skillworks.stats.paired.trials_paired_delta`; the pass rate's is the Δ method); the compile cost kept
apart; and the break-even number of invocations (how many solves the compile cost is paid back in), in seconds
and in tokens (the compile step's model tokens / the solve tokens saved per invocation)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from skillworks.results import TrialResult
from skillworks.stats.paired import TrialsDelta, paired_delta, trials_paired_delta

COMPILED = "compiled"
RAW = "curated"
_METRICS = ("input_tokens", "output_tokens", "calls", "agent_sec", "reward")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricComparison(_Strict):
    metric: str
    raw: float = Field(description="task-macro mean under the raw condition (scored trials)")
    compiled: float
    delta: float | None = Field(description="mean paired difference compiled − raw over tasks")
    ci_low: float | None
    ci_high: float | None
    ci_note: str | None = Field(default=None, description="why there is no interval (too few tasks), when none")
    relative: float | None = Field(description="delta / raw, when raw is not 0")


class CompiledComparison(_Strict):
    agent: str
    raw_condition: str
    paired_tasks: int
    metrics: list[MetricComparison]
    compile_sec: float = Field(description="compiler time actually spent (artifacts reused from cache count 0)")
    compile_tokens: int = Field(description="model tokens the compile step used (0: deterministic, offline)")
    break_even_invocations: float | None = Field(
        description="compile seconds / agent seconds saved per solve; None when compiling saves no time"
    )
    solve_tokens_saved: float | None = Field(
        default=None, description="input + output tokens saved per solve (raw − compiled, mean over paired tasks)"
    )
    break_even_tokens: float | None = Field(
        default=None,
        description="compile tokens / solve tokens saved per solve (0 when the compile used no model); None when "
        "compiled solves use no fewer tokens",
    )


def _value(r: TrialResult, metric: str) -> float:
    if metric == "reward":
        return float(r.reward or 0.0)
    if metric == "agent_sec":
        return r.timings.agent_sec
    return float(getattr(r.usage, metric))


def compiled_comparisons(results: Sequence[TrialResult], *, confidence: float = 0.95) -> list[CompiledComparison]:
    out = []
    for agent in sorted({r.agent for r in results if r.condition == COMPILED}):
        cells: dict[str, dict[str, list[TrialResult]]] = {COMPILED: {}, RAW: {}}
        for r in results:
            if r.agent == agent and r.condition in cells and r.error is None and r.reward is not None:
                cells[r.condition].setdefault(r.task_id, []).append(r)
        if not cells[RAW] or not cells[COMPILED]:
            continue
        metrics = []
        n_paired = 0
        for metric in _METRICS:
            values = {c: {t: [_value(r, metric) for r in rs] for t, rs in cells[c].items()} for c in cells}
            if metric == "reward":  # on [0, 1]: the report's Δ method, with its trial-noise floor
                sides = {
                    c: {
                        t: (statistics.mean(v), len(v), statistics.mean(x * x for x in v)) for t, v in values[c].items()
                    }
                    for c in cells
                }
                pd = paired_delta(sides[COMPILED], sides[RAW], confidence=confidence)
                d = TrialsDelta(
                    pd.paired_tasks,
                    None if pd.delta_pp is None else pd.delta_pp / 100,
                    None if pd.ci_low_pp is None else pd.ci_low_pp / 100,
                    None if pd.ci_high_pp is None else pd.ci_high_pp / 100,
                    pd.note,
                )
            else:
                d = trials_paired_delta(values[COMPILED], values[RAW], confidence=confidence)
            n_paired = len(d.paired_tasks)
            raw = statistics.mean(statistics.mean(values[RAW][t]) for t in d.paired_tasks) if d.paired_tasks else 0.0
            comp = (
                statistics.mean(statistics.mean(values[COMPILED][t]) for t in d.paired_tasks) if d.paired_tasks else 0.0
            )
            metrics.append(
                MetricComparison(
                    metric=metric,
                    raw=raw,
                    compiled=comp,
                    delta=d.delta,
                    ci_low=d.low,
                    ci_high=d.high,
                    ci_note=d.note,
                    relative=d.delta / raw if d.delta is not None and raw else None,
                )
            )
        compile_sec = 0.0
        compile_tokens: dict[str, int] = {}  # artifact path -> the tokens compiling it took (paid once)
        for rs in cells[COMPILED].values():
            for r in rs:
                record = r.skill_source.record if r.skill_source is not None else {}
                for c in record.get("compiled", []):
                    if not c.get("reused"):
                        compile_sec += float(c.get("compile_sec") or 0.0)
                    tokens = int(c.get("compile_tokens") or 0)
                    compile_tokens[str(c.get("path"))] = max(compile_tokens.get(str(c.get("path")), 0), tokens)
        saved = next(m for m in metrics if m.metric == "agent_sec").delta
        token_deltas = [m.delta for m in metrics if m.metric in ("input_tokens", "output_tokens")]
        tokens_saved = (
            -sum(d for d in token_deltas if d is not None) if all(d is not None for d in token_deltas) else None
        )
        spent = sum(compile_tokens.values())
        out.append(
            CompiledComparison(
                agent=agent,
                raw_condition=RAW,
                paired_tasks=n_paired,
                metrics=metrics,
                compile_sec=round(compile_sec, 4),
                compile_tokens=spent,
                break_even_invocations=round(compile_sec / -saved, 3) if saved is not None and saved < 0 else None,
                solve_tokens_saved=None if tokens_saved is None else round(tokens_saved, 2),
                break_even_tokens=round(spent / tokens_saved, 3)
                if tokens_saved is not None and tokens_saved > 0
                else None,
            )
        )
    return out
