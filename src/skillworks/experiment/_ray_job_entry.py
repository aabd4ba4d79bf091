"""The entrypoint of a `skillworks run --submit` Ray Job, run by the job server on the cluster in the job's
working dir (the uploaded inputs and `submit.json`, see `ray_submit`): copy the inputs to their kept place
under `--out`, then run the `skillworks` command line with the inputs' paths filled in."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from skillworks.experiment.ray_submit import STAGED


def job_argv(manifest: dict[str, object], dest: Path | None) -> list[str]:
    """The command line of the job: each {"input": REL} becomes the kept copy's path `dest/REL`."""
    args: list[str] = []
    for arg in manifest["argv"]:  # type: ignore[attr-defined]
        if isinstance(arg, dict):
            if dest is None:
                raise ValueError(f"submit.json names input {arg['input']!r} but uploads none")
            args.append(str(dest / arg["input"]))
        else:
            args.append(str(arg))
    return args


def main(argv: list[str]) -> int:
    manifest = json.loads(Path(argv[0]).read_text())
    dest = Path(manifest["inputs_dest"]) if manifest.get("inputs_dest") else None
    if dest is not None:
        if dest.exists():
            print(
                f"error: {dest}: the inputs of this run id are kept there already; submit a new --run-id",
                file=sys.stderr,
            )
            return 2
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(Path(STAGED), dest, symlinks=True)
    args = [sys.executable, "-m", "skillworks.cli.main", *job_argv(manifest, dest)]
    print("skillworks job:", " ".join(args[1:]), file=sys.stderr, flush=True)
    os.execv(sys.executable, args)  # the job's exit status is the command's
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
