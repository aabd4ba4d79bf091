"""Eviction of task images on a real podman host (`image_eviction.evict_images`): three tiny images built from
the base image with skillworks' label (plus a label of this test, so no other image of the host is considered):
one idle past the age limit goes, one as old that a container was made from stays, one used now stays."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillworks.sandbox.container.image_eviction import IMAGE_LABEL, evict_images, touch_use, use_mark
from skillworks.sandbox.container.runtime import detect_runtime

pytestmark = [pytest.mark.podman, pytest.mark.slow]

BASE_IMAGE = os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base")
PODMAN = ["podman", *os.environ.get("SKILLWORKS_CONTAINER_GLOBAL_FLAGS", "").split()]
BUILD_FLAGS = os.environ.get("SKILLWORKS_CONTAINER_BUILD_FLAGS", "").split()


@pytest.fixture
def images(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    mark = f"skillworks.test-eviction={secrets.token_hex(4)}"
    tags: dict[str, str] = {}
    container: list[str] = []
    try:
        for name in ("stale", "stale-in-use", "fresh"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nRUN echo {name} > /marker\n")
            tag = f"localhost/skillworks-evict-test:{name}-{secrets.token_hex(3)}"
            cmd = [
                *PODMAN,
                "build",
                *BUILD_FLAGS,
                "-t",
                tag,
                "--label",
                IMAGE_LABEL,
                "--label",
                mark,
                str(tmp_path / name),
            ]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]
            tags[name] = tag
        made = subprocess.run([*PODMAN, "create", tags["stale-in-use"], "true"], capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
        container.append(made.stdout.strip())
        yield mark, tags
    finally:
        for c in container:
            subprocess.run([*PODMAN, "rm", "-f", c], capture_output=True)
        for tag in tags.values():
            subprocess.run([*PODMAN, "rmi", "-f", tag], capture_output=True)


def _exists(tag: str) -> bool:
    return subprocess.run([*PODMAN, "image", "exists", tag], capture_output=True).returncode == 0


def test_stale_images_are_evicted_but_never_one_a_container_uses_nor_a_fresh_one(
    images: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    mark, tags = images
    cache = tmp_path / "cache"
    runtime = detect_runtime("podman", global_flags=PODMAN[1:])
    ten_days_ago = time.time() - 10 * 86400
    for name, tag in tags.items():
        touch_use(cache, runtime.cli, tag)
        if name != "fresh":
            os.utime(use_mark(cache, runtime.cli, tag), (ten_days_ago, ten_days_ago))
    removed = asyncio.run(evict_images(runtime, cache, 7 * 86400, 100 * 2**30, labels=(IMAGE_LABEL, mark)))
    assert removed == [tags["stale"]]
    assert not _exists(tags["stale"]) and not use_mark(cache, runtime.cli, tags["stale"]).exists()
    assert _exists(tags["stale-in-use"]) and _exists(tags["fresh"])
    assert _exists(BASE_IMAGE)  # unlabelled: never considered
