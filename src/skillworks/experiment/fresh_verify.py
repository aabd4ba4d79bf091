"""Verification where the agent never ran (issue 30).

The agent's sandbox is untrusted once the agent phase ends: it may have been root there, planted a `.pth`
in site-packages, a binary earlier on PATH, a `/bin/sh` of its own, a `conftest.py` at `/`, or taken over
pid 1. So the verifier gets a *fresh* sandbox of the same backend from the task's image (the container
backend: a new container of the same image tag, never a commit of the agent's; the local backend: a new
bubblewrap view of the host seeded from the task's environment/), started while the agent works so its
start costs little wall time. Into it go the agent's *outputs* — the task's workdir and its declared
`verifier.inputs` (Harbor: top-level `artifacts`) — as plain data through the safe copy
(skillworks.sandbox.safe_copy: links re-created as links, special files skipped, sizes capped). What the
agent changed elsewhere is listed in the trial (`outputs_not_copied`), so a task that needs more is
visible, not silently failed. `verifier.isolation: shared` keeps the old same-sandbox verification for
tasks that check services or system state the agent changed; every result says which one it used."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import posixpath
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillworks.sandbox.base import Sandbox

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from skillworks.experiment.plan import TrialSpec
    from skillworks.experiment.trial import TrialEnvironment

# changes that are no output of the agent: skillworks' own dirs, scratch space, the runtime's files
IGNORED_CHANGES = (
    "/logs",
    "/tmp",
    "/var/tmp",
    "/run",
    "/proc",
    "/sys",
    "/dev",
    "/etc/hosts",
    "/etc/hostname",
    "/etc/resolv.conf",
)
MAX_LISTED = 100  # outputs_not_copied lists at most this many paths (then "... and N more")


@dataclass
class OutputsCopy:
    """What the verifier's sandbox got of the agent's: the paths copied, what the copy skipped (links it
    could not keep, special files, over the caps), and what the agent changed that was not copied."""

    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_copied: list[str] = field(default_factory=list)


def _within(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def verifier_sandbox(spec: TrialSpec, tenv: TrialEnvironment, scratch: Path, hide: list[Path], strip: bool) -> Sandbox:
    """A new, not yet started sandbox for the verifier of `spec`: the same backend and image as the
    agent's, without the agent's binds and, on the container backend, without a model channel."""
    from skillworks.sandbox import create_sandbox

    options: dict[str, Any] = dict(tenv.env_options)
    if tenv.env == "container":
        options["model_channel"] = False
    return create_sandbox(
        tenv.env,
        spec.task,
        scratch,
        run_id=tenv.run_id,
        hide_paths=hide,
        strip_task_skills=strip,
        **options,
    )


async def copy_outputs(
    spec: TrialSpec, agent_sandbox: Sandbox, verifier: Sandbox, scratch: Path, *, not_outputs: list[str]
) -> OutputsCopy:
    """Copy the agent's outputs (`Task.verifier_outputs`) into the verifier's sandbox, each replacing what
    the image has there, and list what else the agent changed (`not_outputs`: staged skills, the oracle's
    files — changes skillworks made itself)."""
    result = OutputsCopy()
    outputs = spec.task.verifier_outputs
    changed_paths = getattr(agent_sandbox, "changed_paths", None)  # optional Sandbox hook
    listing = asyncio.ensure_future(changed_paths()) if changed_paths is not None else None
    staging_root = scratch / f"outputs-{uuid.uuid4().hex[:8]}"
    staging_root.mkdir(parents=True)
    try:
        for index, path in enumerate(outputs):
            staging = staging_root / str(index)
            try:
                record = await agent_sandbox.download(path, staging, links="keep")
            except FileNotFoundError:
                continue  # the agent left nothing there: the verifier sees what the image has
            result.skipped.extend(record.lines())
            if staging.exists() or staging.is_symlink():
                await verifier.upload(staging, path, replace=True)
                await _owned_by_the_image_user(verifier, path)
                result.copied.append(path)
    except BaseException:
        if listing is not None:
            listing.cancel()
            with contextlib.suppress(BaseException):
                await listing
        raise
    finally:
        shutil.rmtree(staging_root, ignore_errors=True)
    if listing is not None:
        # a parent of an ignored path shows as changed itself (the runtime's /etc/hosts makes /etc "C")
        parents = {posixpath.dirname(p) for p in IGNORED_CHANGES}
        left = [
            p
            for p in await listing
            if p not in parents and not any(_within(p, root) for root in (*outputs, *IGNORED_CHANGES, *not_outputs))
        ]
        more = len(left) - MAX_LISTED
        result.not_copied = left[:MAX_LISTED] + ([f"... and {more} more"] if more > 0 else [])
    return result


async def _owned_by_the_image_user(verifier: Sandbox, path: str) -> None:
    """An upload arrives owned by root; in an image with a non-root USER the agent wrote its outputs as
    that user, so the copy is given back to it (a verifier may check who owns a file)."""
    owner = getattr(verifier, "user", "")
    if not isinstance(owner, str) or owner in ("", "root", "0") or owner.startswith(("0:", "root:")):
        return
    done = await verifier.exec(["chown", "-hR", "--", owner, path], user="root", timeout=60)
    if done.exit_code != 0:
        log.warning("could not give %s to the image's user %s: %s", path, owner, done.stderr.strip()[:200])
