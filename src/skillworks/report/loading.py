"""Read a run directory (``experiment.json`` + ``results.jsonl``) for reporting.

``experiment.json`` is read leniently as a dict (the experiment package owns its schema); only the keys
a report needs are checked. ``results.jsonl`` is strict: every line must be a `TrialResult`. A last line
that is not valid JSON is a write torn by a kill and is skipped with a warning; a garbled line anywhere
else is a user error naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillworks.errors import UserError
from skillworks.results import TrialResult

EXPERIMENT_FILE = "experiment.json"
RESULTS_FILE = "results.jsonl"


@dataclass(frozen=True)
class AgentConfig:
    """One agent configuration of a run; ``name`` is the label trial results use."""

    name: str
    model: str | None = None
    provider: str | None = None
    harness: str | None = None


@dataclass
class RunData:
    """What a report needs from one run directory."""

    run_dir: Path
    run_id: str
    tasks: list[str]
    conditions: list[str]
    agents: list[AgentConfig]
    trials: int
    seed: int | None
    results: list[TrialResult]
    warnings: list[str] = field(default_factory=list)


def _names(value: Any, key: str, path: Path, name_key: str) -> list[str]:
    if not isinstance(value, list):
        raise UserError(f"'{key}' must be a list", path)
    names: list[str] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict) and isinstance(item.get(name_key), str):
            names.append(item[name_key])
        else:
            raise UserError(f"'{key}[{i}]' must be a string or an object with a string '{name_key}'", path)
    return list(dict.fromkeys(names))


def _resolved_agent(item: dict[str, Any]) -> tuple[str, str | None]:
    """(label, provider) of an agent entry as the experiment package resolves them: trial results name
    an agent configuration by its *label* (e.g. ``builtin-claude-sonnet-4``), not by the harness name."""
    label, provider = item.get("label"), item.get("provider")
    try:
        from skillworks.experiment.spec import AgentConfig as SpecAgentConfig

        cfg = SpecAgentConfig.model_validate({k: v for k, v in item.items() if k not in ("label", "provider")})
    except (ImportError, ValueError):  # not the experiment package's shape: take the entry at its word
        cfg = None
    if not isinstance(label, str):
        label = cfg.label if cfg is not None else item["name"]
    if provider is None and cfg is not None:
        provider = cfg.provider
    return str(label), str(provider) if provider is not None else None


def _agents(value: Any, path: Path) -> list[AgentConfig]:
    if not isinstance(value, list):
        raise UserError("'agents' must be a list", path)
    agents: list[AgentConfig] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            agents.append(AgentConfig(item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            label, provider = _resolved_agent(item)
            model = item.get("model")
            agents.append(
                AgentConfig(
                    name=label,
                    model=str(model) if model is not None else None,
                    provider=provider,
                    harness=item["name"],
                )
            )
        else:
            raise UserError(f"'agents[{i}]' must be a string or an object with a string 'name'", path)
    return agents


def read_experiment(run_dir: Path) -> dict[str, Any]:
    path = run_dir / EXPERIMENT_FILE
    if not path.is_file():
        raise UserError(f"no {EXPERIMENT_FILE} in run directory", run_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"not valid JSON: {exc}", path) from exc
    if not isinstance(data, dict):
        raise UserError("must hold a JSON object", path)
    return data


_READ: dict[Path, tuple[tuple[int, int], list[TrialResult], list[str]]] = {}


def read_results(path: Path) -> tuple[list[TrialResult], list[str]]:
    """Parse ``results.jsonl`` with the run store's reader; returns the results and its warnings
    (a skipped torn last line). A report reads a run's results more than once (summary, pages): an
    unchanged file (same size and mtime) is parsed once per process."""
    from skillworks.experiment.store import RunStore

    try:
        st = path.stat()
        stamp = (st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = (-1, -1)
    cached = _READ.get(path)
    if cached is not None and cached[0] == stamp and stamp != (-1, -1):
        return list(cached[1]), list(cached[2])
    warnings: list[str] = []
    results = RunStore(path.parent).read_results(warnings)
    if len(_READ) >= 8:
        _READ.clear()
    _READ[path] = (stamp, results, warnings)
    return list(results), list(warnings)


def load_run(run_dir: Path | str) -> RunData:
    """Load one run directory. Raises `UserError` naming the file (and line) on bad input."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError("run directory not found", run_dir)
    exp = read_experiment(run_dir)
    exp_path = run_dir / EXPERIMENT_FILE
    for key in ("tasks", "conditions", "agents", "trials"):
        if key not in exp:
            raise UserError(f"missing key '{key}'", exp_path)
    trials = exp["trials"]
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 0:
        raise UserError("'trials' must be a non-negative integer", exp_path)
    seed = exp.get("seed")
    warnings: list[str] = []
    run_id = exp.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        run_id = run_dir.name
        warnings.append(f"{exp_path}: no 'run_id'; using the directory name '{run_id}'")
    run_warnings = exp.get("warnings")
    if isinstance(run_warnings, list):  # e.g. the local sandbox's limits were not enforced
        warnings.extend(f"run: {w}" for w in run_warnings if isinstance(w, str))
    results_path = run_dir / RESULTS_FILE
    if results_path.is_file():
        results, more = read_results(results_path)
        warnings.extend(more)
    else:
        results = []
        warnings.append(f"{results_path}: not found; no trial has been recorded")
    agents = _agents(exp["agents"], exp_path)
    used = {r.agent for r in results}
    agents = [
        replace(a, name=a.harness) if a.name not in used and a.harness is not None and a.harness in used else a
        for a in agents
    ]
    return RunData(
        run_dir=run_dir,
        run_id=run_id,
        tasks=_names(exp["tasks"], "tasks", exp_path, "id"),
        conditions=_names(exp["conditions"], "conditions", exp_path, "name"),
        agents=agents,
        trials=trials,
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        results=results,
        warnings=warnings,
    )
