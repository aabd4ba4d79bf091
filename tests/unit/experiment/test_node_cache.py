"""Eviction of a Ray node's cache of task and skill trees: by age, then least recently used by size, never
an entry used within the last hour."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillworks.experiment._node_cache import IN_USE_SEC, MAX_AGE_ENV, MAX_SIZE_ENV, evict, limits_from_env

NOW = 10_000_000.0


def _entry(cache: Path, name: str, size: int, used: float) -> Path:
    entry = cache / name
    entry.mkdir(parents=True)
    (entry / "f").write_bytes(b"x" * size)
    os.utime(entry, (used, used))
    return entry


def test_old_entries_go_then_least_recent_while_over_size_and_in_use_ones_stay(tmp_path: Path) -> None:
    day = 86400
    _entry(tmp_path, "task-old", 10, NOW - 10 * day)
    _entry(tmp_path, "task-lru", 100, NOW - 2 * day)
    _entry(tmp_path, "task-recent", 100, NOW - day)
    _entry(tmp_path, "task-busy", 500, NOW - IN_USE_SEC / 2)  # over the size limit alone, but in use
    (tmp_path / "task-x.tmp-abc").mkdir()  # being unpacked
    removed = evict(tmp_path, max_age_sec=7 * day, max_bytes=650, now=NOW)
    assert removed == ["task-old", "task-lru"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task-busy", "task-recent", "task-x.tmp-abc"]
    assert evict(tmp_path / "missing", 1, 1, now=NOW) == []


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_AGE_ENV, "2")
    monkeypatch.setenv(MAX_SIZE_ENV, "0.5")
    assert limits_from_env() == (2 * 86400, 2**29)
    monkeypatch.setenv(MAX_AGE_ENV, "soon")
    assert limits_from_env()[0] == 7 * 86400
