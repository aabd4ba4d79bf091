"""`skillworks check SKILL --harness NAME[,NAME…]|all`: ground truth, per installed harness CLI, of whether it
lists and loads a skill — not a prediction.

For each harness the skill is staged the way a user installs it (its harness skills dir in a fresh, isolated
home) and the real CLI is started offline against the gateway with the scripted provider, which plays one
load of the skill (the harness's skill tool, or for Codex a `cat` of its SKILL.md) and a final answer. This is a
one-query `skillworks trigger` run, so staging, the sandbox and skill-use detection are the run pipeline's own.
From it: listed (what the CLI reported showing the agent), loaded (a successful load), the description the CLI
showed where its log carries one (Codex's `<skills_instructions>`; Claude Code reports names only), trimmed or
not, and what the CLI answered when the load failed. When a harness drops a skill that static `check` passes,
the verdict names the rule that should have caught it.

Results are cached by skill package hash, harness and CLI version (``$XDG_CACHE_HOME/skillworks/harness-check``).
A skill that skillworks itself refuses to load cannot be staged by the pipeline and is reported as such.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillworks.errors import SkillError, UserError
from skillworks.skills.package import SkillPackage, load_skill

Status = Literal["loaded", "listed-not-loaded", "not-listed", "not-installed", "not-staged", "error"]
CACHE_SCHEMA = "skillworks.harness-check/1"

# the tool call that loads skill {name} in each harness (as the harness integration tests drive them)
_LOAD_CALLS: dict[str, tuple[str, dict[str, str]]] = {
    "claude-code": ("Skill", {"skill": "{name}"}),
    "codex": ("exec_command", {"cmd": "cat $HOME/.agents/skills/{name}/SKILL.md"}),
    "gemini-cli": ("activate_skill", {"name": "{name}"}),
    "opencode": ("skill", {"name": "{name}"}),
    "openhands": ("invoke_skill", {"name": "{name}"}),
}
# frontmatter keys a harness is known to act on, and the rule that should flag them (ground truth found by this
# probe: Claude Code 2.1.328 lists a skill with `disable-model-invocation: true` but refuses the model's load)
_KNOWN_CAUSES: dict[str, tuple[str, str]] = {
    "disable-model-invocation": (
        "model-invocation-disabled",
        "`disable-model-invocation: true` makes the harness refuse the model's load (only the user can run it)",
    ),
}


class HarnessVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    harness: str
    version: str | None = None
    status: Status
    listed: bool | None = None
    loaded: bool | None = None
    description_shown: str | None = Field(default=None, description="the description the CLI showed the model")
    trimmed: bool | None = Field(default=None, description="whether that description is shorter than the skill's")
    cli_said: str | None = Field(default=None, description="what the CLI answered to the load, when it failed")
    should_have_caught: str | None = Field(
        default=None, description="the check rule that should have flagged a skill this harness drops"
    )
    static_valid: bool | None = Field(default=None, description="static check found no blocking finding")
    cached: bool = False
    run_dir: str | None = None


def harness_names(spec: str) -> list[str]:
    from skillworks.agents.harness.specs import HARNESS_SPECS

    names = list(HARNESS_SPECS) if spec.strip() == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in HARNESS_SPECS]
    if unknown or not names:
        raise UserError(f"--harness: unknown harness {unknown[0] if unknown else spec!r} "
                        f"(allowed: {', '.join(HARNESS_SPECS)} or all)")  # fmt: skip
    return names


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skillworks" / "harness-check"


def _cache_key(package: SkillPackage, harness: str, version: str) -> str:
    return hashlib.sha256(f"{CACHE_SCHEMA}\0{package.package_hash}\0{harness}\0{version}".encode()).hexdigest()[:32]


def _script(harness: str, name: str) -> str:
    tool, args = _LOAD_CALLS[harness]
    arguments = {k: v.format(name=name) for k, v in args.items()}
    turns = [{"tool_calls": [{"name": tool, "arguments": arguments}]}, {"text": "Skill check done."}]
    return json.dumps({"default": turns})


def _shown_description(trial_dir: Path, name: str) -> str | None:
    """The description a harness showed for `name`, from a `- name: description (file: …)` listing in its logs."""
    pattern = re.compile(rf"- {re.escape(name)}: (.*?) \(file: ")
    for path in sorted((trial_dir / "agent").rglob("*.jsonl")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                decoded = json.dumps(json.loads(line), ensure_ascii=False)
            except ValueError:
                continue
            match = pattern.search(decoded.replace("\\n", "\n"))
            if match:
                return match.group(1)
    return None


def _failure_text(trial_dir: Path) -> str | None:
    """The first error result of the trial's trajectory (what the CLI answered to the failed load)."""
    try:
        traj = json.loads((trial_dir / "trajectory.json").read_text())
    except (OSError, ValueError):
        return None
    for step in traj.get("steps", []):
        for result in (step.get("observation") or {}).get("results") or []:
            if (result.get("extra") or {}).get("is_error"):
                content = result.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                return " ".join(text.split())[:400]
    return None


async def _static(package_root: Path) -> tuple[bool, list[str]]:
    from skillworks.check import check_skills_async

    report = await check_skills_async([package_root], lint=False)
    blocking = [f.rule_id for s in report.skills for f in s.blocking]
    return not blocking, blocking


# what a CLI answered, and the rule that should flag its cause (found on the public corpus: Claude Code 2.1.328 runs
# a body's !`command` when it loads the skill, and a failing command refuses the load)
_SAID_CAUSES: dict[str, tuple[str, str]] = {
    "Shell command failed for pattern": (
        "inline-shell-at-load",
        "Claude Code runs the body's !`command` on load; the command failed there, so the load was refused",
    ),
}


