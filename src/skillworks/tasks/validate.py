"""Structural validation of task directories: every problem `skillworks tasks check` reports."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skillworks.errors import TaskError
from skillworks.tasks.harbor import INSTRUCTION_MD
from skillworks.tasks.layout import (
    HARBOR_ORACLE_DIRS,
    HARBOR_VERIFIER_DIRS,
    ORACLE_ENTRYPOINT,
    TASK_MD_ORACLE_DIRS,
    TASK_MD_VERIFIER_DIRS,
    VERIFIER_ENTRYPOINT,
    DirChoice,
    select_dir,
)
from skillworks.tasks.loader import detect_format, load_task
from skillworks.tasks.model import Task

Severity = Literal["error", "warning", "info"]

_CODES = (
    ("unknown top-level key", "unknown-key"),
    ("unknown key", "unknown-key"),
    ("missing instruction", "missing-instruction"),
    ("invalid YAML", "malformed-yaml"),
    ("has no YAML frontmatter", "malformed-yaml"),
    ("frontmatter", "malformed-yaml"),
    ("invalid TOML", "malformed-toml"),
    ("bundled skill", "invalid-skill"),
    ("missing verifier", "missing-verifier"),
    ("verifier directory", "missing-verifier-entrypoint"),
    ("oracle directory", "missing-oracle-entrypoint"),
    ("both ", "conflicting-keys"),
    ("allowlist", "network-policy"),
    ("allowed_hosts", "network-policy"),
    ("network_mode", "network-policy"),
    ("allow_internet", "network-policy"),
    ("timeout_sec", "bad-timeout"),
    ("unknown task format", "unknown-format"),
)


class TaskIssue(BaseModel):
    """One problem found in a task directory."""

    model_config = ConfigDict(frozen=True)

    severity: Severity
    code: str
    message: str
    path: str | None = None

    def line(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}" if self.path else f"{self.severity}: {self.message}"


def _code_for(message: str) -> str:
    return next((code for needle, code in _CODES if needle in message), "invalid-task")


def _script_issues(root: Path, choices: tuple[DirChoice, ...], entrypoint: str, role: str) -> list[TaskIssue]:
    picked = select_dir(root, choices)
    if picked is None:
        names = " or ".join(f"{c.name}/" for c in choices)
        if role == "verifier":
            return [
                TaskIssue(
                    severity="error",
                    code="missing-verifier",
                    message=f"missing verifier: no {names} directory with {entrypoint}",
                    path=str(root),
                )
            ]
        return [
            TaskIssue(
                severity="warning",
                code="missing-oracle",
                message=f"no oracle ({names} with {entrypoint}): solvability cannot be checked",
                path=str(root),
            )
        ]
    directory, _ = picked
    script = directory / entrypoint
    if not script.is_file():
        return []  # reported by the loader with the precise message
    if not os.access(script, os.X_OK):
        return [
            TaskIssue(
                severity="warning",
                code="not-executable",
                message=f"{directory.name}/{entrypoint} is not executable (chmod +x); it is run with bash",
                path=str(script),
            )
        ]
    return []


def _loaded_issues(task: Task) -> list[TaskIssue]:
    issues: list[TaskIssue] = []
    config_file = task.root / ("task.md" if task.source_format == "task.md" else "task.toml")
    for key in task.extra.get("unknown_keys", []):
        issues.append(
            TaskIssue(
                severity="warning",
                code="unknown-key",
                message=f"unknown key {key!r} is ignored (as Harbor does)",
                path=str(config_file),
            )
        )
    if task.extra.get("network_defaulted"):
        issues.append(
            TaskIssue(
                severity="warning",
                code="network-undeclared",
                message="no network_mode / allow_internet declared; the standard's default is public internet",
                path=str(config_file),
            )
        )
    if task.extra.get("image_skill_paths"):
        issues.append(
            TaskIssue(
                severity="warning",
                code="skills-baked-into-image",
                message="the Dockerfile copies environment/skills into the image ("
                + ", ".join(task.extra["image_skill_paths"])
                + "); agents see them in every condition, including no-skills",
                path=str(task.environment.dockerfile),
            )
        )
    if task.verifier is not None and task.verifier.timeout_sec > 3 * 3600:
        issues.append(
            TaskIssue(
                severity="warning",
                code="bad-timeout",
                message=f"verifier timeout_sec {task.verifier.timeout_sec:g} is over 3 hours",
                path=str(config_file),
            )
        )
    if task.extra.get("docker_image") and task.environment.dockerfile is None:
        issues.append(
            TaskIssue(
                severity="warning",
                code="prebuilt-image",
                message=f"uses the prebuilt image {task.extra['docker_image']!r}; it is not built from this dir",
                path=str(config_file),
            )
        )
    return issues


_PY_FROM_CWD = r"\bpython[0-9.]*\s+(?:-[A-Za-z]*\s+)*(?:-m\b|-c\b|-(?:\s|$))"


def _verifier_import_issues(task: Task) -> list[TaskIssue]:
    """The verifier runs from its own directory, but a script that goes back to the workspace
    (``cd /app && python3 -m ...``) or puts it on PYTHONPATH / sys.path imports whatever the agent
    left there: a csv.py in the workspace then shadows the stdlib of the verifier."""
    verifier = task.verifier
    if verifier is None or not verifier.dir.is_dir():
        return []
    workdir = re.escape(task.environment.workdir.rstrip("/") or "/")
    into_workdir = re.compile(rf"\bcd\s+[\"']?{workdir}[\"']?(?:/|\s|;|&|$)")
    on_path = re.compile(
        rf"PYTHONPATH=[^\s;]*{workdir}(?:[:/\"'\s;]|$)|sys\.path\.(?:insert|append)\([^)]*[\"']{workdir}[/\"']"
    )
    issues: list[TaskIssue] = []
    for script in sorted(verifier.dir.rglob("*")):
        if not script.is_file() or script.suffix not in (".sh", ".py", "") or script.stat().st_size > 1_000_000:
            continue
        text = script.read_text(errors="replace")
        cd_at = next((m.start() for m in into_workdir.finditer(text)), None)
        runs_python_there = cd_at is not None and re.search(_PY_FROM_CWD, text[cd_at:], re.MULTILINE)
        if runs_python_there or on_path.search(text):
            issues.append(
                TaskIssue(
                    severity="warning",
                    code="verifier-imports-workspace",
                    message=f"the verifier imports python from the agent's workspace ({task.environment.workdir}): "
                    "a module the agent leaves there (e.g. csv.py) shadows the verifier's own; run it from /tests",
                    path=str(script),
                )
            )
    return issues


def validate_task(path: Path | str) -> list[TaskIssue]:
    """Every structural problem of one task directory; an empty list means the task is valid.
    Errors make a task unusable; warnings do not."""
    root = Path(path).resolve()
    if root.is_file():
        root = root.parent
    fmt = detect_format(root)
    issues: list[TaskIssue] = []
    if fmt is None:
        if root.is_dir() and (root / "task.toml").is_file() and not (root / INSTRUCTION_MD).exists():
            issues.append(
                TaskIssue(
                    severity="error",
                    code="missing-instruction",
                    message="missing instruction: instruction.md does not exist",
                    path=str(root),
                )
            )
            return issues
        return [
            TaskIssue(
                severity="error",
                code="unknown-format",
                message="unknown task format: expected task.md, or task.toml + instruction.md",
                path=str(root),
            )
        ]
    verifier_dirs, oracle_dirs = (
        (TASK_MD_VERIFIER_DIRS, TASK_MD_ORACLE_DIRS) if fmt == "task.md" else (HARBOR_VERIFIER_DIRS, HARBOR_ORACLE_DIRS)
    )
    issues.extend(_script_issues(root, verifier_dirs, VERIFIER_ENTRYPOINT, "verifier"))
    issues.extend(_script_issues(root, oracle_dirs, ORACLE_ENTRYPOINT, "oracle"))
    try:
        task = load_task(root)
    except TaskError as exc:
        seen = {(i.message, i.path) for i in issues}
        if (exc.message, exc.path) not in seen:
            issues.append(TaskIssue(severity="error", code=_code_for(exc.message), message=exc.message, path=exc.path))
    else:
        if task.extra.get("oracle_problem"):
            message = str(task.extra["oracle_problem"])
            issues.append(TaskIssue(severity="error", code=_code_for(message), message=message, path=str(root)))
        issues.extend(_loaded_issues(task))
        issues.extend(_verifier_import_issues(task))
    return sorted(issues, key=lambda i: (i.severity != "error", i.code))
