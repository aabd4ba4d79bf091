"""`skillworks run ... --executor ray --submit`: the driver of a run as a Ray Job on the cluster.

The command line is run again on the cluster by the job (`_ray_job_entry`), so the campaign goes on when the
machine that submitted it goes away. The inputs given as local paths (the task dirs or trees, `--skills-from`, a
`--creator-skill` dir, `--ca-bundle`) are uploaded with the job (its runtime_env `working_dir`), then copied by
the job to `<out>/.submitted/<run_id>/` so that the run's experiment.json names paths that outlive the job
(what `--resume` reads). Every other path (`--out`, `--resume`, `--cache`) is a path on the cluster: it must be
absolute, and on storage the head node writes and keeps (results are written there, by the job's driver).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillworks.errors import UserError

MANIFEST = "submit.json"
STAGED = "inputs"  # the uploaded inputs, inside the job's working dir
SUBMITTED_DIR = ".submitted"  # under --out: the job's copy of its inputs, per run id
ENTRYPOINT = f"python -m skillworks.experiment._ray_job_entry {MANIFEST}"

# an argument of the job's command line: a string as typed, or {"input": REL}: the staged input at REL
JobArg = str | dict[str, str]


@dataclass(frozen=True)
class Submission:
    job_id: str
    address: str
    run_dir: Path  # on the cluster


def inputs_dir(out: Path, run_id: str) -> Path:
    """Where the job keeps the inputs of run `run_id` (on the cluster)."""
    return out / SUBMITTED_DIR / run_id


def _stage(inputs: dict[str, Path], into: Path) -> None:
    for rel, src in inputs.items():
        dest = into / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True)  # links inside a task tree (to _shared/...) stay links
        else:
            shutil.copy2(src, dest)


def submit_run(
    address: str,
    argv: list[JobArg],
    inputs: dict[str, Path],
    *,
    out: Path,
    run_id: str,
    submission_id: str,
) -> Submission:
    """Submit `skillworks <argv>` as a Ray Job to the job server at `address`, with `inputs` (REL -> local
    path) uploaded; `argv` names them as {"input": REL}. Returns the job id and the run dir it writes."""
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError:
        raise UserError("--submit needs Ray's job client: pip install 'ray[default]' (or 'skillworks[ray]')") from None
    run_dir = out / run_id
    with tempfile.TemporaryDirectory(prefix="skillworks-submit-") as tmp:
        work = Path(tmp)
        _stage(inputs, work / STAGED)
        manifest: dict[str, Any] = {"argv": argv, "inputs_dest": str(inputs_dir(out, run_id)) if inputs else None}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1))
        try:
            client = JobSubmissionClient(address)
            job_id = client.submit_job(
                entrypoint=ENTRYPOINT,
                submission_id=submission_id,
                runtime_env={"working_dir": str(work)},
                metadata={"skillworks_run_dir": str(run_dir)},
            )
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"--submit: the Ray job server at {address} did not take the job: {first}") from None
    return Submission(job_id=job_id, address=address, run_dir=run_dir)


def follow_lines(sub: Submission) -> list[str]:
    """What to tell the person who submitted: the job id and how to follow, fetch and continue it."""
    a = sub.address
    return [
        f"submitted Ray job {sub.job_id}; the run writes {sub.run_dir} on the cluster",
        f"  follow:   ray job logs -f --address {a} {sub.job_id}",
        f"  status:   ray job status --address {a} {sub.job_id}    stop: ray job stop --address {a} {sub.job_id}",
        f"  results:  {sub.run_dir}/results.jsonl and report.md (shared storage), or skillworks report {sub.run_dir}",
        f"  continue: skillworks run --resume {sub.run_dir} --executor ray --ray-address {a} --submit",
    ]
