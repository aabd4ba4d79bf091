"""CTRF durations read in the unit their producer wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillworks.grading import find_ctrf, read_ctrf


def test_ctrf_durations_are_read_in_the_unit_their_producer_wrote(tmp_path: Path) -> None:
    """pytest-json-ctrf 0.3.5 writes seconds and 0.3.6 milliseconds (both measured on a 0.3 s test, start
    and stop in epoch seconds); CTRF's own unit is milliseconds when nothing else tells."""

    def report(tests: list[dict[str, object]], summary: dict[str, object] | None = None) -> Path:
        path = tmp_path / f"ctrf{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps({"results": {"summary": summary or {}, "tests": tests}}))
        return path

    start = 1796163807.838381
    v035 = {"name": "a", "status": "passed", "duration": 0.3013, "start": start, "stop": start + 0.302}
    v036 = {"name": "a", "status": "passed", "duration": 300.97, "start": start, "stop": start + 0.3014}
    ms_epoch = {"name": "a", "status": "passed", "duration": 1200, "start": 1706644023000, "stop": 1706644024200}
    bare = {"name": "a", "status": "passed", "duration": 800}
    assert [t.duration_ms for t in read_ctrf(report([v035]))] == [pytest.approx(301.3)]
    assert [t.duration_ms for t in read_ctrf(report([v036]))] == [pytest.approx(300.97)]
    assert [t.duration_ms for t in read_ctrf(report([ms_epoch]))] == [pytest.approx(1200)]
    assert [t.duration_ms for t in read_ctrf(report([bare]))] == [800]  # the standard's unit
    # no start/stop per test: the summary's span says seconds
    seconds = [{"name": n, "status": "passed", "duration": 0.25} for n in "ab"]
    summary = {"start": start, "stop": start + 0.55}
    assert [t.duration_ms for t in read_ctrf(report(seconds, summary))] == [pytest.approx(250)] * 2


def test_the_report_real_skillsbench_verifiers_name_ctrf_report_json_is_read(tmp_path: Path) -> None:
    """r2r-mpc-control (a real SkillsBench task) runs `pytest --ctrf /logs/verifier/ctrf-report.json`: its
    tests were lost when only Harbor's `ctrf.json` was read. Harbor's name wins when both exist, and a link
    under the first name is returned (and refused by read_ctrf), not skipped for the second."""
    logs = tmp_path / "logs"
    logs.mkdir()
    assert find_ctrf(logs) is None
    body = {"results": {"tests": [{"name": "test_performance", "status": "failed", "duration": 5}]}}
    (logs / "ctrf-report.json").write_text(json.dumps(body))
    found = find_ctrf(logs)
    assert found == logs / "ctrf-report.json"
    assert [(t.name, t.status) for t in read_ctrf(found)] == [("test_performance", "failed")]
    (logs / "ctrf.json").symlink_to(logs / "ctrf-report.json")
    assert find_ctrf(logs) == logs / "ctrf.json"
    assert read_ctrf(logs / "ctrf.json") == []
