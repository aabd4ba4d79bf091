"""Build-and-push-once: the image phase of a container run with `--image-registry`.

Before any trial is scheduled, the session's trials are reduced to the distinct task images they need (one
per content hash: a task and whether its condition strips the skills baked into the image), and each image
is built exactly once — in this process on the local executor, as one Ray task per image on the Ray
executor (`_ray_prebuild.py`) — and pushed to the registry. Trials then pull it (or find it in their
node's cache) instead of every node building it. An image already in the registry is pulled, not rebuilt.

A build that fails, or a registry that refuses the push, ends the run before any trial (and so before any
model call) with one line naming the task and the image. The phase is on by default whenever a container
run has a registry; `--no-prebuild` turns it off (each node then pulls or builds on its first trial, and a
registry problem is only a warning). What was prebuilt is kept in `prebuild.json` in the run dir.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from skillworks.errors import UserError
from skillworks.experiment.plan import TrialSpec
from skillworks.experiment.spec import ExperimentSpec
from skillworks.provision.conditions import get_condition
from skillworks.results import ImageSource
from skillworks.tasks.model import Task

PREBUILD_FILE = "prebuild.json"


class PrebuildError(UserError):
    """An image of the run could not be built or pushed before the trials: the run did not start."""


@dataclass(frozen=True)
class ImageJob:
    """One distinct image the session needs: built for the first task that needs it."""

    tag: str  # skillworks/env:<hash16>
    task: Task
    strip_skills: bool
    task_ids: tuple[str, ...]  # every task whose trials use this image


class PrebuiltImage(BaseModel):
    """What the image phase did for one image."""

    model_config = ConfigDict(extra="forbid")

    tag: str
    task_id: str  # the task it was built for
    task_ids: list[str]  # every task of the run that uses it
    strip_skills: bool
    source: ImageSource  # built, pulled from the registry (already there), or already in the local store
    seconds: float
    pushed: bool | None  # None: nothing to push (it came from the registry)
    host: str  # where it was built (or found)
    node_id: str | None = None  # the Ray node, on the Ray executor


def image_jobs(todo: Iterable[TrialSpec], spec: ExperimentSpec, *, enabled: bool = True) -> list[ImageJob]:
    """The distinct images the trials of `todo` need, when the phase applies (a container run with a
    registry, not turned off); else none."""
    if not enabled or spec.env != "container" or not spec.env_options.get("image_registry"):
        return []
    from skillworks.sandbox.container.factory import options_from
    from skillworks.sandbox.container.image import IMAGE_REPO, plan_task_image

    tags: dict[tuple[str, bool], str] = {}  # (task id, strip) -> tag
    jobs: dict[str, ImageJob] = {}
    for trial in todo:
        strip = get_condition(trial.condition).strips_task_skills
        key = (trial.task.id, strip)
        if key not in tags:
            options = options_from(**spec.env_options, strip_task_skills=strip).build_options()
            _, _, _, content_hash = plan_task_image(trial.task, options)
            tags[key] = f"{IMAGE_REPO}:{content_hash[:16]}"
        tag = tags[key]
        job = jobs.get(tag)
        if job is None:
            jobs[tag] = ImageJob(tag, trial.task, strip, (trial.task.id,))
        elif trial.task.id not in job.task_ids:
            jobs[tag] = ImageJob(tag, job.task, job.strip_skills, (*job.task_ids, trial.task.id))
    return list(jobs.values())


async def build_one(job: ImageJob, env_options: dict[str, Any], node_id: str | None = None) -> PrebuiltImage:
    """Build (or pull) one image and push it, here: in the driver's process, or in a Ray task on a node.
    PrebuildError when it cannot be built or pushed."""
    from skillworks.sandbox.container.factory import options_from
    from skillworks.sandbox.container.image import ensure_image
    from skillworks.sandbox.container.runtime import detect_runtime

    opts = options_from(**env_options, strip_task_skills=job.strip_skills)
    registry = opts.image_registry
    try:
        runtime = detect_runtime(
            opts.cli, global_flags=opts.global_flags, run_flags=opts.run_flags, build_flags=opts.build_flags
        )
        image = await ensure_image(runtime, job.task, opts.build_options())
    except Exception as exc:
        raise PrebuildError(f"image {job.tag} of task {job.task.id} could not be built: {_one_line(exc)}") from None
    if image.pushed is False:
        raise PrebuildError(
            f"image {image.tag} of task {job.task.id} could not be pushed to {registry}: {image.registry_error} "
            "(fix the registry or its login, or pass --no-prebuild to build on each node)"
        )
    return PrebuiltImage(
        tag=image.tag,
        task_id=job.task.id,
        task_ids=list(job.task_ids),
        strip_skills=job.strip_skills,
        source=image.source,
        seconds=round(image.seconds, 3),
        pushed=image.pushed,
        host=socket.gethostname(),
        node_id=node_id,
    )


async def prebuild_here(jobs: list[ImageJob], env_options: dict[str, Any]) -> list[PrebuiltImage]:
    """The local executor's image phase: each image built in this process, one after the other (a build
    uses the machine's cores; the trials after it find the image in the local store)."""
    return [await build_one(job, env_options) for job in jobs]


def write_prebuild(
    run_dir: Path, images: list[PrebuiltImage], started_at: datetime, seconds: float, registry: str | None
) -> None:
    """`prebuild.json`: the image phase of the last session of the run (it ends before any trial starts)."""
    data = {
        "registry": registry,
        "started_at": started_at.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "seconds": round(seconds, 3),
        "images": [i.model_dump() for i in images],
    }
    tmp = run_dir / f"{PREBUILD_FILE}.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, run_dir / PREBUILD_FILE)


def read_prebuild(run_dir: Path) -> list[PrebuiltImage]:
    """The images the last session prebuilt (none when it had no image phase, or the file is unreadable)."""
    try:
        data = json.loads((run_dir / PREBUILD_FILE).read_text())
        return [PrebuiltImage.model_validate(i) for i in data.get("images") or []]
    except (OSError, ValueError, AttributeError):
        return []


def summary_line(images: list[PrebuiltImage], seconds: float, registry: str | None) -> str:
    """One line for the run's output: how many images, what happened to them, how long it took."""
    counts = {s: sum(1 for i in images if i.source == s) for s in ("built", "pulled", "cached")}
    parts = [f"{n} {s}" for s, n in counts.items() if n]
    pushed = sum(1 for i in images if i.pushed)
    return (
        f"prebuilt {len(images)} image(s) for the trials in {seconds:.1f}s ({', '.join(parts) or 'none'}; "
        f"{pushed} pushed to {registry})"
    )


async def run_image_phase(
    jobs: list[ImageJob],
    run_dir: Path,
    env_options: dict[str, Any],
    build: Any,
    say: Any = None,
) -> list[PrebuiltImage]:
    """Run the phase with `build` (a coroutine function of the jobs: prebuild_here, or the Ray one), record
    it and say it in one line. Nothing to build: nothing recorded."""
    if not jobs:
        return []
    started_at, started = datetime.now(UTC), time.monotonic()
    images: list[PrebuiltImage] = await build(jobs)
    seconds = time.monotonic() - started
    registry = env_options.get("image_registry")
    write_prebuild(run_dir, images, started_at, seconds, registry)
    if say is not None:
        say(summary_line(images, seconds, registry))
    return images


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
