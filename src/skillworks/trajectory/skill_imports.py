"""A skill's scripts used as a library: Python code that puts a skill directory on the module path
(`sys.path.append(...)`, `sys.path.insert(0, ...)`, or `PYTHONPATH=...` before the command) and then imports a
module that is one of the skill's scripts (`from tool import fill`, `import tool`).

The code is read where the agent wrote it: a shell command (`python3 -c`, a heredoc) or a file the agent wrote
and then ran. Only imports of the skill's own script files count, never a module that merely shares a name
with a skill.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

_SYS_PATH = re.compile(
    r"sys\.path\.(?:append|insert)\(\s*(?:-?\d+\s*,\s*)?[rRuU]?\\?(?P<q>['\"])(?P<dir>[^'\"\\]+)\\?(?P=q)"
)
_PYTHONPATH = re.compile(r"\bPYTHONPATH=(?P<q>['\"]?)(?P<dirs>[^\s'\"]+)(?P=q)")
_FROM = re.compile(r"(?:^|[\n;'\"])[ \t]*from[ \t]+(?P<mod>[A-Za-z_][\w.]*)[ \t]+import\b")
_IMPORT = re.compile(
    r"(?:^|[\n;'\"])[ \t]*import[ \t]+(?P<mods>[A-Za-z_][\w.]*(?:[ \t]+as[ \t]+\w+)?"
    r"(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*(?:[ \t]+as[ \t]+\w+)?)*)"
)

# (directory) -> (skill name, path of the directory inside the skill, "" for its root), or None
Locate = Callable[[str], "tuple[str, str] | None"]
# (skill name, path inside the skill) -> whether that file is one of the skill's scripts
IsScript = Callable[[str, str], bool]


def imported_scripts(code: str, locate: Locate, is_script: IsScript) -> list[str]:
    """`<skill>/<path>` of every skill script that `code` imports after putting its directory on the path."""
    dirs = [m.group("dir") for m in _SYS_PATH.finditer(code)]
    for m in _PYTHONPATH.finditer(code):
        dirs += [d for d in m.group("dirs").split(":") if d]
    places = [p for p in (locate(d.rstrip("/")) for d in dirs) if p is not None]
    if not places:
        return []
    modules = [m.group("mod") for m in _FROM.finditer(code)]
    for m in _IMPORT.finditer(code):
        modules += [part.split()[0] for part in m.group("mods").split(",")]
    found: list[str] = []
    for module in modules:
        rel_module = module.replace(".", "/")
        for skill, inside in places:
            for candidate in (f"{rel_module}.py", f"{rel_module}/__init__.py"):
                rel = posixpath.normpath(posixpath.join(inside, candidate)) if inside else candidate
                if is_script(skill, rel):
                    found.append(f"{skill}/{rel}")
                    break
    return list(dict.fromkeys(found))
