"""The `self-generated` condition's skill source (SkillsBench's self-generated condition).

Two isolated sessions per trial:

- the **creator session** runs the trial's agent in a fresh sandbox of the task with every task skill
  stripped, the verifier and oracle absent (as in every agent phase) and exactly one authoring skill
  staged. It is told, in the project's own words (`creator_prompt.md`), to write skill packs for this
  task type under a generated-skills directory and not to solve the task. Only that directory is kept:
  it is downloaded to ``<creator dir>/generated-skills/``, every pack is loaded, hashed, checked and
  audited for leakage (`packs.py`), and the creator's gateway calls are its own usage record;
- the **solver session** is the ordinary trial: a *new* sandbox, the task as under `curated`, with the
  curated skills replaced by the generated packs that passed the review.

Realizations (`ExperimentSpec.extra["self_generated"]`): regenerate per trial (default; the creator dir
is ``<trial dir>/creator``) or generate once per (task, agent) and reuse it across trials (``reuse``;
the creator dir is ``<run dir>/self-generated/<task>__<agent>``, and only the generating trial carries
the creator's usage).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillworks.errors import StagingError, UserError
from skillworks.experiment.plan import TrialSpec
from skillworks.provision.selfgen.packs import MAX_PACK_BYTES, MAX_PACKS, GeneratedPack, review_packs
from skillworks.provision.sources import SkillProvision, SourceRequest
from skillworks.results import Usage
from skillworks.skills.package import SkillPackage, load_skill

CONDITION = "self-generated"
CREATOR_CONDITION = "self-generated-creator"  # the creator session's key in scripts and gateway logs
EXTRA_KEY = "self_generated"
GENERATED_DIR = "generated-skills"
DEFAULT_CREATOR_SKILL = Path(__file__).with_name("authoring") / "skill-authoring"
PROMPT_TEMPLATE = Path(__file__).with_name("creator_prompt.md")
# at most this much of the creator's generated-skills dir is downloaded (every pack at its limit, twice over)
MAX_GENERATED_BYTES = 2 * MAX_PACKS * MAX_PACK_BYTES
# harnesses that ship their own skill creator (see /work/shared/notes: Codex lists a bundled `skill-creator`)
BUNDLED_CREATORS = {"codex": "skill-creator"}


@dataclass(frozen=True)
class SelfGenOptions:
    """How the self-generated condition runs: `creator_skill` is "default", "bundled" or a skill dir."""

    reuse: bool = False
    creator_skill: str = "default"

    @classmethod
    def from_extra(cls, extra: dict[str, Any]) -> SelfGenOptions:
        raw = extra.get(EXTRA_KEY) or {}
        return cls(reuse=bool(raw.get("reuse", False)), creator_skill=str(raw.get("creator_skill", "default")))

    def to_extra(self) -> dict[str, Any]:
        """The record kept in experiment.json: mode, authoring skill and its hash."""
        skill = self.authoring_skill()
        return {
            "reuse": self.reuse,
            "mode": "generate once per (task, agent), reused across trials" if self.reuse else "regenerate per trial",
            "creator_skill": self.creator_skill,
            "creator_skill_hash": skill.package_hash if skill is not None else None,
        }

    def authoring_skill(self) -> SkillPackage | None:
        """The authoring skill staged for the creator (None: the harness's bundled one)."""
        if self.creator_skill == "bundled":
            return None
        path = DEFAULT_CREATOR_SKILL if self.creator_skill == "default" else Path(self.creator_skill)
        return load_skill(path)


class CreatorSession(BaseModel):
    """What one creator session did (creation.json in its dir)."""

    model_config = ConfigDict(extra="forbid")

    creator_trial_id: str
    dir: str = Field(description="creator dir, relative to the run dir")
    authoring_skill: str = Field(description="'name@hash12' staged for the creator, or 'bundled:<name>'")
    seconds: float
    timed_out: bool
    exit_code: int | None
    final_message: str | None = None
    usage: Usage
    packs: list[GeneratedPack] = Field(default_factory=list)
    generated_problem: str | None = Field(
        default=None, description="why nothing of the generated-skills dir was kept (a symlink, over the limit)"
    )


def creator_instruction(task_instruction: str, workdir: str, generated_dir: str, authoring: str) -> str:
    """The creator's instruction: the project's template (creator_prompt.md) around the task's own text."""
    template = PROMPT_TEMPLATE.read_text(encoding="utf-8")
    return (
        template.replace("{workdir}", workdir)
        .replace("{generated_dir}", generated_dir)
        .replace("{authoring}", authoring)
        .replace("{task_instruction}", task_instruction.strip())
    )


class SelfGeneratedSource:
    """`SkillSource` of the `self-generated` condition."""

    def __init__(self) -> None:
        self._locks: dict[Path, asyncio.Lock] = {}

    async def provide(self, request: SourceRequest) -> SkillProvision:
        options = SelfGenOptions.from_extra(request.tenv.experiment_extra)
        spec, tenv = request.spec, request.tenv
        if not options.reuse:
            session = await _create(request, options, request.trial_dir / "creator", spec.trial_index)
            return _provision(session, tenv.run_dir, options, reused=False)
        shared = tenv.run_dir / "self-generated" / f"{spec.task.id}__{spec.agent.label}"
        lock = self._locks.setdefault(shared.resolve(), asyncio.Lock())
        async with lock:
            done = shared / "creation.json"
            if done.is_file():
                session = CreatorSession.model_validate_json(done.read_text())
                return _provision(session, tenv.run_dir, options, reused=True)
            session = await _create(request, options, shared, 0)
            return _provision(session, tenv.run_dir, options, reused=False)


def _provision(session: CreatorSession, run_dir: Path, options: SelfGenOptions, reused: bool) -> SkillProvision:
    generated = run_dir / session.dir / GENERATED_DIR
    skills: list[SkillPackage] = []
    for pack in session.packs:
        if pack.status != "staged":
            continue
        package = load_skill(generated / pack.dir)
        if package.package_hash != pack.package_hash:  # a reused pack changed on disk since it was reviewed
            raise UserError(f"generated pack {pack.dir!r} changed since it was reviewed", generated / pack.dir)
        skills.append(package)
    record: dict[str, Any] = {
        "mode": "reuse" if options.reuse else "per-trial",
        "reused": reused,
        "creator_trial_id": session.creator_trial_id,
        "creator_dir": session.dir,
        "authoring_skill": session.authoring_skill,
        "creator_seconds": session.seconds,
        "creator_timed_out": session.timed_out,
        "packs": [p.model_dump(exclude_none=True) for p in session.packs],
        "staged": [f"{s.name}@{s.short_hash}" for s in skills],
        "answer_keys": [p.dir for p in session.packs if p.answer_key],
    }
    if session.generated_problem:
        record["generated_problem"] = session.generated_problem
    # a reused creation was paid for once, by the trial that made it
    return SkillProvision(skills=skills, usage=None if reused else session.usage, record=record)


async def _create(request: SourceRequest, options: SelfGenOptions, creator_dir: Path, index: int) -> CreatorSession:
    from skillworks.agents.phase import run_agent_phase, teardown_sandbox
    from skillworks.gateway import usage_totals
    from skillworks.sandbox import create_sandbox
    from skillworks.skills.staging import audit_skills, stage_skills

    spec, tenv = request.spec, request.tenv
    agent = tenv.agents[spec.agent.label]
    authoring = options.authoring_skill()
    if authoring is None and agent.name not in BUNDLED_CREATORS:
        raise UserError(
            f"--creator-skill bundled: agent {agent.name} bundles no skill creator "
            f"(known: {', '.join(sorted(BUNDLED_CREATORS))}); give --creator-skill DIR or use the default"
        )
    staged_authoring = [authoring] if authoring is not None else []
    authoring_ref = (
        f"{authoring.name}@{authoring.short_hash}" if authoring else f"bundled:{BUNDLED_CREATORS[agent.name]}"
    )
    (creator_dir / "agent").mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"skillworks-{tenv.run_id[:24]}-creator-"))
    sandbox_binds = getattr(agent, "sandbox_binds", None)  # optional Agent hook
    sandbox = create_sandbox(
        tenv.env,
        spec.task,
        scratch,
        extra_ro_binds=sandbox_binds() if sandbox_binds is not None else [],
        run_id=tenv.run_id,
        hide_paths=[*tenv.hide_paths, spec.task.root, tenv.run_dir.resolve()],
        strip_task_skills=True,
        **tenv.env_options,
    )
    creator_id = TrialSpec(spec.task, CREATOR_CONDITION, spec.agent, index, spec.seed).trial_id
    t0 = time.monotonic()
    try:
        try:
            await sandbox.start()
        except Exception as exc:
            raise UserError(f"creator sandbox failed to start: {exc}") from exc
        skills_dir = agent.skills_dir(sandbox.home, sandbox.workdir)
        if skills_dir is None:
            raise UserError(f"agent {agent.name} cannot use skills, so it cannot be a skill creator")
        await stage_skills(sandbox, staged_authoring, skills_dir, scratch)
        audit = await audit_skills(sandbox, CREATOR_CONDITION, staged_authoring, skills_dir)
        (creator_dir / "skills.json").write_text(audit.model_dump_json(indent=2))
        if not audit.ok:
            raise StagingError("creator session: " + "; ".join(audit.problems))
        generated_dir = f"{sandbox.home}/{GENERATED_DIR}"
        await sandbox.exec(f"mkdir -p {generated_dir}", timeout=30)
        where = (
            f"{skills_dir}/{authoring.name}/SKILL.md"
            if authoring is not None
            else f"your bundled `{BUNDLED_CREATORS[agent.name]}` skill"
        )
        instruction = creator_instruction(spec.task.instruction, sandbox.workdir, generated_dir, where)
        creator_task = spec.task.model_copy(update={"instruction": instruction, "skills": ()})
        creator_spec = TrialSpec(creator_task, CREATOR_CONDITION, spec.agent, index, spec.seed)
        outcome, _ = await run_agent_phase(
            creator_spec, tenv, agent, sandbox, creator_dir, staged_authoring, skills_dir, [], verify_next=False
        )
        if outcome.error is not None:
            raise UserError(f"creator session failed ({outcome.error.category}): {outcome.error.message}")
        problem = await _download_generated(sandbox, generated_dir, creator_dir / GENERATED_DIR)
    finally:
        await teardown_sandbox(sandbox, scratch, creator_id)
    seconds = round(time.monotonic() - t0, 3)
    gateway_log = creator_dir / "gateway.jsonl"
    usage = usage_totals(gateway_log) if gateway_log.is_file() else outcome.usage or Usage()
    reviews, _ = await review_packs(creator_dir / GENERATED_DIR, spec.task)
    session = CreatorSession(
        creator_trial_id=creator_id,
        dir=creator_dir.relative_to(tenv.run_dir).as_posix(),
        authoring_skill=authoring_ref,
        seconds=seconds,
        timed_out=outcome.timed_out,
        exit_code=outcome.exit_code,
        final_message=outcome.final_message,
        usage=usage,
        packs=reviews,
        generated_problem=problem,
    )
    tmp = creator_dir / "creation.json.tmp"
    tmp.write_text(json.dumps(session.model_dump(mode="json"), indent=2))
    tmp.replace(creator_dir / "creation.json")
    return session


