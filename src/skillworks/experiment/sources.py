"""Moved to `skillworks.provision.sources` (kept so that existing imports keep working)."""

from skillworks.provision.sources import SkillProvision, SkillSource, SourceRequest, provide_skills

__all__ = ["SkillProvision", "SkillSource", "SourceRequest", "provide_skills"]
