"""Bad input that used to get through `skillworks run` / `check` (issue 10): each is one line naming the
problem, exit 2, and nothing written (no run directory) -- or, for files that cannot be read at all,
skipped with a finding instead of hanging."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillworks.experiment import RunStore

REPO = Path(__file__).resolve().parents[3]
LOAN = REPO / "examples" / "quickstart" / "loan-amortization"
SKILL = "loan-amortization-schedules"
SCRIPT = REPO / "examples" / "scripted" / "quickstart-builtin.yaml"

pytestmark = pytest.mark.bwrap


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """A private copy of a small real Harbor task with one bundled skill."""
    dst = tmp_path / "tasks" / "loan-amortization"
    shutil.copytree(LOAN, dst)
    return dst


def _one_line_error(proc: Any, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and len(err) < 600, err[:2000]
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


def test_run_id_that_is_not_a_plain_name(task: Path, tmp_path: Path, cli: Any) -> None:
    out = tmp_path / "nested" / "runs"
    for bad in ("../escaped", "a/b"):
        proc = cli("run", str(task), "--agent", "nop", "--out", str(out), "--run-id", bad)
        _one_line_error(proc, "--run-id", "not a plain directory name")
    assert not (tmp_path / "nested").exists()
    assert not (tmp_path / "escaped").exists()


def test_symlink_loop_in_a_skill_names_the_loop(task: Path, cli: Any, runs_dir: Path) -> None:
    scripts = task / "environment" / "skills" / SKILL / "scripts"
    os.symlink(".", scripts / "again")  # a directory link to its own parent: a copy following links never ends
    proc = cli("run", str(task), "--agent", "nop", "--conditions", "curated", "--out", str(runs_dir))
    _one_line_error(proc, "symlink loop: scripts/again -> .")
    assert not runs_dir.exists()
    (scripts / "again").unlink()
    os.symlink("self", scripts / "self")  # a link to itself (ELOOP)
    proc = cli("run", str(task), "--agent", "nop", "--conditions", "curated", "--out", str(runs_dir))
    _one_line_error(proc, "symlink loop: scripts/self -> self")


def test_named_pipe_in_a_skill_is_skipped_with_a_finding(task: Path, cli: Any, runs_dir: Path) -> None:
    skill = task / "environment" / "skills" / SKILL
    os.mkfifo(skill / "notes.md")  # nothing ever writes to it: reading it would block forever
    proc = cli("check", str(skill), "--format", "json", timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    findings = json.loads(proc.stdout)["skills"][0]["findings"]
    assert any(f["rule"] == "file-not-regular" and f["file"] == "notes.md" for f in findings), findings

    proc = cli("run", str(task), "--agent", "nop", "--conditions", "curated", "--out", str(runs_dir), "--run-id", "p")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (result,) = RunStore(runs_dir / "p").read_results()
    assert result.error is None, result.error
    record = json.loads((runs_dir / "p" / "trials" / result.trial_id / "skills.json").read_text())
    assert record["ok"] and record["skipped"] == [f"{SKILL}/notes.md"]


def test_unsupported_schema_version(task: Path, cli: Any, runs_dir: Path) -> None:
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('version = "1.0"', 'version = "9.9"'))
    proc = cli("run", str(task), "--agent", "nop", "--out", str(runs_dir))
    _one_line_error(proc, "task.toml", "'9.9' is not supported", "1.0", "1.3")
    assert not runs_dir.exists()


def test_huge_skill_md_is_refused(task: Path, cli: Any, runs_dir: Path) -> None:
    skill_md = task / "environment" / "skills" / SKILL / "SKILL.md"
    with skill_md.open("r+b") as fh:
        fh.truncate(50 * 2**20)  # 50 MiB (sparse: the frontmatter stays valid, the rest is NUL bytes)
    proc = cli("run", str(task), "--agent", "nop", "--out", str(runs_dir))
    _one_line_error(proc, "SKILL.md", "50.0 MiB", "limit is 1 MiB")
    assert not runs_dir.exists()


def test_missing_script_leaves_no_run_dir_so_the_fixed_command_works(task: Path, cli: Any, runs_dir: Path) -> None:
    args = ["run", str(task), "--agent", "builtin", "--conditions", "none", "--out", str(runs_dir), "--run-id", "r"]
    proc = cli(*args, "--model", f"scripted/{task / 'nope.yaml'}")
    _one_line_error(proc, "nope.yaml")
    assert not (runs_dir / "r").exists()
    # the same command with the script path fixed: no "run directory already exists"
    proc = cli(*args, "--model", f"scripted/{SCRIPT}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(RunStore(runs_dir / "r").read_results()) == 1


def test_resume_refuses_flags_it_would_ignore(task: Path, cli: Any, runs_dir: Path) -> None:
    proc = cli("run", str(task), "--agent", "nop", "--conditions", "none", "--out", str(runs_dir), "--run-id", "r")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for flag in (["--trials", "3"], ["--conditions", "curated"], ["--seed", "7"], ["--env", "container"]):
        proc = cli("run", "--resume", str(runs_dir / "r"), *flag)
        _one_line_error(proc, f"drop {flag[0]}")
    proc = cli("run", "--resume", str(runs_dir / "r"), "--concurrency", "1")  # may change: how many at once
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert RunStore(runs_dir / "r").read_spec().trials == 1
