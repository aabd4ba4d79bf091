"""examples/ci/skills.yml (the GitHub Actions example): valid YAML whose `skillworks` commands exist with
the options they use, that uploads the check's SARIF file and posts the report's PR comment."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from skillworks.cli.main import command

WORKFLOW = Path(__file__).resolve().parents[3] / "examples" / "ci" / "skills.yml"


def _skillworks_calls(script: str) -> list[list[str]]:
    script = re.sub(r"\$\{\{[^}]*\}\}", "X", script).replace("\\\n", " ")
    calls = []
    for line in script.splitlines():
        line = line.split(">")[0].strip()
        if line.startswith("skillworks "):
            calls.append(shlex.split(line))
    return calls


def _resolve(words: list[str]) -> tuple[Any, list[str]]:
    cmd = command()
    rest = words[1:]
    while getattr(cmd, "commands", None) and rest and rest[0] in cmd.commands:
        cmd, rest = cmd.commands[rest[0]], rest[1:]
    assert getattr(cmd, "commands", None) is None, f"not a command: {' '.join(words)}"
    return cmd, rest


def test_the_ci_example_uses_existing_commands_and_options() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    steps = [s for job in flow["jobs"].values() for s in job["steps"]]
    calls = [c for s in steps if "run" in s for c in _skillworks_calls(s["run"])]
    assert {c[1] for c in calls} >= {"check", "tasks", "run", "report"}
    for words in calls:
        cmd, rest = _resolve(words)
        options = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [w for w in rest if w.startswith("-") and w not in options]
        assert not unknown, f"{' '.join(words)}: unknown option(s) {unknown}"
    sarif = next(c for c in calls if c[1] == "check" and "sarif" in c)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == sarif[sarif.index("--output") + 1]
    assert any(c[1] == "report" and c[c.index("--format") + 1] == "pr-comment" for c in calls if "--format" in c)
    assert flow["jobs"]["check"]["permissions"]["security-events"] == "write"
    assert flow["jobs"]["paired"]["permissions"]["pull-requests"] == "write"
