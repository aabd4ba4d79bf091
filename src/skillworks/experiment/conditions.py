"""Moved to `skillworks.provision.conditions` (kept so that existing imports keep working)."""

from skillworks.provision.conditions import Condition, SkillSet, condition_names, get_condition, register_condition

__all__ = ["Condition", "SkillSet", "condition_names", "get_condition", "register_condition"]
