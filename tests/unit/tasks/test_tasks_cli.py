"""`skillworks tasks check`: exit codes and output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillworks.cli.main import app

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"
runner = CliRunner()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillworks.cli.main", *args], capture_output=True, text=True, timeout=60
    )


def test_check_valid_tree_exits_0() -> None:
    result = runner.invoke(app, ["tasks", "check", str(FIXTURES)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "md-csv-revenue" in result.output and "harbor-word-count" in result.output
    assert "4 task(s), 0 with errors" in result.output
    assert "oracle reward" not in result.output


def test_check_with_error_exits_1(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "md-legacy-dirs", tmp_path / "broken")
    shutil.rmtree(tmp_path / "broken" / "tests")
    shutil.copytree(FIXTURES / "harbor-word-count", tmp_path / "fine")
    result = runner.invoke(app, ["tasks", "check", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    rows = {Path(r["task"]).name: r for r in json.loads(result.output)}
    # the sound task has no error (the leakage audit may add info-level notes on its instruction)
    assert rows["fine"]["status"] in ("ok", "warning")
    assert all(i["severity"] in ("warning", "info") for i in rows["fine"]["issues"])
    assert rows["broken"]["status"] == "error"
    assert rows["broken"]["issues"][0]["code"] == "missing-verifier"
    assert rows["broken"]["issues"][0]["message"] == "missing verifier: no verifier/ or tests/ directory with test.sh"


def test_bad_path_exits_2_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    proc = _cli("tasks", "check", str(missing))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {missing}: no such file or directory"


def test_bad_env_exits_2() -> None:
    proc = _cli("tasks", "check", str(FIXTURES / "md-csv-revenue"), "--env", "vm")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --env must be one of local, container, not 'vm'"


def test_oracle_column_rendering() -> None:
    from dataclasses import dataclass

    from skillworks.cli.tasks_cmd import _oracle_cell, _Row
    from skillworks.tasks import load_task

    @dataclass
    class Check:  # the shape of experiment.oracle_check.OracleCheck (data only)
        task_id: str
        reward: float | None
        ok: bool
        message: str
        trial_dir: Path | None = None

    path = FIXTURES / "md-csv-revenue"
    row = _Row(path=path, fmt="task.md", issues=[], task=load_task(path))
    row.oracle = Check("md-csv-revenue", 1.0, True, "")
    assert _oracle_cell(row) == "[green]1[/]" and row.status == "ok"
    row.oracle = Check("md-csv-revenue", 0.0, False, "reward 0 < 1")
    assert _oracle_cell(row) == "[red]0[/] reward 0 < 1" and row.status == "error"
    row.oracle, row.oracle_error = None, "no oracle to run"
    assert _oracle_cell(row) == "[red]no oracle to run[/]" and row.has_error


def test_check_table_fits_80_columns_with_names_whole_and_format_json() -> None:
    result = runner.invoke(app, ["tasks", "check", str(FIXTURES)], env={"COLUMNS": "80"})
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert any("md-csv-revenue" in line for line in lines) and any("harbor-word-count" in line for line in lines)
    as_json = runner.invoke(app, ["tasks", "check", str(FIXTURES), "--format", "json"])
    assert as_json.exit_code == 0 and len(json.loads(as_json.output)) == 4
    bad = runner.invoke(app, ["tasks", "check", str(FIXTURES), "--format", "yaml"])
    assert bad.exit_code != 0 and "--format must be table or json" in str(bad.exception or bad.output)


@pytest.mark.parametrize(
    ("workdir", "problem"),
    [
        ("app/../../etc", "absolute"),
        ("/app/../../etc", "normalised"),
        ("/logs/verifier", "reserved"),
        ("/tests", "reserved"),
        ("/solution/x", "reserved"),
        ("/", "must not be /"),
    ],
)
def test_a_bad_workdir_is_a_task_error_naming_the_file(tmp_path: Path, workdir: str, problem: str) -> None:
    """Issue 30: `workdir: app/../../etc` or `/logs/verifier` passed `tasks check`, then broke every trial."""
    task = tmp_path / "bad"
    shutil.copytree(FIXTURES / "md-csv-revenue", task)
    md = task / "task.md"
    md.write_text(
        md.read_text().replace("  network_mode: no-network\n", f'  network_mode: no-network\n  workdir: "{workdir}"\n')
    )
    shutil.copytree(FIXTURES / "harbor-word-count", tmp_path / "fine")
    result = runner.invoke(app, ["tasks", "check", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    rows = {Path(r["task"]).name: r for r in json.loads(result.output)}
    messages = " ".join(str(p) for p in rows["bad"]["problems"]) if "problems" in rows["bad"] else str(rows["bad"])
    assert "workdir" in messages and problem in messages
    assert "task.md" in messages
    assert not [p for p in rows["fine"].get("problems", []) if "error" in str(p).lower() and "workdir" in str(p)]


def test_a_normal_workdir_still_loads(tmp_path: Path) -> None:
    task = tmp_path / "ok"
    shutil.copytree(FIXTURES / "md-csv-revenue", task)
    md = task / "task.md"
    md.write_text(
        md.read_text().replace("  network_mode: no-network\n", "  network_mode: no-network\n  workdir: /srv/app/\n")
    )
    result = runner.invoke(app, ["tasks", "check", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output


def test_links_to_a_sibling_task_inside_the_given_dataset_root_are_allowed(tmp_path: Path) -> None:
    """Issue 30: BenchFlow's examples link `environment/`, `oracle/`, `verifier/` to a sibling task."""
    data = tmp_path / "dataset"
    shutil.copytree(FIXTURES / "md-csv-revenue", data / "base")
    linked = data / "linked"
    linked.mkdir()
    md = (data / "base" / "task.md").read_text().replace("md-csv-revenue", "md-csv-linked")
    (linked / "task.md").write_text(md)
    for sub in ("environment", "tests", "oracle", "verifier", "solution"):
        if (data / "base" / sub).exists():
            (linked / sub).symlink_to(Path("..") / "base" / sub)
    outside = tmp_path / "elsewhere"
    shutil.copytree(FIXTURES / "md-csv-revenue", outside)
    escaping = data / "escaping"
    shutil.copytree(FIXTURES / "md-csv-revenue", escaping, ignore=shutil.ignore_patterns("environment"))
    (escaping / "task.md").write_text(md.replace("md-csv-linked", "md-csv-escaping"))
    (escaping / "environment").symlink_to(outside / "environment")
    result = runner.invoke(app, ["tasks", "check", str(data), "--json"])
    assert result.exit_code == 1, result.output
    rows = {Path(r["task"]).name: r for r in json.loads(result.output)}
    assert "outside the dataset root" in json.dumps(rows["escaping"])
    assert "outside" not in json.dumps(rows["linked"]) and "outside" not in json.dumps(rows["base"])
    # given alone, the linked task's dataset root is its own dir: the sibling link is refused
    alone = runner.invoke(app, ["tasks", "check", str(linked), "--json"])
    assert alone.exit_code != 0
    assert "outside the task directory" in alone.output + str(alone.exception)


