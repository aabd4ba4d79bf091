"""`--image-registry`: task images shared through a real registry (the CNCF distribution registry,
Debian's `docker-registry`, started here on a free port of 127.0.0.1 over plain HTTP, hence
`--no-image-registry-tls-verify`). The first run builds the image and pushes it; with the local image
removed (`podman rmi`), the next run pulls it instead of building; an unreachable registry is a warning
and the trial builds. Trials are oracle runs of a copy of the csv-column-total example made unique
(its own content hash, so its own image tag) and removed at the end.

With a registry, a run first builds every distinct image its trials need once and pushes it (the image
phase, `experiment/prebuild.py`); the tests of the trial-time pull/push path turn it off (`--no-prebuild`)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from datetime import datetime
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
    flags = ["--image-registry", registry, "--no-image-registry-tls-verify", "--no-prebuild"]
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
    flags = ["--image-registry", closed, "--no-image-registry-tls-verify", "--no-prebuild"]
    done, results = _run(task, tmp_path, "unreachable", *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = results
    image = result["image"]
    assert result["outcome"] == "solved", result["error"]
    assert image["source"] == "built" and image["pushed"] is False, image
    assert "connection refused" in image["registry_error"], image
    assert "WARNING" in done.stderr and closed in done.stderr


def image_tasks(root: Path, tokens: dict[str, str]) -> Path:
    """Copies of the example task, by name, each with `unique.txt` holding its token: tasks with one token
    have identical environments (one image between them), another token is another image."""
    for name, token in tokens.items():
        task = root / name
        shutil.copytree(EXAMPLE, task)
        (task / "environment" / "unique.txt").write_text(token)
        md = task / "task.md"  # a name of its own (the task's id is its directory's name)
        md.write_text(md.read_text().replace("skillworks-examples/csv-column-total", f"prebuild/{name}"))
    return root


def _remove_images(tags: list[str]) -> None:
    for tag in tags:
        subprocess.run([*PODMAN, "rmi", "-f", tag], capture_output=True)


def test_prebuild_builds_each_distinct_image_once_and_pushes_it_before_any_trial(
    local_registry: str, tmp_path: Path
) -> None:
    """Two tasks with one environment and a third with its own, three trials at once: the image phase
    builds exactly the two images and pushes both, all before the first trial starts; no trial builds or
    pushes (each finds its image in this machine's store)."""
    shared, own = secrets.token_hex(8), secrets.token_hex(8)
    tasks = image_tasks(tmp_path / "tasks", {"a": shared, "b": shared, "c": own})
    flags = ["--image-registry", local_registry, "--no-image-registry-tls-verify", "--concurrency", "3"]
    done, results = _run(tasks, tmp_path, "prebuilt", *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    phase = json.loads((tmp_path / "prebuilt" / "prebuild.json").read_text())
    tags = [i["tag"] for i in phase["images"]]
    try:
        assert phase["registry"] == local_registry
        by_tasks = {tuple(i["task_ids"]): i for i in phase["images"]}
        assert set(by_tasks) == {("a", "b"), ("c",)}, phase
        assert [i["source"] for i in phase["images"]] == ["built", "built"]  # exactly two builds
        assert [i["pushed"] for i in phase["images"]] == [True, True]  # and two pushes
        assert all(i["seconds"] > 0 for i in phase["images"])
        assert {t.split(":")[1] for t in tags} <= set(registry_tags(local_registry))
        assert len(results) == 3 and all(r["outcome"] == "solved" for r in results), [r["error"] for r in results]
        for r in results:
            image = r["image"]
            assert image["source"] in ("pulled", "cached") and image["pushed"] is None, image  # no trial built
        assert {r["image"]["tag"] for r in results} == set(tags)
        first_trial = min(datetime.fromisoformat(r["started_at"]) for r in results)
        assert datetime.fromisoformat(phase["finished_at"]) <= first_trial  # the phase ended before any trial
        assert "prebuilt 2 image(s)" in done.stderr and "2 built" in done.stderr, done.stderr[-2000:]
    finally:
        _remove_images(tags)


def test_a_registry_refusing_the_push_stops_the_run_before_any_trial(readonly_registry: str, tmp_path: Path) -> None:
    """A registry that refuses pushes (read-only, HTTP 405): the image phase builds the image, cannot push
    it, and the run ends with one line naming the task and the image, non-zero, with no trial run."""
    tasks = image_tasks(tmp_path / "tasks", {"refused": secrets.token_hex(8)})
    done, results = _run(
        tasks, tmp_path, "refused", "--image-registry", readonly_registry, "--no-image-registry-tls-verify"
    )
    try:
        assert done.returncode == 2, done.stderr[-3000:]
        errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1, done.stderr[-3000:]
        assert "of task refused could not be pushed to " + readonly_registry in errors[0], errors
        assert "image skillworks/env:" in errors[0] and "405" in errors[0], errors
        trials = tmp_path / "refused" / "trials"
        assert results == [] and not (trials.exists() and any(trials.iterdir()))  # no trial ran
    finally:
        _remove_images(re.findall(r"skillworks/env:[0-9a-f]{16}", done.stderr))
