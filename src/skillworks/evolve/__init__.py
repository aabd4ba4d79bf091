"""Lifelong skill evolution over ordered task families (SkillFlow protocol): families, patches, safe apply,
the `evolved` condition's library source, the family driver and its report."""

from typing import Any

from skillworks.evolve.apply import ApplyResult, Limits, apply_patch, library_hash, library_skills
from skillworks.evolve.family import Family, load_family
from skillworks.evolve.patch import FileUpsert, MalformedPatch, Patch, parse_patch
from skillworks.evolve.source import LIBRARY_SOURCE, LibrarySource

# the driver and the report import the experiment package, which imports this package (its conditions):
# they are resolved on first use
_LAZY = {
    "EvolveOptions": "skillworks.evolve.driver",
    "run_evolve": "skillworks.evolve.driver",
    "build_evolve_summary": "skillworks.evolve.report",
    "write_evolve_report": "skillworks.evolve.report",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "LIBRARY_SOURCE",
    "ApplyResult",
    "EvolveOptions",
    "Family",
    "FileUpsert",
    "LibrarySource",
    "Limits",
    "MalformedPatch",
    "Patch",
    "apply_patch",
    "build_evolve_summary",
    "library_hash",
    "library_skills",
    "load_family",
    "parse_patch",
    "run_evolve",
    "write_evolve_report",
]
