"""`--image-registry`: task images shared through a real registry (the CNCF distribution registry,
Debian's `docker-registry`, started here on a free port of 127.0.0.1 over plain HTTP, hence
`--no-image-registry-tls-verify`). The first run builds the image and pushes it; with the local image
removed (`podman rmi`), the next run pulls it instead of building; an unreachable registry is a warning
and the trial builds. Trials are oracle runs of a copy of the csv-column-total example made unique
(its own content hash, so its own image tag) and removed at the end."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.podman, pytest.mark.slow]

REPO = Path(__file__).parents[3]
EXAMPLE = REPO / "examples" / "container" / "csv-column-total"
BASE_IMAGE = os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base")
PODMAN = ["podman", *os.environ.get("SKILLWORKS_CONTAINER_GLOBAL_FLAGS", "").split()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example task with one extra file: an image of its own, removed at the end."""
    root = tmp_path_factory.mktemp("tasks") / "registry-task"
    shutil.copytree(EXAMPLE, root)
    (root / "environment" / "unique.txt").write_text(secrets.token_hex(8))
    yield root
    for tag in _TAG:
        subprocess.run([*PODMAN, "rmi", "-f", f"skillworks/env:{tag}"], capture_output=True)


_TAG: list[str] = []  # the task's image tag, once a run has told it


def _run(task: Path, out: Path, run_id: str, *flags: str) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    args = ["run", str(task), "--env", "container", "--agent", "oracle", "--conditions", "none", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args, "--run-id", run_id, "--concurrency", "1", *flags],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "SKILLWORKS_IMAGE_MAP": f"debian:bookworm-slim={BASE_IMAGE}"},
    )
    path = out / run_id / "results.jsonl"
    results = [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
    return done, results


def registry_tags(address: str) -> list[str]:
    """The tags the registry holds for skillworks/env (its HTTP API)."""
    with urllib.request.urlopen(f"http://{address}/v2/skillworks/env/tags/list", timeout=10) as resp:
        return list(json.load(resp).get("tags") or [])


def _rmi(tag: str) -> None:
    done = subprocess.run([*PODMAN, "rmi", tag], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    gone = subprocess.run([*PODMAN, "image", "exists", tag])
    assert gone.returncode != 0


def test_built_image_is_pushed_and_the_next_run_pulls_it(local_registry: str, task: Path, tmp_path: Path) -> None:
    registry = local_registry
    flags = ["--image-registry", registry, "--no-image-registry-tls-verify"]
    first, results = _run(task, tmp_path, "first", *flags)
    assert first.returncode == 0, first.stderr[-3000:]
    (result,) = results
    image = result["image"]
    assert result["outcome"] == "solved", result["error"]
    assert image["source"] == "built" and image["pushed"] is True and image["registry"] == registry, image
    assert image["registry_error"] is None
    tag = image["tag"]
    _TAG.append(tag.split(":")[1])
    assert tag.split(":")[1] in registry_tags(registry)  # the registry holds it now
    spec = json.loads((tmp_path / "first" / "experiment.json").read_text())
    assert spec["env_options"]["image_registry"] == registry and spec["env_options"]["registry_tls_verify"] is False

    _rmi(tag)  # as on a node that never built it
    second, results = _run(task, tmp_path, "second", *flags, "--trials", "2")
    assert second.returncode == 0, second.stderr[-3000:]
    by_index = {r["trial_index"]: r for r in results}
    assert [by_index[i]["outcome"] for i in (0, 1)] == ["solved", "solved"]
    pulled, reused = by_index[0]["image"], by_index[1]["image"]
    assert pulled["source"] == "pulled" and pulled["tag"] == tag and pulled["pushed"] is None, pulled
    assert reused["source"] == "cached" and reused["pushed"] is None, reused  # pulled once per node
    listed = subprocess.run([*PODMAN, "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True, text=True)
    assert f"localhost/{tag}" in listed.stdout.split()
    assert registry not in listed.stdout  # the registry's name of it was only a step to the local tag


def test_unreachable_registry_is_a_warning_and_the_trial_builds(task: Path, tmp_path: Path) -> None:
    closed = f"127.0.0.1:{_free_port()}"
    if _TAG:  # make sure there is no local image: the pull must be tried
        subprocess.run([*PODMAN, "rmi", f"skillworks/env:{_TAG[0]}"], capture_output=True)
    done, results = _run(task, tmp_path, "unreachable", "--image-registry", closed, "--no-image-registry-tls-verify")
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = results
    image = result["image"]
    assert result["outcome"] == "solved", result["error"]
    assert image["source"] == "built" and image["pushed"] is False, image
    assert "connection refused" in image["registry_error"], image
    assert "WARNING" in done.stderr and closed in done.stderr
