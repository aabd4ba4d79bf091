"""The image phase's plan (`experiment/prebuild.py`): the distinct images a session's trials need, one per
content hash (a task's environment, stripped of its baked-in skills or not), only for a container run with
a registry. Real task directories (copies of the container example); nothing is built here."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from skillworks.experiment import AgentConfig, ExperimentSpec, image_jobs, plan_trials, read_prebuild
from skillworks.experiment.prebuild import PrebuiltImage, summary_line, write_prebuild
from skillworks.tasks.loader import load_task
from skillworks.tasks.model import Task

EXAMPLE = Path(__file__).parents[3] / "examples" / "container" / "csv-column-total"


def _tasks(root: Path, tokens: dict[str, str]) -> list[Task]:
    tasks = []
    for name, token in tokens.items():
        shutil.copytree(EXAMPLE, root / name)
        (root / name / "environment" / "unique.txt").write_text(token)
        tasks.append(load_task(root / name))
    return tasks


def _spec(env: str = "container", **env_options: object) -> ExperimentSpec:
    return ExperimentSpec(
        run_id="r",
        created_at=datetime.now(UTC),
        skillworks_version="0",
        tasks=[],
        conditions=["none"],
        agents=[AgentConfig(name="oracle")],
        trials=1,
        seed=0,
        concurrency=1,
        env=env,
        env_options=dict(env_options),
    )


def test_tasks_with_one_environment_share_one_image_and_both_conditions_of_a_pair_share_it(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path, {"a": "same", "b": "same", "c": "other"})
    spec = _spec(image_registry="localhost:5000")
    plan = plan_trials(tasks, ["none"], spec.agents, 3, 0)
    jobs = image_jobs(plan, spec)
    assert sorted(j.task_ids for j in jobs) == [("a", "b"), ("c",)]
    assert len({j.tag for j in jobs}) == 2 and all(j.tag.startswith("skillworks/env:") for j in jobs)
    # both conditions of a pair run on the image without its baked-in skills (curated stages them itself)
    both = image_jobs(plan_trials(tasks, ["none", "curated"], spec.agents, 1, 0), spec)
    assert [(j.tag, j.strip_skills) for j in both] == [(j.tag, True) for j in jobs]


def test_no_image_phase_without_a_registry_off_the_container_backend_or_when_turned_off(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path, {"a": "x"})
    plan = plan_trials(tasks, ["none"], [AgentConfig(name="oracle")], 1, 0)
    assert image_jobs(plan, _spec()) == []
    assert image_jobs(plan, _spec("local", image_registry="localhost:5000")) == []
    assert image_jobs(plan, _spec(image_registry="localhost:5000"), enabled=False) == []
    assert image_jobs([], _spec(image_registry="localhost:5000")) == []


def test_the_record_reads_back_and_says_itself_in_one_line(tmp_path: Path) -> None:
    image = PrebuiltImage(
        tag="skillworks/env:0123456789abcdef",
        task_id="a",
        task_ids=["a", "b"],
        strip_skills=True,
        source="built",
        seconds=12.5,
        pushed=True,
        host="h",
    )
    write_prebuild(tmp_path, [image], datetime.now(UTC), 12.6, "localhost:5000")
    assert read_prebuild(tmp_path) == [image]
    assert summary_line([image], 12.6, "localhost:5000") == (
        "prebuilt 1 image(s) for the trials in 12.6s (1 built; 1 pushed to localhost:5000)"
    )
    (tmp_path / "prebuild.json").write_text("{not json")
    assert read_prebuild(tmp_path) == []  # unreadable: no record, not a crash
    assert read_prebuild(tmp_path / "nowhere") == []
