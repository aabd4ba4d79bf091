"""`skillworks run --submit`: the job's command line as typed (local inputs uploaded, cluster paths kept), and the
one-line refusals of what cannot be submitted. The job itself runs in tests/integration/experiment/test_ray_submit.py."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillworks.cli.main import app, command
from skillworks.cli.run_submit import job_command
from skillworks.experiment._ray_job_entry import job_argv

REPO = Path(__file__).resolve().parents[3]
QUICKSTART = REPO / "examples" / "quickstart"


def _ctx(args: list[str]):  # type: ignore[no-untyped-def]
    return command().commands["run"].make_context("run", args)


def test_the_job_runs_the_typed_command_with_uploaded_inputs_and_the_cluster_joined(tmp_path: Path) -> None:
    skills = tmp_path / "lib"
    skills.mkdir()
    ctx = _ctx(
        [
            str(QUICKSTART),
            "--agent",
            "builtin",
            "--conditions",
            "none,evolved",
            "--skills-from",
            str(skills),
            "--no-record-bodies",
            "--keep-workspace",
            "--out",
            "/shared/runs",
            "--executor",
            "ray",
            "--ray-address",
            "http://head:8265",
            "--submit",
            "--max-cost",
            "5",
        ]
    )
    argv, inputs = job_command(ctx, "r1")
    assert inputs == {"tasks/0/quickstart": QUICKSTART, "skills-from/0/lib": skills}
    assert argv[0] == "run" and argv[-1] == {"input": "tasks/0/quickstart"}  # the task: an uploaded input
    flat = [a if isinstance(a, str) else json.dumps(a) for a in argv]
    assert "--submit" not in flat and "http://head:8265" not in flat  # the job joins the cluster it runs on
    pairs = {flat[i]: flat[i + 1] for i in range(len(flat) - 1) if flat[i].startswith("--")}
    assert pairs["--ray-address"] == "auto" and pairs["--run-id"] == "r1" and pairs["--out"] == "/shared/runs"
    assert pairs["--skills-from"] == json.dumps({"input": "skills-from/0/lib"})
    assert pairs["--max-cost"] == "5.0" and pairs["--executor"] == "ray"
    assert "--no-record-bodies" in flat and "--keep-workspace" in flat
    dest = Path("/shared/runs/.submitted/r1")
    run_args = job_argv({"argv": argv}, dest)
    assert run_args[-1] == str(dest / "tasks/0/quickstart")


def test_a_resumed_submission_keeps_its_run_dir_and_uploads_nothing() -> None:
    ctx = _ctx(["--resume", "/shared/runs/r1", "--executor", "ray", "--ray-address", "http://h:8265", "--submit"])
    argv, inputs = job_command(ctx, "r1")
    assert inputs == {}
    assert argv == ["run", "--resume", "/shared/runs/r1", "--executor", "ray", "--ray-address", "auto"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--submit", "--out", "/x"], "--submit runs the driver as a Ray Job: give --executor ray --ray-address"),
        (["--executor", "ray", "--ray-address", "http://h:8265", "--submit"], "--submit: give --out, an absolute"),
        (
            ["--executor", "ray", "--ray-address", "http://h:8265", "--submit", "--out", "runs"],
            "--submit: --out runs must be an absolute path on the cluster's shared storage",
        ),
        (
            ["--executor", "ray", "--ray-address", "http://h:8265", "--submit", "--out", "/x", "--dry-run"],
            "--submit with --dry-run",
        ),
    ],
)
def test_what_cannot_be_submitted_is_a_one_line_error(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["run", str(QUICKSTART), *args])
    assert result.exit_code != 0
    assert message in str(result.exception) or message in result.output


def test_a_missing_task_and_an_unreachable_job_server_are_one_line_errors(tmp_path: Path) -> None:
    common = ["--executor", "ray", "--submit", "--out", str(tmp_path)]
    missing = CliRunner().invoke(app, ["run", str(tmp_path / "nope"), *common, "--ray-address", "http://h:1"])
    assert "--submit: task: no such path" in str(missing.exception) and "nope" in str(missing.exception)
    address = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    down = CliRunner().invoke(app, ["run", str(QUICKSTART), *common, "--ray-address", address])
    assert f"--submit: the Ray job server at {address} did not take the job" in str(down.exception)
    assert not list(tmp_path.iterdir())  # nothing written


def test_the_job_refuses_to_overwrite_the_kept_inputs_of_its_run_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second job with a run id already submitted (same --out): exit 2, the first run's inputs untouched."""
    from skillworks.experiment._ray_job_entry import main

    kept = tmp_path / "out" / ".submitted" / "r1"
    (kept / "tasks").mkdir(parents=True)
    (kept / "tasks" / "first.txt").write_text("first")
    work = tmp_path / "work"
    (work / "inputs" / "tasks").mkdir(parents=True)
    (work / "submit.json").write_text(json.dumps({"argv": ["run", {"input": "tasks"}], "inputs_dest": str(kept)}))
    monkeypatch.chdir(work)
    assert main(["submit.json"]) == 2
    assert "the inputs of this run id are kept there already" in capsys.readouterr().err
    assert [p.name for p in (kept / "tasks").iterdir()] == ["first.txt"]
