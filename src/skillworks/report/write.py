"""`write_reports`: summary.json, report.md and report.html into the run directory."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from skillworks.errors import UserError
from skillworks.report.html import render_html
from skillworks.report.loading import read_experiment, read_results
from skillworks.report.markdown import render_markdown
from skillworks.report.model import Summary
from skillworks.report.summary import BASELINE, build_summary
from skillworks.report.trial_pages import TrialPages, write_trial_pages

FORMATS = ("json", "md", "html")
FILE_NAMES = {"json": "summary.json", "md": "report.md", "html": "report.html"}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_summary(path: Path | str) -> Summary:
    """Read a ``summary.json`` back into a `Summary` (strict)."""
    path = Path(path)
    try:
        return Summary.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UserError(f"not a valid summary: {exc}", path) from exc


def write_summary_files(summary: Summary, out_dir: Path, formats: Iterable[str] = FORMATS) -> dict[str, Path]:
    """Write the requested formats of ``summary`` into ``out_dir``; returns format -> path."""
    written: dict[str, Path] = {}
    for fmt in formats:
        if fmt not in FILE_NAMES:
            raise UserError(f"unknown report format '{fmt}' (allowed: {', '.join(FORMATS)})")
        path = out_dir / FILE_NAMES[fmt]
        if fmt == "json":
            text = summary.model_dump_json(indent=2) + "\n"
        elif fmt == "md":
            text = render_markdown(summary)
        else:
            reports = [path, *([out_dir / "eval_report.html"] if (out_dir / "eval_report.html").is_file() else [])]
            text = render_html(summary, out_dir, write_run_trial_pages(summary, reports))
        _write_atomic(path, text)
        written[fmt] = path
    return written


def write_reports(
    run_dir: Path | str,
    formats: Iterable[str] = FORMATS,
    *,
    resamples: int | None = None,
    seed: int | None = None,
) -> dict[str, Path]:
    """Build the summary of ``run_dir`` and write summary.json, report.md and report.html into it.

    Returns ``{"json": path, "md": path, "html": path}`` (the formats asked for).
    """
    run_dir = Path(run_dir)
    kwargs: dict[str, int] = {} if resamples is None else {"resamples": resamples}
    summary = build_summary(run_dir, seed=seed, **kwargs)
    files = write_summary_files(summary, run_dir, formats)
    if is_eval_run(run_dir):  # a with-skill vs target-withheld run: its Skill Lift report too
        from skillworks.report.eval_report import write_eval_report

        files.update(write_eval_report(run_dir))
    return files


def baselines_of(conditions: Iterable[str], run_dir: Path) -> dict[str, str]:
    """Treatment condition -> the condition it is paired with: every condition vs ``none``, and an eval
    run's comparisons (e.g. with-skill vs target-withheld)."""
    conditions = list(conditions)
    pairs = {c: BASELINE for c in conditions if c != BASELINE} if BASELINE in conditions else {}
    try:
        ev = (read_experiment(run_dir).get("extra") or {}).get("eval") or {}
    except UserError:
        ev = {}
    comparisons = ev.get("comparisons") if isinstance(ev, dict) else None
    if is_eval_run(run_dir) and not comparisons:
        comparisons = [{"treatment": "with-skill", "baseline": "target-withheld"}]
    for pair in comparisons or []:
        if isinstance(pair, dict) and isinstance(pair.get("treatment"), str) and isinstance(pair.get("baseline"), str):
            pairs.setdefault(pair["treatment"], pair["baseline"])
    return pairs


def write_run_trial_pages(summary: Summary, reports: list[Path]) -> dict[str, TrialPages]:
    """Write the trajectory pages of every run of ``summary`` (linking back to ``reports``); by run id."""
    pages: dict[str, TrialPages] = {}
    for run_id, run_dir in zip(summary.run_ids, summary.run_dirs, strict=True):
        path = Path(run_dir) / "results.jsonl"
        results = read_results(path)[0] if path.is_file() else []
        pages[run_id] = write_trial_pages(
            Path(run_dir), results, baselines=baselines_of(summary.conditions, Path(run_dir)), reports=reports
        )
    return pages


def is_eval_run(run_dir: Path) -> bool:
    """Whether the run is a `skillworks eval` run (it names a target skill in experiment.json)."""
    try:
        spec = json.loads((run_dir / "experiment.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(spec, dict) and spec.get("target_skill") is not None
