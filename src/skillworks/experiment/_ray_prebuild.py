"""The image phase (`prebuild.py`) on the Ray executor: one Ray task per distinct image, placed by Ray on any
node that offers the container sandbox, which builds (or pulls) the image there and pushes it to the
registry. All images build at once, spread over the nodes; the trials start only when every one is pushed.
Each record names the node that built the image, so a run shows which node built what (and that no trial
built one)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from skillworks.experiment.executor import RunContext
from skillworks.experiment.prebuild import ImageJob, PrebuildError, PrebuiltImage, run_image_phase

_RETRIES = 1  # a build whose worker or node died is placed once more


async def prebuild_on_cluster(ray: Any, shipment_ref: Any, resource: str, run: RunContext) -> list[PrebuiltImage]:
    """The session's image phase on the cluster (nothing when the run has none)."""

    async def build(jobs: list[ImageJob]) -> list[PrebuiltImage]:
        remote = ray.remote(build_image_on_node)
        options = {"num_cpus": 1, "resources": {resource: 1}, "max_retries": _RETRIES}
        refs = [remote.options(**options).remote(shipment_ref, job) for job in jobs]
        try:
            done = await asyncio.gather(*refs, return_exceptions=True)
        except asyncio.CancelledError:  # Ctrl-C: the builds stop on their nodes (their build steps removed)
            for ref in refs:
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
            raise
        images: list[PrebuiltImage] = []
        for job, found in zip(jobs, done, strict=True):
            if isinstance(found, BaseException):  # the node was lost twice, or the task itself broke
                first = str(found).strip().splitlines()[0] if str(found).strip() else type(found).__name__
                raise PrebuildError(f"image {job.tag} of task {job.task.id} could not be built on the cluster: {first}")
            if "error" in found:
                raise PrebuildError(str(found["error"]))
            images.append(PrebuiltImage.model_validate(found))
        return images

    return await run_image_phase(run.images, run.run_dir, dict(run.spec.env_options), build, run.say)


def build_image_on_node(run: Any, job: ImageJob) -> dict[str, Any]:
    """The Ray task: the job's task files unpacked into this node's cache, its image built (or pulled) here
    and pushed. The record, or {"error": one line} (a PrebuildError travels as text, without Ray's frame)."""
    import ray

    from skillworks.experiment import _ray_node as node
    from skillworks.experiment.prebuild import build_one

    root = job.task.root.resolve()
    moves = {t.origin: t.materialise() for t in run.trees if t.origin == root or t.origin in root.parents}
    task = node.rebase(job.task, moves)
    node_id = str(ray.get_runtime_context().get_node_id())
    local = ImageJob(job.tag, task, job.strip_skills, job.task_ids)
    try:
        image = asyncio.run(build_one(local, dict(run.spec.env_options), node_id=node_id))
    except PrebuildError as exc:
        return {"error": str(exc)}
    return image.model_dump()
