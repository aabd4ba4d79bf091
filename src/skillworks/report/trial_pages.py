"""Static trajectory pages: ``trials/<trial id>/trial.html`` for every trial of a run and
``pairs/<trial id>__vs__<baseline>.html`` side by side for each paired with/without trial (same task,
agent and trial index). The run and eval reports link to them; they link back to the report."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillworks.report.jinja_env import template
from skillworks.report.model import SCRIPTED_NOTE
from skillworks.report.trial_view import TrialView, load_trial_view
from skillworks.results import TrialResult
from skillworks.stats.rates import latest_attempts

PAGE_NAME = "trial.html"
PAIRS_DIR = "pairs"


def _safe_id(trial_id: str) -> bool:
    """A trial id usable as one path component (results.jsonl is input: never write outside the run)."""
    return bool(trial_id) and "/" not in trial_id and "\\" not in trial_id and trial_id not in (".", "..")


def trial_page(run_dir: Path, trial_id: str) -> Path:
    return run_dir / "trials" / trial_id / PAGE_NAME


def pair_page(run_dir: Path, trial_id: str, baseline: str) -> Path:
    return run_dir / PAIRS_DIR / f"{trial_id}__vs__{baseline}.html"


def href(target: Path, from_dir: Path) -> str:
    """A relative link from a page in ``from_dir`` to ``target`` (forward slashes, works from file://)."""
    return Path(os.path.relpath(target.resolve(), from_dir.resolve())).as_posix()


def _rel(target: Path, from_dir: Path) -> str:
    """`href` for paths already resolved (thousands of pages: no file-system walk per link)."""
    return Path(os.path.relpath(target, from_dir)).as_posix()


@dataclass
class TrialPages:
    """Pages written for one run: trial id -> its page; treatment trial id -> its side-by-side page."""

    run_dir: Path
    trials: dict[str, Path] = field(default_factory=dict)
    pairs: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_trial_pages(
    run_dir: Path,
    results: Sequence[TrialResult],
    *,
    baselines: Mapping[str, str],
    reports: Sequence[Path] = (),
) -> TrialPages:
    """Write a page per trial (latest attempts) and a side-by-side page per (condition, baseline) pair.

    ``baselines`` maps a treatment condition to the condition it is compared with (e.g. curated -> none).
    ``reports`` are the report pages the trial pages link back to.
    """
    out = TrialPages(run_dir=run_dir)
    views = {}
    root = run_dir.resolve()
    run_dir = root  # every page path below is built from the resolved run dir: links need no resolve each
    reports = [p.resolve() for p in reports]
    for r in latest_attempts(results):
        trial_dir = run_dir / "trials" / r.trial_id
        if not _safe_id(r.trial_id) or not trial_dir.resolve().is_relative_to(root):  # e.g. a symlinked trial dir
            out.skipped.append(r.trial_id)
            continue
        views[r.trial_id] = load_trial_view(run_dir, r)
    slot = {
        (v.result.run_id, v.result.task_id, v.result.condition, v.result.agent, v.result.trial_index): v
        for v in views.values()
    }
    pairs = []
    pairs_of: dict[str, list[tuple[TrialView, TrialView]]] = {}  # trial id -> the pairs it is in
    for v in views.values():
        r = v.result
        base = baselines.get(r.condition)
        other = slot.get((r.run_id, r.task_id, base, r.agent, r.trial_index)) if base is not None else None
        if other is not None:
            pairs.append((v, other))
            pairs_of.setdefault(r.trial_id, []).append((v, other))
            pairs_of.setdefault(other.result.trial_id, []).append((v, other))
            out.pairs[r.trial_id] = pair_page(run_dir, r.trial_id, other.result.condition)
    for v in views.values():
        out.trials[v.result.trial_id] = trial_page(run_dir, v.result.trial_id)
    for trial_id, v in views.items():
        page = out.trials[trial_id]
        pair_links = [
            (
                f"side by side: {a.result.condition} vs {b.result.condition}",
                _rel(pair_page(run_dir, a.result.trial_id, b.result.condition), page.parent),
            )
            for a, b in pairs_of.get(trial_id, [])
        ]
        _write(
            page,
            template("trial.html.j2").render(
                v=v,
                report_links=[(p.name, _rel(p, page.parent)) for p in reports],
                pair_links=pair_links,
                scripted=v.result.provider == "scripted",
                scripted_note=SCRIPTED_NOTE,
            ),
        )
    for left, right in pairs:
        page = pair_page(run_dir, left.result.trial_id, right.result.condition)
        _write(
            page,
            template("pair.html.j2").render(
                left=left,
                right=right,
                left_prefix=_rel(left.trial_dir, page.parent) + "/",
                right_prefix=_rel(right.trial_dir, page.parent) + "/",
                left_href=_rel(out.trials[left.result.trial_id], page.parent),
                right_href=_rel(out.trials[right.result.trial_id], page.parent),
                report_links=[(p.name, _rel(p, page.parent)) for p in reports],
                scripted="scripted" in (left.result.provider, right.result.provider),
                scripted_note=SCRIPTED_NOTE,
            ),
        )
    return out
