"""The run directory: experiment.json, results.jsonl (append-only, the resume source of truth), trials/."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from skillworks.errors import UserError, first_validation_error
from skillworks.experiment.spec import ExperimentSpec
from skillworks.results import TrialError, TrialResult, reward_problem

log = logging.getLogger(__name__)

_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_run_id(run_id: str) -> str:
    """A run id names one directory under --out: letters, digits, '.', '_' and '-', no path separators
    (so `../x` or `a/b` cannot write outside the output directory)."""
    if not _RUN_ID_RE.match(run_id):
        raise UserError(
            f"--run-id {run_id!r} is not a plain directory name (letters, digits, '.', '_', '-'; "
            "starting with a letter or digit; at most 128 characters)"
        )
    return run_id


class RunStore:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.experiment_path = run_dir / "experiment.json"
        self.results_path = run_dir / "results.jsonl"
        self.trials_dir = run_dir / "trials"

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the run directory for one process: two writers would record trials twice."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with (self.run_dir / ".lock").open("w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UserError("another skillworks process is using this run directory", self.run_dir) from None
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def trial_dir(self, trial_id: str) -> Path:
        return self.trials_dir / trial_id

    def write_spec(self, spec: ExperimentSpec) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.experiment_path.with_suffix(".json.tmp")
        tmp.write_text(spec.model_dump_json(indent=2))
        os.replace(tmp, self.experiment_path)

    def read_spec(self) -> ExperimentSpec:
        if not self.experiment_path.is_file():
            raise UserError("not a run directory (no experiment.json)", self.run_dir)
        try:
            return ExperimentSpec.model_validate_json(self.experiment_path.read_text())
        except ValidationError as exc:
            raise UserError(f"invalid experiment.json: {first_validation_error(exc)}", self.experiment_path) from None

    def append(self, result: TrialResult) -> None:
        """Append one result durably (one write, flushed and fsynced) so a SIGKILL loses at most this line."""
        line = result.model_dump_json() + "\n"
        data = line.encode()
        fd = os.open(self.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            before = os.fstat(fd).st_size
            try:
                written = os.write(fd, data)
                if written != len(data):  # a disk that filled mid-line: no torn line is left behind
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.results_path))
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before)
                raise OSError(exc.errno, exc.strerror, str(self.results_path)) from None
        finally:
            os.close(fd)

    def read_results(self, warnings: list[str] | None = None) -> list[TrialResult]:
        """Every recorded result; the one reader of results.jsonl (resume and reports alike).

        A last line that is not JSON is a write torn by a kill: it is skipped, with a note appended to
        `warnings` (logged when none is given). Any other bad line, including a last line that is JSON but
        not a TrialResult, is a UserError naming the file and the line."""
        if not self.results_path.is_file():
            return []
        try:
            text = self.results_path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"not UTF-8 text: {exc}", self.results_path) from None
        numbered = [(i, line) for i, line in enumerate(text.split("\n"), start=1) if line.strip()]
        out: list[TrialResult] = []
        for pos, (lineno, line) in enumerate(numbered):
            try:  # the common case in one pass of pydantic's JSON parser; a bad line is told apart below
                out.append(self._tolerate_bad_reward(TrialResult.model_validate_json(line), lineno, warnings))
                continue
            except ValueError:
                pass
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                if pos == len(numbered) - 1:
                    note = f"{self.results_path}: line {lineno}: skipped a torn last line (interrupted write)"
                    if warnings is None:
                        log.warning("%s", note)
                    else:
                        warnings.append(note)
                    continue
                raise UserError(f"line {lineno}: not valid JSON ({exc.msg})", self.results_path) from None
            try:
                result = TrialResult.model_validate(data)
            except ValidationError as exc:
                reason = first_validation_error(exc, "(line)")
                raise UserError(f"line {lineno}: not a TrialResult: {reason}", self.results_path) from None
            out.append(self._tolerate_bad_reward(result, lineno, warnings))
        return out

    def _tolerate_bad_reward(self, result: TrialResult, lineno: int, warnings: list[str] | None) -> TrialResult:
        """A recorded reward that is not a finite number in [0, 1] (written by an older version, or by
        hand) never reaches the statistics: the trial counts as a verifier error, and a note says so."""
        values = [] if result.reward is None else [result.reward]
        problem = next(filter(None, map(reward_problem, [*values, *result.rewards.values()])), None)
        if problem is None:
            return result
        note = f"{self.results_path}: line {lineno}: trial {result.trial_id}: recorded {problem}; counted as an error"
        if warnings is None:
            log.warning("%s", note)
        else:
            warnings.append(note)
        error = TrialError(category="verifier_error", message=f"recorded {problem}", phase="verify")
        return result.model_copy(update={"reward": None, "rewards": {}, "outcome": "error", "error": error})

    def repair_torn_tail(self) -> None:
        """Drop a torn last line so appends after a resume start on a fresh line."""
        if not self.results_path.is_file():
            return
        data = self.results_path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            self.results_path.write_bytes(data[:cut])

    def recorded_ids(self) -> set[str]:
        return {r.trial_id for r in self.read_results()}