@pytest.mark.parametrize("fixture", ["md-csv-revenue", "harbor-word-count"])
def test_a_2gb_sparse_instruction_is_refused_unread(tmp_path: Path, fixture: str) -> None:
    """Issue 30: a 2 GB sparse instruction was read densely (6 GB RSS) and `tasks check` hung."""
    import resource

    task = tmp_path / "big"
    shutil.copytree(FIXTURES / fixture, task)
    name = "task.md" if fixture.startswith("md-") else "instruction.md"
    with (task / name).open("r+b") as f:
        f.truncate(2 << 30)  # sparse: 2 GB of size, no blocks
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = runner.invoke(app, ["tasks", "check", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    [row] = json.loads(result.output)
    assert f"{name} is {2 << 30} bytes, over the" in json.dumps(row)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 * 1024  # KiB: never read


def test_a_2gb_sparse_skill_asset_is_refused_unread(tmp_path: Path) -> None:
    """Issue 30: a 2 GB sparse skill asset was read and copied densely before staging."""
    import resource

    task = tmp_path / "big"
    shutil.copytree(FIXTURES / "md-csv-revenue", task)
    skill = task / "environment" / "skills" / "csv-helper"
    (skill / "assets").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: csv-helper\ndescription: Sums CSV columns.\n---\n\nUse it.\n")
    with (skill / "assets" / "table.bin").open("wb") as f:
        f.truncate(2 << 30)  # sparse: 2 GB of size, no blocks
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = runner.invoke(app, ["tasks", "check", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    assert f"assets/table.bin is {2 << 30} bytes; a skill file may hold at most" in result.output
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 * 1024  # KiB: never read
