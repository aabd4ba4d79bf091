"""Executor choice and what the Ray executor ships to nodes (no cluster needed here; the cluster tests are in
tests/integration/experiment/test_ray_executor.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillworks.cli.run_cmd import _executor
from skillworks.errors import UserError
from skillworks.experiment import LocalExecutor
from skillworks.experiment._ray_node import pack_tree, rebase, unpack_tree
from skillworks.experiment.ray_executor import RayExecutor
from skillworks.tasks import load_task

REPO = Path(__file__).resolve().parents[3]


def test_executor_choice() -> None:
    assert isinstance(_executor("local", None, 1, None), LocalExecutor)
    ray = _executor("ray", "auto", 2, 0.5)
    assert isinstance(ray, RayExecutor) and (ray.address, ray.retries, ray.cpus_per_trial) == ("auto", 2, 0.5)
    with pytest.raises(UserError, match="unknown --executor 'slurm': use local or ray"):
        _executor("slurm", None, 1, None)
    with pytest.raises(UserError, match="--ray-address needs --executor ray"):
        _executor("local", "auto", 1, None)


def test_bad_executor_is_a_one_line_error_before_any_run_dir(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillworks.cli.main",
            "run",
            str(REPO / "examples" / "quickstart"),
            "--executor",
            "slurm",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "unknown --executor 'slurm'" in done.stderr and "Traceback" not in done.stderr
    assert not any(tmp_path.iterdir())


def test_a_task_rebased_onto_a_node_cache_points_only_there(tmp_path: Path) -> None:
    task = load_task(REPO / "examples" / "quickstart" / "lab-units-to-si")
    dest = tmp_path / "cache" / "task-x"
    unpack_tree(pack_tree(task.root), dest)
    moved = rebase(task, {task.root: dest})
    assert moved.root == dest and moved.content_hash == task.content_hash
    assert moved.verifier is not None and moved.verifier.dir == dest / "verifier"
    assert all(s.root.is_relative_to(dest) for s in moved.skills) and moved.skills
    assert [s.package_hash for s in moved.skills] == [s.package_hash for s in task.skills]
    assert load_task(dest).content_hash == task.content_hash  # the shipped files are the task's files
    assert str(task.root) not in moved.model_dump_json()


def test_shipping_keeps_symlinks_as_links(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "data").mkdir(parents=True)
    (src / "data" / "a.txt").write_text("a")
    (src / "link").symlink_to("data")
    out = tmp_path / "out"
    unpack_tree(pack_tree(src), out)
    assert (out / "link").is_symlink() and (out / "link" / "a.txt").read_text() == "a"
