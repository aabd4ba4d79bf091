"""Input files of evals.json cases (``--case-files``), and the evaluation copy of the target skill.

- ``own``: each case gets a fresh workspace holding only its own ``files`` (at their paths relative to
  the skill root);
- ``all``: every case's workspace holds the files of all cases of the skill (one shared seed directory;
  each trial still gets its own fresh copy of it).

(Which *skills* a trial sees — the ACES isolation and group workspaces — is `skillworks.evaluate.siblings`.)

The target skill is staged from a copy without its evaluation assets (``evals/`` and ``EVAL.md``), so the
agent never sees the cases' ground truth or expected behaviour.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from skillworks.skills.package import SkillPackage, load_skill
from skillworks.tasks.model import Task

CaseFiles = Literal["own", "all"]
ALL_CASES_DIR = "_all-cases"
EVAL_ASSETS = ("evals", "EVAL.md")


def _copy_files(skill_root: Path, files: Sequence[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for rel in files:
        src = skill_root / rel
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, symlinks=True, dirs_exist_ok=True)  # links are copied, never followed
        else:
            shutil.copy2(src, target)


def prepare_workspaces(tasks: Sequence[Task], dest: Path, case_files: CaseFiles) -> list[Task]:
    """Materialise each evals.json case's input files under `dest` and point its environment there.
    Tasks that are not evals.json cases are returned unchanged."""
    out: list[Task] = []
    group_files: dict[Path, list[str]] = {}
    for task in tasks:
        if task.evaluation is not None:
            group_files.setdefault(task.root, []).extend(task.evaluation.files)
    for task in tasks:
        ev = task.evaluation
        if ev is None:
            out.append(task)
            continue
        if case_files == "all":
            seed = dest / ALL_CASES_DIR / task.root.name
            if not seed.exists():
                _copy_files(task.root, sorted(set(group_files[task.root])), seed)
        else:
            seed = dest / task.id
            if seed.exists():
                shutil.rmtree(seed)
            _copy_files(task.root, ev.files, seed)
        environment = task.environment.model_copy(update={"dir": seed.resolve()})
        out.append(task.model_copy(update={"environment": environment}))
    return out


def evaluation_copy(skill: SkillPackage, dest: Path) -> SkillPackage:
    """A copy of `skill` without its evaluation assets, loaded from ``dest/<name>``."""
    target = dest / skill.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(
        skill.root,
        target,
        symlinks=False,
        ignore=lambda d, names: (
            [n for n in names if Path(d) == skill.root and n in EVAL_ASSETS]
            + [n for n in names if n in (".git", "__pycache__")]
        ),
    )
    return load_skill(target)
