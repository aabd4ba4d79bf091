"""The builtin agent's system prompt: tools, workspace, and the visible skills by name + description only
(progressive disclosure: a skill's body is loaded on demand through the `skill` tool)."""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

from skillworks.skills.package import SkillPackage

_BASE = """You are an autonomous software agent working in a Linux sandbox. Your working directory is {workdir}.
Use the tools to inspect files, run commands and write outputs. There is no human to answer questions:
decide, act, and verify your work. When the task is complete, reply with a short summary and no tool call."""

_SKILLS = """
You have skills: folders of expert instructions, scripts and references. Only their names and descriptions
are listed here. When a skill is relevant to the task, call the `skill` tool with its name to load its
instructions before you start, then follow them; its bundled files live next to its SKILL.md.

<available_skills>
{skills}
</available_skills>"""


_COMPILED = """
Compiled skills are available as tools named run_<skill>. Call one with no arguments to see what it offers
(its operators and their inputs), then call it with an operator and inputs to run one in your workspace."""


def system_prompt(
    workdir: str, skills: Sequence[SkillPackage], skills_dir: str | None, compiled_skills: bool = False
) -> str:
    text = _BASE.format(workdir=workdir)
    if compiled_skills:
        text += _COMPILED
    if skills and skills_dir:
        entries = "\n".join(
            f"<skill><name>{escape(s.name)}</name><description>{escape(s.description)}</description>"
            f"<location>{escape(skills_dir)}/{escape(s.name)}/SKILL.md</location></skill>"
            for s in skills
        )
        text += _SKILLS.format(skills=entries)
    return text
