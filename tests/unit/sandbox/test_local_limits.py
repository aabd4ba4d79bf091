"""The local sandbox's limits when no cgroup can be created: rlimits, and an honest sentence about
what they do not cover (RLIMIT_NPROC is ignored for root; there is no cpu rlimit). The enforced path
(cgroups) is attacked end to end in tests/integration/integrity/test_local_integrity.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.report import load_run
from skillworks.sandbox import _limits
from skillworks.sandbox._limits import LimitRequest, TrialLimits


@pytest.fixture
def no_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits, "_cgroup_mounts", lambda: (None, {}))


def test_without_cgroups_root_gets_rlimits_and_a_warning(no_cgroups: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits.os, "geteuid", lambda: 0)
    limits = TrialLimits.create(LimitRequest(memory_mb=512, cpus=1.0, pids=100))
    assert limits.mechanism == "rlimits"
    assert limits.not_enforced == ["cpus", "pids"]
    assert "NOT enforced on this host: cpus, pids" in limits.describe()


def test_without_cgroups_a_user_gets_rlimits_for_memory_and_pids(
    no_cgroups: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_limits.os, "geteuid", lambda: 1000)
    limits = TrialLimits.create(LimitRequest(memory_mb=512, cpus=None, pids=100))
    assert limits.not_enforced == []
    assert "enforced with rlimits" in limits.describe()


def test_run_warnings_in_experiment_json_reach_the_report(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    exp = {"run_id": "r", "tasks": [], "conditions": ["none"], "agents": [], "trials": 1, "warnings": ["limits X"]}
    (run_dir / "experiment.json").write_text(json.dumps(exp))
    (run_dir / "results.jsonl").write_text("")
    assert "run: limits X" in load_run(run_dir).warnings
