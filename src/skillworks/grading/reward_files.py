"""Reading a verifier's reward files safely, from a log dir downloaded out of the sandbox.

Harbor's order: `reward.json` (named values) when it exists, else `reward.txt` (one float); when
reward.json has no `reward` key, reward.txt gives it. When both give a trial reward and they differ,
neither is believed. Each file is opened without following a link (O_NOFOLLOW) and without blocking
(O_NONBLOCK: a FIFO never hangs the reader), must be a regular file, and is read only up to
REWARD_FILE_MAX_BYTES (its size is checked with fstat first: a 3 GB sparse file is never read).

A reward file that is a link, a FIFO or another special file, larger than the cap, or that disagrees
with the other one is not something an honest verifier writes into an emptied dir; it is what a
process of the agent's (run by the verifier, or planted in the image) leaves: RewardFileRefused, the
agent's failure. A missing or garbled reward stays a VerifierError. No message quotes a file's bytes."""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path

from skillworks.errors import VerifierError
from skillworks.results import reward_problem

REWARD_FILE_NAMES = ("reward.json", "reward.txt")
# a reward file holds a number or a few named numbers: 64 KiB is far above any real one
REWARD_FILE_MAX_BYTES = 64 * 1024


class RewardFileRefused(VerifierError):
    """A reward file that cannot have come from an honest verifier (a link, a special file, past the
    size cap, or contradicting the other reward file): the trial is the agent's failure (reward 0,
    failure mode ``reward_file_refused``), not an infrastructure error."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def read_capped(path: Path, limit: int = REWARD_FILE_MAX_BYTES) -> bytes | None:
    """The bytes of the regular file `path`, or None when nothing is there. Never follows a link at
    `path`, never blocks on a FIFO, never reads past `limit`: RewardFileRefused names what was found."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW on a link
            raise RewardFileRefused(f"{path.name} is a symbolic link (not followed)") from None
        raise VerifierError(f"{path.name} cannot be opened: {os.strerror(exc.errno or 0)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RewardFileRefused(f"{path.name} is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise RewardFileRefused(f"{path.name} is {info.st_size} bytes, over the {limit}-byte cap")
        chunks: list[bytes] = []
        left = limit + 1  # one byte more than allowed shows a file that grew after fstat
        while left > 0:
            chunk = os.read(fd, min(left, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise RewardFileRefused(f"{path.name} grew past the {limit}-byte cap while read")
        return data
    finally:
        os.close(fd)


def _as_reward(value: object, where: str) -> float:
    """A reward is a finite number in [0, 1]; anything else is the verifier's error (never clipped)."""
    problem = reward_problem(value)
    if problem is not None:
        raise VerifierError(f"{where}: {problem}")
    assert isinstance(value, int | float)
    return float(value)


def _parse_txt(data: bytes) -> float:
    text = data.decode("utf-8", errors="replace").strip()
    try:
        value = float(text)
    except ValueError:
        raise VerifierError(f"reward.txt does not hold one number ({len(data)} bytes)") from None
    return _as_reward(value, "reward.txt")


def _parse_json(data: bytes) -> dict[str, float]:
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # the message gives a position, no bytes
        where = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "its encoding"
        raise VerifierError(f"reward.json is not valid JSON (at {where})") from None
    if not isinstance(parsed, dict) or not parsed:
        raise VerifierError("reward.json must be a non-empty object of named numeric values")
    return {str(k): _as_reward(v, f"reward.json[{str(k)[:40]!a}]") for k, v in parsed.items()}


def read_reward(log_dir: Path) -> tuple[float, dict[str, float]]:
    """The trial's reward and the named rewards from a downloaded verifier log dir (module docstring).

    reward.json's trial reward is its `reward` key, else reward.txt's number when that exists, else
    its only value, else the mean of its values."""
    raw_json = read_capped(log_dir / "reward.json")
    raw_txt = read_capped(log_dir / "reward.txt")
    txt = _parse_txt(raw_txt) if raw_txt is not None else None
    if raw_json is None:
        if txt is None:
            raise VerifierError("the verifier wrote no reward (expected /logs/verifier/reward.txt or reward.json)")
        return txt, {"reward": txt}
    rewards = _parse_json(raw_json)
    if "reward" in rewards:
        if txt is not None and not math.isclose(txt, rewards["reward"], rel_tol=0.0, abs_tol=1e-9):
            raise RewardFileRefused(
                f"reward.txt ({txt:g}) and reward.json's reward ({rewards['reward']:g}) disagree; neither is used"
            )
        return rewards["reward"], rewards
    if txt is not None:
        return txt, {**rewards, "reward": txt}
    if len(rewards) == 1:
        return next(iter(rewards.values())), rewards
    return sum(rewards.values()) / len(rewards), rewards
