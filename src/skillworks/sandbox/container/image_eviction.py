"""Eviction of the task images skillworks built on a host (label `skillworks.image=1`), by age and size, with the
limits of a Ray node's file cache (`SKILLWORKS_RAY_CACHE_MAX_AGE_DAYS`, `SKILLWORKS_RAY_CACHE_MAX_GB`).

An image's last use is the mtime of its use mark (`<cache>/image-use/<cli>-<hash>`, touched by every trial that
asks for it, see `image.ensure_image`), else its creation time. Never removed: an image any container (running or
stopped) was made from, one used within the last hour (a trial of another run may be about to start from it),
and any image without the label (base images, the user's own). The runtime's `rmi` without --force refuses an
image a container uses, so a container started meanwhile keeps its image too."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from skillworks.sandbox.container.runtime import ContainerRuntime, run_command

IMAGE_LABEL = "skillworks.image=1"
IN_USE_SEC = 3600.0


@dataclass(frozen=True)
class HostImage:
    id: str
    tags: tuple[str, ...]
    size: int  # bytes
    last_used: float  # unix time


def use_mark(cache: Path, cli: str, tag: str) -> Path:
    """The file whose mtime says when the image `tag` was last asked for."""
    return cache / "image-use" / f"{Path(cli).name}-{tag.rsplit(':', 1)[-1]}"


def touch_use(cache: Path, cli: str, tag: str) -> None:
    mark = use_mark(cache, cli, tag)
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.touch()
    os.utime(mark)


def select_evictions(
    images: list[HostImage], in_use: set[str], max_age_sec: float, max_bytes: int, now: float
) -> list[HostImage]:
    """The images to remove: least recently used first, those idle past the age limit, then while the
    images' total size is over the limit; never one in `in_use` (by id) or used within the last hour."""
    chosen: list[HostImage] = []
    total = sum(i.size for i in images)
    for image in sorted(images, key=lambda i: i.last_used):
        idle = now - image.last_used
        if image.id in in_use or idle < IN_USE_SEC:
            continue
        if idle > max_age_sec or total > max_bytes:
            chosen.append(image)
            total -= image.size
    return chosen


def _created(value: object) -> float:
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    try:  # RFC 3339 with nanoseconds (podman, docker): keep microseconds
        head, _, rest = text.partition(".")
        frac = "".join(ch for ch in rest if ch.isdigit())[:6]
        zone = rest.lstrip("0123456789") or "+00:00"
        return datetime.fromisoformat(f"{head}.{frac or '0'}{'+00:00' if zone in ('Z', 'z') else zone}").timestamp()
    except ValueError:
        return 0.0


async def host_images(
    runtime: ContainerRuntime, cache: Path, labels: tuple[str, ...] = (IMAGE_LABEL,)
) -> list[HostImage]:
    """The images with skillworks' label (and any other `labels`) on this host, with their size and last use."""
    filters = [arg for label in labels for arg in ("--filter", f"label={label}")]
    listed = await run_command(runtime.argv("images", "-q", "--no-trunc", *filters))
    ids = sorted({line.strip() for line in listed.stdout.splitlines() if line.strip()}) if listed.ok else []
    if not ids:
        return []
    inspected = await run_command(runtime.argv("image", "inspect", *ids))
    if not inspected.ok:
        return []
    images: list[HostImage] = []
    for item in json.loads(inspected.stdout or "[]"):
        tags = tuple(item.get("RepoTags") or ())
        marks = [use_mark(cache, runtime.cli, t) for t in tags]
        used = max((m.stat().st_mtime for m in marks if m.exists()), default=_created(item.get("Created")))
        images.append(HostImage(str(item.get("Id", "")), tags, int(item.get("Size") or 0), used))
    return images


async def images_in_use(runtime: ContainerRuntime) -> set[str] | None:
    """The ids of the images any container on this host was made from; None when they cannot be listed."""
    listed = await run_command(runtime.argv("ps", "-a", "-q", "--no-trunc"))
    if not listed.ok:
        return None
    ids = [line.strip() for line in listed.stdout.splitlines() if line.strip()]
    if not ids:
        return set()
    inspected = await run_command(runtime.argv("container", "inspect", *ids))
    if not inspected.ok:  # a container went away between the two commands: ask again next session
        return None
    return {str(c.get("Image", "")).removeprefix("sha256:") for c in json.loads(inspected.stdout or "[]")}


async def evict_images(
    runtime: ContainerRuntime,
    cache: Path,
    max_age_sec: float,
    max_bytes: int,
    now: float | None = None,
    labels: tuple[str, ...] = (IMAGE_LABEL,),
) -> list[str]:
    """Remove the stale skillworks images of this host (those with all of `labels`); returns the tags (or ids)
    removed."""
    in_use = await images_in_use(runtime)
    if in_use is None:
        return []  # not knowing which images containers use, remove none
    images = await host_images(runtime, cache, labels)
    normalised = {i.removeprefix("sha256:") for i in in_use}
    candidates = [HostImage(i.id.removeprefix("sha256:"), i.tags, i.size, i.last_used) for i in images]
    removed: list[str] = []
    for image in select_evictions(candidates, normalised, max_age_sec, max_bytes, time.time() if now is None else now):
        # by tag (an id with several tags needs --force); no --force: refused when a container uses it
        done = await run_command(runtime.argv("rmi", *(image.tags or (image.id,))))
        if done.ok:
            removed.append(image.tags[0] if image.tags else image.id)
            for tag in image.tags:
                use_mark(cache, runtime.cli, tag).unlink(missing_ok=True)
    return removed
