"""What a planned run will spend, before it runs (``skillworks run ... --dry-run``).

Per trial, the model calls and tokens come from a pilot run (``--pilot RUN_DIR``: the mean over its
recorded trials, per condition when the pilot ran that condition, else over all of them) or, without one,
from the per-trial token budget (``--max-trial-tokens``: an upper bound, calls unknown). The cost is those
tokens at the model's prices in LiteLLM's price table (``litellm.model_cost``, the local copy; never
fetched), or "unknown" when the model is not in it or nothing says how many tokens a trial uses.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillworks.results import TrialResult


@dataclass(frozen=True)
class Prices:
    """USD per token."""

    input: float
    output: float
    cached: float


@dataclass(frozen=True)
class TrialUsage:
    """Expected usage of one trial."""

    calls: float | None
    input_tokens: float
    output_tokens: float
    cached_tokens: float
    bound: bool
    """True for a budget (at most), False for a pilot's mean"""


def _model_cost() -> dict[str, Any]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the bundled table; never fetched
    import litellm

    return dict(litellm.model_cost)


def model_prices(model: str, table: dict[str, Any] | None = None) -> Prices | None:
    """The prices of ``model`` (``provider/name`` or ``name``) in LiteLLM's table; None when absent."""
    table = _model_cost() if table is None else table
    names = [model] + ([model.split("/", 1)[1]] if "/" in model else [])
    for name in names:
        entry = table.get(name)
        if isinstance(entry, dict) and entry.get("input_cost_per_token") is not None:
            inp = float(entry["input_cost_per_token"])
            out = float(entry.get("output_cost_per_token") or 0.0)
            cached = entry.get("cache_read_input_token_cost")
            return Prices(input=inp, output=out, cached=float(cached) if cached is not None else inp)
    return None


def pilot_usage(results: Sequence[TrialResult], condition: str) -> TrialUsage | None:
    """Mean usage per recorded trial of ``condition`` in a pilot (all conditions when it has none of it)."""
    rows = [r for r in results if r.condition == condition] or list(results)
    if not rows:
        return None
    n = len(rows)
    return TrialUsage(
        calls=sum(r.usage.calls for r in rows) / n,
        input_tokens=sum(r.usage.input_tokens for r in rows) / n,
        output_tokens=sum(r.usage.output_tokens for r in rows) / n,
        cached_tokens=sum(r.usage.cached_tokens for r in rows) / n,
        bound=False,
    )


def trial_cost(usage: TrialUsage, prices: Prices) -> float:
    """USD of one trial. ``input_tokens`` counts the cached ones too (as the gateway records them); a
    budget (``bound``) is priced all at the dearer of the input and output price."""
    if usage.bound:
        return usage.input_tokens * max(prices.input, prices.output)
    uncached = max(0.0, usage.input_tokens - usage.cached_tokens)
    return uncached * prices.input + usage.cached_tokens * prices.cached + usage.output_tokens * prices.output


def _tokens(value: float) -> str:
    return f"{value / 1e6:.2f}M" if value >= 1e6 else f"{value / 1e3:.1f}k" if value >= 1e3 else f"{value:.0f}"


def estimate_lines(
    n_tasks: int,
    conditions: Sequence[str],
    agents: Sequence[tuple[str, str]],
    trials: int,
    *,
    pilot: Path | None = None,
    trial_token_budget: int | None = None,
) -> list[str]:
    """The dry-run's estimate lines: per agent (``(label, model)``), model calls, tokens and cost of its
    ``n_tasks × conditions × trials`` trials, and a total (cost "unknown" when any part is)."""
    results: list[TrialResult] = []
    if pilot is not None:
        from skillworks.report.loading import load_run
        from skillworks.stats import latest_attempts

        results = latest_attempts(load_run(pilot).results)
    if pilot is None and trial_token_budget is None:
        return ["estimated cost: unknown (no pilot run or token budget: give --pilot RUN_DIR or --max-trial-tokens)"]
    table = _model_cost()
    lines: list[str] = []
    total_cost: float | None = 0.0
    per_condition = n_tasks * trials
    for label, model in agents:
        calls: float | None = 0.0
        tokens = 0.0
        cost: float | None = 0.0
        prices = model_prices(model, table)
        for cond in conditions:
            if pilot is not None:
                usage = pilot_usage([r for r in results if r.agent == label] or results, cond)
            else:
                usage = TrialUsage(None, float(trial_token_budget or 0), 0.0, 0.0, bound=True)
            if usage is None:
                calls = cost = None
                continue
            calls = None if calls is None or usage.calls is None else calls + usage.calls * per_condition
            tokens += (usage.input_tokens + usage.output_tokens) * per_condition
            if cost is not None and prices is not None:
                cost += trial_cost(usage, prices) * per_condition
            else:
                cost = None
        how = (
            f"from the pilot {pilot}" if pilot is not None else f"at most, from --max-trial-tokens {trial_token_budget}"
        )
        price = f"${cost:.2f}" if cost is not None else "unknown"
        why = "" if prices is not None else f" (no price for {model} in LiteLLM's table)"
        calls_text = f"{calls:.0f}" if calls is not None else "unknown"
        lines.append(
            f"estimated for {label} ({how}): model calls {calls_text}, tokens {_tokens(tokens)}, cost {price}{why}"
        )
        total_cost = None if total_cost is None or cost is None else total_cost + cost
    if pilot is not None and not results:
        return [f"estimated model calls, tokens and cost: unknown (the pilot {pilot} has no recorded trial)"]
    lines.append(f"estimated cost: {'$' + format(total_cost, '.2f') if total_cost is not None else 'unknown'}")
    return lines
