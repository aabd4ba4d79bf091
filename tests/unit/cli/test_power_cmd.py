"""`skillworks power RUN_DIR` on a pilot run directory the test writes (results made by hand, provider
"scripted": constructed results, not a model evaluation)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.results import TrialResult, outcome_for
from skillworks.stats.power import detectable_effect, tasks_needed, variance_components

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# 6 tasks x 3 trials: with the skill 1 1 0 | 1 1 1 | 0 1 0 | 1 1 1 | 1 0 1 | 1 1 0
WITH = {"a": [1, 1, 0], "b": [1, 1, 1], "c": [0, 1, 0], "d": [1, 1, 1], "e": [1, 0, 1], "f": [1, 1, 0]}
WITHOUT = {"a": [0, 0, 1], "b": [1, 0, 0], "c": [0, 0, 0], "d": [1, 1, 0], "e": [0, 0, 1], "f": [0, 1, 0]}


def _write(root: Path, conditions: tuple[str, ...] = ("none", "curated"), trials: int = 3) -> Path:
    run = root / "pilot"
    run.mkdir()
    exp = {
        "run_id": "pilot",
        "tasks": [{"id": t, "path": f"tasks/{t}"} for t in WITH],
        "conditions": list(conditions),
        "agents": [{"name": "builtin", "model": "scripted/demo", "options": {"label": "a1"}}],
        "trials": trials,
        "seed": 1,
        "lock": {"skills": {}},
    }
    (run / "experiment.json").write_text(json.dumps(exp), encoding="utf-8")
    rows = []
    for cond, table in (("curated", WITH), ("none", WITHOUT)):
        for task, rewards in table.items():
            for k, reward in enumerate(rewards[:trials]):
                rows.append(
                    TrialResult(
                        trial_id=f"{task}__{cond}__a1__t{k}",
                        run_id="pilot",
                        task_id=task,
                        condition=cond,
                        agent="a1",
                        model="scripted/demo",
                        provider="scripted",
                        trial_index=k,
                        seed=k,
                        reward=float(reward),
                        outcome=outcome_for(float(reward), None),
                        started_at=T0,
                        finished_at=T0,
                    )
                )
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    return run


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", "power", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_power_from_a_pilot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _write(tmp_path)
    assert _run(monkeypatch, str(run), "--effect", "20") == 0
    out = capsys.readouterr().out.splitlines()
    vc = variance_components(
        {t: [float(x) for x in v] for t, v in WITH.items()}, {t: [float(x) for x in v] for t, v in WITHOUT.items()}
    )
    assert vc is not None
    assert out[0].startswith("curated vs none (a1): pilot 6 task(s) x 3.0 trial(s), Δ +38.9 pp")  # 7/18
    assert f"trial sd (with + without) {vc.within**0.5 * 100:.1f} pp" in out[0]
    own = detectable_effect(6, 3, vc.between, vc.within)
    assert own is not None and f"this run's size: {own * 100:.1f} pp" in out[1]
    need = {m: tasks_needed(0.2, m, vc.between, vc.within) for m in (1, 3, 10)}
    assert f"1 trial(s): {need[1]} tasks" in out[2] and f"10 trial(s): {need[10]} tasks" in out[2]
    assert (need[1] or 0) > (need[3] or 0) > (need[10] or 0) >= 5
    # without --effect: the pilot's own Δ
    assert _run(monkeypatch, str(run)) == 0
    assert "Δ 38.9 pp (the pilot's Δ; --effect to choose)" in capsys.readouterr().out


def test_one_trial_pilot_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, str(_write(tmp_path, trials=1)), "--effect", "30") == 0
    assert "(one trial per task: the 0/1 bound)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--effect", "0"), "--effect must be in (0, 100] percentage points, got 0.0"),
        (("--power", "1.5"), "--power must be in (0, 1), got 1.5"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    expected: str,
) -> None:
    assert _run(monkeypatch, str(_write(tmp_path)), *args) == 2
    assert capsys.readouterr().err.strip() == f"error: {expected}"


def test_bad_run_dirs_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, str(tmp_path / "absent")) == 2
    assert "run directory not found" in capsys.readouterr().err
    run = _write(tmp_path, conditions=("curated",))
    assert _run(monkeypatch, str(run)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "experiment.json" in err and "no 'none' condition" in err
    assert len(err.splitlines()) == 1


def test_a_pilot_without_scored_trials_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _write(tmp_path)
    rows = [TrialResult.model_validate_json(line) for line in (run / "results.jsonl").read_text().splitlines()]
    errored = [r.model_copy(update={"reward": None, "outcome": "error"}) for r in rows]
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in errored), encoding="utf-8")
    assert _run(monkeypatch, str(run)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "no scored trial in the run: nothing to plan from" in err
    assert len(err.splitlines()) == 1