def _should_have_caught(package: SkillPackage, said: str | None) -> str:
    for marker, (rule, why) in _SAID_CAUSES.items():
        if said and marker in said:
            return f"{rule}: {why}"
    for key, (rule, why) in _KNOWN_CAUSES.items():
        if package.frontmatter.get(key) is True or (said and key in said):
            return f"{rule}: {why}"
    return f"no check rule covers what the CLI said: {said or 'nothing (the skill was silently dropped)'}"


async def probe_harness(package: SkillPackage, harness: str, work: Path, static_valid: bool) -> HarnessVerdict:
    """One real CLI run with the skill staged; the verdict (uncached)."""
    from skillworks.trigger import TriggerOptions, TriggerQuery, run_trigger

    script = work / f"{harness}.json"
    script.write_text(_script(harness, package.name))
    queries = [TriggerQuery(id="probe", query=f"Load the {package.name} skill.", should_trigger=True)]
    options = TriggerOptions(
        skill=package.root,
        queries=script,
        agent=harness,
        model=f"scripted/{script}",
        trials=1,
        out=work,
        run_id=f"probe-{harness}",
        timeout_sec=180,
        write_reports=False,
        concurrency=1,
    )
    outcome = await run_trigger(options, queries=queries)
    [result] = outcome.results or [None]  # type: ignore[list-item]
    version = _version_of(outcome.run_dir)
    if result is None or result.error is not None:
        message = result.error.message if result is not None and result.error else "no trial was recorded"
        return HarnessVerdict(harness=harness, version=version, status="error", cli_said=message[:400],
                              static_valid=static_valid, run_dir=str(outcome.run_dir))  # fmt: skip
    trial_dir = outcome.run_dir / result.paths["trial_dir"]
    listed = package.name in result.skill_use.listed
    loaded = package.name in result.skill_use.invoked
    shown = _shown_description(trial_dir, package.name)
    said = None if loaded else _failure_text(trial_dir)
    status: Status = "loaded" if loaded else ("listed-not-loaded" if listed else "not-listed")
    return HarnessVerdict(
        harness=harness,
        version=version,
        status=status,
        listed=listed,
        loaded=loaded,
        description_shown=shown,
        trimmed=None if shown is None else len(shown.strip()) < len(" ".join(package.description.split())),
        cli_said=said,
        should_have_caught=None if loaded or not static_valid else _should_have_caught(package, said),
        static_valid=static_valid,
        run_dir=str(outcome.run_dir),
    )


def _version_of(run_dir: Path) -> str | None:
    try:
        spec = json.loads((run_dir / "experiment.json").read_text())
        return spec["agents"][0].get("version")
    except (OSError, ValueError, KeyError, IndexError):
        return None


async def _installed_version(harness: str) -> str | None:
    """The harness CLI's version, or None when it is not installed here."""
    from skillworks.agents.registry import create_agent

    agent = create_agent(harness, model="scripted/none")
    preflight = getattr(agent, "preflight", None)
    try:
        if preflight is not None:
            await preflight()
    except UserError:
        return None
    return str(agent.version)


async def check_harnesses(skill: Path, harnesses: list[str], *, use_cache: bool = True) -> list[HarnessVerdict]:
    """The verdict of every harness in `harnesses` on the skill directory `skill`."""
    try:
        package = load_skill(skill)
    except SkillError as exc:
        return [HarnessVerdict(harness=h, status="not-staged", cli_said=f"skillworks refuses the skill: {exc}")
                for h in harnesses]  # fmt: skip
    static_valid, _ = await _static(package.root)
    verdicts: list[HarnessVerdict] = []
    cache = _cache_dir()
    with tempfile.TemporaryDirectory(prefix="skillworks-harness-check-") as tmp:
        for harness in harnesses:
            version = await _installed_version(harness)
            if version is None:
                verdicts.append(HarnessVerdict(harness=harness, status="not-installed", static_valid=static_valid))
                continue
            path = cache / f"{_cache_key(package, harness, version)}.json"
            if use_cache and path.is_file():
                try:
                    verdicts.append(HarnessVerdict.model_validate_json(path.read_text()).model_copy(
                        update={"cached": True, "static_valid": static_valid}))  # fmt: skip
                    continue
                except ValueError:
                    pass  # an unreadable cache entry is probed again
            verdict = await probe_harness(package, harness, Path(tmp), static_valid)
            verdict = verdict.model_copy(update={"run_dir": None})  # the run is temporary
            if verdict.status != "error":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(verdict.model_dump_json(indent=2))
            verdicts.append(verdict)
    return verdicts


def render_verdicts(skill: str, verdicts: list[HarnessVerdict]) -> str:
    lines = [f"{skill}: what each installed harness CLI does with it (real run, scripted model)"]
    for v in verdicts:
        head = f"  {v.harness}{' ' + v.version if v.version else ''}: {v.status}{' (cached)' if v.cached else ''}"
        lines.append(head)
        if v.description_shown is not None:
            lines.append(f"    description shown{' (TRIMMED)' if v.trimmed else ''}: {v.description_shown[:160]}")
        if v.cli_said:
            lines.append(f"    the CLI said: {v.cli_said}")
        if v.should_have_caught:
            lines.append(f"    static check passed it; should have caught it: {v.should_have_caught}")
    return "\n".join(lines)


def verdicts_json(skill: str, verdicts: list[HarnessVerdict]) -> str:
    data: dict[str, Any] = {"schema": CACHE_SCHEMA, "skill": skill, "harnesses": [v.model_dump() for v in verdicts]}
    return json.dumps(data, indent=2)
