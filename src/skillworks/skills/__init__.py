"""Skill packages: load, validate, hash, stage into a sandbox, audit what the agent sees."""

from skillworks.skills.package import (
    SkillAsset,
    SkillPackage,
    discover_skills,
    hash_directory,
    load_skill,
    name_problem,
    split_frontmatter,
)
from skillworks.skills.staging import (
    HarnessSkill,
    StagedSkill,
    StagingRecord,
    audit_skills,
    copy_skills,
    stage_skills,
)

__all__ = [
    "HarnessSkill",
    "SkillAsset",
    "SkillPackage",
    "StagedSkill",
    "StagingRecord",
    "audit_skills",
    "copy_skills",
    "discover_skills",
    "hash_directory",
    "load_skill",
    "name_problem",
    "split_frontmatter",
    "stage_skills",
]