async def _download_generated(sandbox: Any, generated_dir: str, dest: Path) -> str | None:
    """Copy the creator's generated-skills dir to `dest`, unless the creator made it something else than a
    directory of bounded size (a symlink to `/` would otherwise copy the sandbox's whole view of the host).
    Returns why nothing was kept, or None."""
    q = shlex.quote(generated_dir)
    probe = await sandbox.exec(
        f"if [ -L {q} ]; then echo symlink; elif [ ! -e {q} ]; then echo missing; elif [ ! -d {q} ]; "
        f"then echo not-a-directory; else du -sk {q} 2>/dev/null | cut -f1; fi",
        timeout=120,
    )
    answer = probe.stdout.strip()
    if answer == "missing":
        return None
    if answer in ("symlink", "not-a-directory"):
        return f"{GENERATED_DIR} is a {answer.replace('-', ' ')}, not the directory it was created as"
    if not answer.isdigit():
        return f"{GENERATED_DIR} could not be measured (du: {answer[:80]!r} {probe.stderr.strip()[:120]!r})"
    if int(answer) * 1024 > MAX_GENERATED_BYTES:
        return f"{GENERATED_DIR} holds {int(answer)} KiB; at most {MAX_GENERATED_BYTES // 1024} KiB is kept"
    # links kept as links (never followed): the pack check refuses a pack that holds one, and says so
    await sandbox.download(generated_dir, dest, links="keep")
    if dest.is_symlink() or not dest.is_dir():  # the backend copied a link or a file: keep nothing of it
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        else:
            shutil.rmtree(dest, ignore_errors=True)
        return f"{GENERATED_DIR} is not a directory"
    return None
