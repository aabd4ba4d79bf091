"""Eviction of a Ray node's cache of unpacked task and skill trees (`$SKILLWORKS_RAY_NODE_DIR/cache`): an entry
is one content hash; using it touches it. At the start of every driver session each node drops the entries
unused for longer than a maximum age, then the least recently used ones while the cache is over its size
limit — never one used within the last hour (a trial of another run may be reading it)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

MAX_AGE_ENV = "SKILLWORKS_RAY_CACHE_MAX_AGE_DAYS"  # default 7
MAX_SIZE_ENV = "SKILLWORKS_RAY_CACHE_MAX_GB"  # default 20
IN_USE_SEC = 3600.0


def touch(entry: Path) -> None:
    """Mark a cache entry as used now."""
    os.utime(entry)


def _size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def limits_from_env() -> tuple[float, int]:
    """(max age in seconds, max size in bytes); a bad value is the default."""
    try:
        days = float(os.environ.get(MAX_AGE_ENV) or 7)
    except ValueError:
        days = 7.0
    try:
        gigabytes = float(os.environ.get(MAX_SIZE_ENV) or 20)
    except ValueError:
        gigabytes = 20.0
    return days * 86400, int(gigabytes * 2**30)


def evict(cache: Path, max_age_sec: float, max_bytes: int, now: float | None = None) -> list[str]:
    """Remove stale entries of `cache`; returns the names removed."""
    if not cache.is_dir():
        return []
    now = time.time() if now is None else now
    entries = []
    for entry in cache.iterdir():
        if entry.is_dir() and ".tmp-" not in entry.name:
            try:
                entries.append((entry.stat().st_mtime, entry, _size(entry)))
            except OSError:
                continue
    entries.sort()  # least recently used first
    removed: list[str] = []
    total = sum(size for _, _, size in entries)
    for used, entry, size in entries:
        idle = now - used
        if idle < IN_USE_SEC:
            continue
        if idle > max_age_sec or total > max_bytes:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
            total -= size
    return removed
