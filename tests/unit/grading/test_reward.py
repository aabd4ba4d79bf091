from __future__ import annotations

import json
import os
import resource
from pathlib import Path

import pytest

from skillworks.errors import VerifierError
from skillworks.grading import RewardFileRefused, read_ctrf, read_reward
from skillworks.grading.reward_files import REWARD_FILE_MAX_BYTES


def test_reward_txt(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("0.75\n")
    assert read_reward(tmp_path) == (0.75, {"reward": 0.75})


def test_reward_json_uses_reward_key(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 1, "format": 0.5}))
    assert read_reward(tmp_path) == (1.0, {"reward": 1.0, "format": 0.5})


def test_reward_json_and_txt_that_agree(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("1\n")
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 1.0, "format": 0.5}))
    assert read_reward(tmp_path) == (1.0, {"reward": 1.0, "format": 0.5})


def test_reward_txt_gives_the_reward_json_lacks(tmp_path: Path) -> None:
    # Harbor's fallback: reward.json without a `reward` key takes it from reward.txt
    (tmp_path / "reward.txt").write_text("0.25\n")
    (tmp_path / "reward.json").write_text(json.dumps({"a": 1, "b": 0}))
    assert read_reward(tmp_path) == (0.25, {"a": 1.0, "b": 0.0, "reward": 0.25})


def test_reward_json_without_reward_key_is_mean(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text(json.dumps({"a": 1, "b": 0}))
    assert read_reward(tmp_path)[0] == 0.5


def test_missing_reward_is_an_error_not_zero(tmp_path: Path) -> None:
    with pytest.raises(VerifierError, match="wrote no reward"):
        read_reward(tmp_path)


@pytest.mark.parametrize("text", ["", "passed", "nan", "1 2"])
def test_garbled_reward_txt(tmp_path: Path, text: str) -> None:
    (tmp_path / "reward.txt").write_text(text)
    with pytest.raises(VerifierError) as exc:
        read_reward(tmp_path)
    assert not isinstance(exc.value, RewardFileRefused)  # the verifier's error, not the agent's
    if text not in ("", "nan"):
        assert text not in str(exc.value)  # a file's bytes are never quoted


@pytest.mark.parametrize("payload", ["{not json", "[1]", "{}", '{"reward": "high"}', '{"reward": true}'])
def test_garbled_reward_json(tmp_path: Path, payload: str) -> None:
    (tmp_path / "reward.json").write_text(payload)
    with pytest.raises(VerifierError):
        read_reward(tmp_path)


def test_ctrf(tmp_path: Path) -> None:
    report = {
        "results": {
            "tool": {"name": "pytest"},
            "summary": {"tests": 2, "passed": 1, "failed": 1},
            "tests": [
                {"name": "test_units", "status": "passed", "duration": 12},
                {"name": "test_rounding", "status": "failed", "duration": 3, "message": "0.1 != 0.2"},
            ],
        }
    }
    (tmp_path / "ctrf.json").write_text(json.dumps(report))
    tests = read_ctrf(tmp_path / "ctrf.json")
    assert [(t.name, t.status, t.duration_ms) for t in tests] == [
        ("test_units", "passed", 12.0),
        ("test_rounding", "failed", 3.0),
    ]
    assert tests[1].message == "0.1 != 0.2"


def test_malformed_ctrf_yields_no_tests(tmp_path: Path) -> None:
    (tmp_path / "ctrf.json").write_text("{}")
    assert read_ctrf(tmp_path / "ctrf.json") == []


def test_reward_files_that_disagree_are_refused(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("0\n")
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 1}))
    with pytest.raises(RewardFileRefused, match="disagree"):
        read_reward(tmp_path)


@pytest.mark.parametrize("name", ["reward.txt", "reward.json"])
def test_a_reward_file_that_is_a_link_is_refused_unread(tmp_path: Path, name: str) -> None:
    secret = tmp_path / "host-secret"
    secret.write_text("0.5 host-secret-bytes\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / name).symlink_to(secret)
    with pytest.raises(RewardFileRefused, match="symbolic link") as exc:
        read_reward(logs)
    assert "host-secret-bytes" not in str(exc.value)


def test_a_reward_file_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "reward.txt")  # no writer: a blocking open would hang here for ever
    with pytest.raises(RewardFileRefused, match="FIFO"):
        read_reward(tmp_path)


def test_a_reward_file_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "reward.json").mkdir()
    with pytest.raises(RewardFileRefused, match="directory"):
        read_reward(tmp_path)


def test_a_sparse_3gb_reward_json_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "reward.json"
    with path.open("wb") as f:
        f.truncate(3 << 30)  # sparse: 3 GB of size, no blocks
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(RewardFileRefused, match="over the"):
        read_reward(tmp_path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB: nothing was read


def test_a_reward_file_just_past_the_cap_is_refused(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("1" + " " * REWARD_FILE_MAX_BYTES)
    with pytest.raises(RewardFileRefused, match="cap"):
        read_reward(tmp_path)


def test_ctrf_link_or_fifo_yields_no_tests(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text(json.dumps({"results": {"tests": [{"name": "forged", "status": "passed"}]}}))
    (tmp_path / "ctrf.json").symlink_to(target)
    assert read_ctrf(tmp_path / "ctrf.json") == []
    os.mkfifo(tmp_path / "fifo.json")
    assert read_ctrf(tmp_path / "fifo.json") == []
