"""An unknown price is "unknown" in the progress line and the reports, never $0.0000."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillworks.experiment.progress import Tally
from skillworks.report import build_summary, render_markdown
from skillworks.report.html import render_html
from skillworks.stats.tables import cost_is_known, cost_text


def _priced(fx: Any, task: str, cond: str, k: int, *, provider: str, source: str | None) -> Any:
    r = fx.trial(task, cond, k, 1.0, cost=0.0, provider=provider)
    return r.model_copy(update={"usage": r.usage.model_copy(update={"cost_source": source})})


def test_cost_is_unknown_for_a_priced_provider_without_a_price(fx: Any, tmp_path: Path) -> None:
    unknown = _priced(fx, "t1", "none", 0, provider="openai", source="none")
    assert not cost_is_known(unknown)
    assert cost_is_known(_priced(fx, "t1", "none", 0, provider="scripted", source="none"))
    assert cost_is_known(_priced(fx, "t1", "none", 0, provider="openai", source="litellm_price_table"))
    assert cost_text(0.0, 2, 2) == "unknown" and cost_text(0.5, 1, 3) == "0.5000 + unknown (1 trial)"

    tally = Tally(total=2)
    tally.add(unknown)
    assert re.search(r"\bcost unknown( \||$)", tally.summary(), re.M) and "$0.0000" not in tally.summary()

    results = [_priced(fx, t, c, 0, provider="openai", source=None) for t in ("t1", "t2") for c in ("none", "curated")]
    run = fx.write_run(tmp_path, results, fx.experiment(tasks=("t1", "t2"), trials=1))
    s = build_summary(run)
    assert all(u.cost_unknown == u.trials for u in s.usage)
    md = render_markdown(s)
    usage_rows = [line for line in md.splitlines() if line.startswith("| none |") and "unknown" in line]
    assert usage_rows and "0.0000" not in usage_rows[0]
    assert '<td class="n">unknown</td>' in render_html(s)
