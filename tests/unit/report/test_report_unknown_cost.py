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


def test_trial_page_progress_bar_and_campaign_spend_say_unknown(fx: Any, tmp_path: Path) -> None:
    from skillworks.experiment.progress import RunProgress
    from skillworks.report import write_reports
    from skillworks.report.markdown import render_markdown as md_of

    unpriced = [_priced(fx, "t1", c, k, provider="openai", source=None) for c in ("none", "curated") for k in (0, 1)]
    run = fx.write_run(tmp_path, unpriced, fx.experiment(tasks=("t1",), trials=2))
    write_reports(run, resamples=100)
    page = (run / "trials" / "t1__none__a1__t0" / "trial.html").read_text()
    assert "calls · unknown (source" in page and "$0.0000" not in page
    # a priced trial's page keeps its dollars
    priced = [_priced(fx, "t1", c, 0, provider="openai", source="litellm_price_table") for c in ("none", "curated")]
    priced_run = fx.write_run(tmp_path, priced, fx.experiment(tasks=("t1",), trials=1), name="priced")
    write_reports(priced_run, resamples=100)
    assert "calls · $0.0000 (source" in (priced_run / "trials" / "t1__none__a1__t0" / "trial.html").read_text()

    progress = RunProgress(None, 2)
    progress.tally.add(unpriced[0])
    assert progress._fields()["cost"] == "unknown"
    progress.tally.add(priced[0])
    assert progress._fields()["cost"] == "$0.0000 + unknown (1 trial)"

    # a retried attempt makes a campaign section: its spend is unknown too
    retried = [*unpriced, unpriced[0].model_copy(update={"attempt": 2, "trial_id": "t1__none__a1__t0__a2"})]
    campaign_run = fx.write_run(tmp_path, retried, fx.experiment(tasks=("t1",), trials=2), name="campaign")
    text = md_of(build_summary(campaign_run))
    spend = next(line for line in text.splitlines() if line.startswith("- spend over every attempt"))
    assert spend.startswith("- spend over every attempt: unknown,") and "(superseded attempts unknown)" in spend
