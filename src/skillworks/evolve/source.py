"""The `evolved` condition's skill source: the skills of a library version.

During `skillworks evolve` the family driver assigns each task the library version S_{t-1} it must be
solved with. In an ordinary `skillworks run --skills-from DIR --conditions none,curated,evolved` the
source serves the saved version DIR (e.g. ``runs/<id>/families/<fam>/library/v<k>``) to every task, so an
evolved library is measured against `none` and `curated` on held-out tasks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from skillworks.errors import UserError
from skillworks.evolve.apply import library_hash, library_skills
from skillworks.skills.package import load_skill

if TYPE_CHECKING:  # skillworks.experiment imports this module (its conditions registry)
    from skillworks.provision.sources import SkillProvision, SourceRequest

SKILLS_FROM_KEY = "skills_from"


class LibrarySource:
    def __init__(self) -> None:
        self._assigned: dict[tuple[Path, str], Path] = {}

    def assign(self, run_dir: Path, task_id: str, library: Path) -> None:
        """The library version `task_id` is solved with in the run at `run_dir` (set by the family driver)."""
        self._assigned[(run_dir.resolve(), task_id)] = library

    async def provide(self, request: SourceRequest) -> SkillProvision:
        from skillworks.provision.sources import SkillProvision

        library = self._assigned.get((request.tenv.run_dir.resolve(), request.spec.task.id))
        if library is None:
            given = request.tenv.experiment_extra.get(SKILLS_FROM_KEY)
            if given is None:
                raise UserError(
                    "condition 'evolved' needs a skill library: run `skillworks evolve`, or pass --skills-from DIR"
                )
            library = Path(given)
        if not library.is_dir():
            raise UserError("skill library not found", library)
        skills = [load_skill(p) for p in library_skills(library)]
        return SkillProvision(
            skills=skills,
            record={
                "library": str(library),
                "library_hash": library_hash(library),
                "skills": [f"{s.name}@{s.short_hash}" for s in skills],
            },
        )


LIBRARY_SOURCE = LibrarySource()
