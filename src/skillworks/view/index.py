"""The viewer's index of trials over one or many run directories: a row per trial (its latest attempt),
filtered, sorted and searched in memory; re-read when a run's results.jsonl changes (a run still going).

Rows come from the run store's reader (`skillworks.report.loading.load_run`), so the viewer sees exactly
what the reports see. Full-text search reads the trials' ATIF trajectories on first use and keeps their
text within a memory budget; beyond it the rest is read from disk at each search.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillworks.errors import UserError
from skillworks.report.loading import RESULTS_FILE, load_run
from skillworks.report.trial_pages import pair_page, trial_page
from skillworks.results import TrialResult

# filterable fields (exact match on the row's value) and sortable ones
FILTERS = ("run", "task", "condition", "agent", "outcome", "failure_mode", "error_category", "skill_used")
SORTS = ("reward", "tokens", "cost", "time", "task", "condition", "agent", "outcome", "finished")
_TEXT_BUDGET = 256 * 1024 * 1024  # characters of trajectory text kept for search
_MAX_LIMIT = 1000


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def _row(key: str, run_dir: Path, r: TrialResult, baselines: Iterable[str]) -> dict[str, Any]:
    page = trial_page(run_dir, r.trial_id)
    pairs = [
        {"baseline": b, "href": f"/runs/{key}/{pair_page(run_dir, r.trial_id, b).relative_to(run_dir).as_posix()}"}
        for b in baselines
        if b != r.condition and pair_page(run_dir, r.trial_id, b).is_file()
    ]
    cost_known = r.usage.cost_source not in (None, "none") or r.usage.cost_usd > 0
    return {
        "run": key,
        "trial_id": r.trial_id,
        "task": r.task_id,
        "condition": r.condition,
        "agent": r.agent,
        "model": r.model,
        "provider": r.provider,
        "trial_index": r.trial_index,
        "attempt": r.attempt,
        "outcome": r.outcome,
        "reward": r.reward,
        "failure_mode": r.failure_mode or "",
        "error_category": r.error.category if r.error else "",
        "error": r.error.message if r.error else "",
        "skill_used": "yes" if r.skill_use.invoked else "no",
        "skills_invoked": list(r.skill_use.invoked),
        "tokens": r.usage.input_tokens + r.usage.output_tokens,
        "input_tokens": r.usage.input_tokens,
        "output_tokens": r.usage.output_tokens,
        "cost": r.usage.cost_usd if cost_known else None,
        "time": r.timings.total_sec,
        "finished": r.finished_at.isoformat(),
        "page": f"/runs/{key}/{page.relative_to(run_dir).as_posix()}" if page.is_file() else None,
        "pairs": pairs,
        "_trajectory": r.paths.get("trajectory"),
    }


@dataclass
class _Run:
    key: str
    run_dir: Path
    run_id: str = ""
    stamp: tuple[int, int] = (-2, -2)
    rows: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tasks: int = 0
    conditions: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)


def _trajectory_text(path: Path) -> str:
    """The searchable text of an ATIF trajectory: messages, reasoning, tool calls and their results."""
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return ""
    parts: list[str] = []

    def text(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict) and isinstance(item.get("text"), str):
                    parts.append(item["text"])

    for step in data.get("steps", []) if isinstance(data, dict) else []:
        if not isinstance(step, dict):
            continue
        text(step.get("message"))
        text(step.get("reasoning_content"))
        for call in step.get("tool_calls") or []:
            if isinstance(call, dict):
                parts.append(str(call.get("function_name", "")))
                parts.append(json.dumps(call.get("arguments"), ensure_ascii=False))
        observation = step.get("observation")
        if isinstance(observation, dict):
            for res in observation.get("results") or []:
                if isinstance(res, dict):
                    text(res.get("content"))
    return "\n".join(parts).lower()


class TrialIndex:
    """Every trial of the given run directories, one row per trial id (its latest attempt)."""

    def __init__(self, run_dirs: Iterable[Path]) -> None:
        dirs = [Path(d) for d in run_dirs]
        if not dirs:
            raise UserError("no run directory given")
        self.runs = [_Run(key=f"r{i}", run_dir=d.resolve()) for i, d in enumerate(dirs)]
        self._texts: dict[tuple[str, str], str] = {}
        self._text_size = 0
        for run in self.runs:
            self._load(run)

    def _load(self, run: _Run) -> None:
        data = load_run(run.run_dir)  # a UserError names the file on bad input
        latest: dict[str, TrialResult] = {}
        for r in data.results:
            if r.trial_id not in latest or r.attempt >= latest[r.trial_id].attempt:
                latest[r.trial_id] = r
        run.run_id = data.run_id
        run.warnings = data.warnings
        run.tasks = len(data.tasks)
        run.conditions = data.conditions
        run.agents = [a.name for a in data.agents]
        run.rows = [_row(run.key, run.run_dir, r, data.conditions) for r in latest.values()]
        run.stamp = _stamp(run.run_dir / RESULTS_FILE)
        for k in [k for k in self._texts if k[0] == run.key]:
            self._text_size -= len(self._texts.pop(k))

    def refresh(self) -> bool:
        """Re-read every run whose results.jsonl changed; whether any did."""
        changed = False
        for run in self.runs:
            if _stamp(run.run_dir / RESULTS_FILE) != run.stamp:
                try:
                    self._load(run)
                except UserError as exc:  # a half-written experiment.json: keep the last good rows
                    run.warnings = [*run.warnings[-20:], str(exc)]
                    continue
                changed = True
        return changed

    def version(self) -> str:
        return ";".join(f"{r.key}:{r.stamp[0]}:{r.stamp[1]}" for r in self.runs)

    def rows(self) -> list[dict[str, Any]]:
        return [row for run in self.runs for row in run.rows]

    def runs_summary(self) -> list[dict[str, Any]]:
        out = []
        for run in self.runs:
            outcomes = Counter(row["outcome"] for row in run.rows)
            report = run.run_dir / "report.html"
            out.append(
                {
                    "key": run.key,
                    "run_id": run.run_id,
                    "path": str(run.run_dir),
                    "trials": len(run.rows),
                    "tasks": run.tasks,
                    "conditions": run.conditions,
                    "agents": run.agents,
                    "outcomes": dict(outcomes),
                    "report": f"/runs/{run.key}/report.html" if report.is_file() else None,
                    "warnings": run.warnings[-20:],
                }
            )
        return out

    def facets(self, rows: list[dict[str, Any]] | None = None) -> dict[str, list[tuple[str, int]]]:
        rows = self.rows() if rows is None else rows
        return {f: sorted(Counter(str(row[f]) for row in rows).items()) for f in FILTERS}

    def _text(self, run: _Run, row: dict[str, Any]) -> str:
        key = (run.key, row["trial_id"])
        cached = self._texts.get(key)
        if cached is not None:
            return cached
        rel = row.get("_trajectory")
        if not rel:
            return ""
        path = run.run_dir / rel
        try:
            if not os.path.realpath(path).startswith(str(run.run_dir) + os.sep):
                return ""  # a path in results.jsonl never reads outside its run
        except OSError:
            return ""
        text = _trajectory_text(path)
        if self._text_size + len(text) <= _TEXT_BUDGET:
            self._texts[key] = text
            self._text_size += len(text)
        return text

    def query(
        self,
        filters: Mapping[str, str] | None = None,
        *,
        q: str = "",
        sort: str = "finished",
        descending: bool = False,
        offset: int = 0,
        limit: int = 200,
    ) -> dict[str, Any]:
        """The rows that match every filter (field = value) and every word of ``q`` (case-insensitive, in
        the task id, the trial id, the error or the trajectory), sorted, one page of them."""
        filters = {k: v for k, v in (filters or {}).items() if v != ""}
        unknown = sorted(set(filters) - set(FILTERS))
        if unknown:
            raise ValueError(f"unknown filter(s) {', '.join(unknown)} (allowed: {', '.join(FILTERS)})")
        if sort not in SORTS:
            raise ValueError(f"unknown sort {sort!r} (allowed: {', '.join(SORTS)})")
        words = [w for w in q.lower().split() if w]
        matched: list[dict[str, Any]] = []
        for run in self.runs:
            for row in run.rows:
                if any(str(row[k]) != v for k, v in filters.items()):
                    continue
                if words:
                    head = f"{row['task']}\n{row['trial_id']}\n{row['error']}".lower()
                    if not all(w in head for w in words):
                        body = head + "\n" + self._text(run, row)
                        if not all(w in body for w in words):
                            continue
                matched.append(row)
        if sort in ("reward", "tokens", "cost", "time"):
            present = [r for r in matched if r[sort] is not None and not _nan(r[sort])]
            absent = [r for r in matched if r[sort] is None or _nan(r[sort])]
            present.sort(key=lambda r: r[sort], reverse=descending)
            matched = present + absent  # no value (an error's reward, an unknown cost) sorts last either way
        else:
            matched.sort(key=lambda r: str(r[sort]), reverse=descending)
        limit = max(1, min(limit, _MAX_LIMIT))
        page = matched[max(0, offset) : max(0, offset) + limit]
        return {
            "total": len(matched),
            "offset": offset,
            "rows": [{k: v for k, v in row.items() if not k.startswith("_")} for row in page],
            "facets": self.facets(matched),
        }


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
