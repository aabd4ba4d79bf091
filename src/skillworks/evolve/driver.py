"""The lifelong protocol (SkillFlow) over task families, on the run store, sandboxes, gateway and trials.

Per family (each starts from an empty library, or ``--seed-skills``; nothing carries over between
families), for t = 1..n:

1. solve T_t three ways, paired: ``evolved`` (library S_{t-1} staged), ``vanilla`` (no library) and
   ``history`` (no library; the prior tasks' compacted ``history`` trajectories precede the instruction);
   each is an ordinary trial recorded in results.jsonl;
2. one patch call through the gateway (``--patch-model``, default the agent's model; the same for every
   harness) with the library, the evolved trial's summary, final message and compacted trajectory; the
   answer is one JSON patch, retried once when malformed, else recorded as ``patch_error``;
3. apply it safely and atomically (``apply.py``) as ``library/v<t>``; record ``patches/<t>.json`` and one
   line of ``history.jsonl``.

Layout: ``runs/<id>/families/<family>/{library/v<t>/, patches/<t>.json, patches/<t>.gateway.jsonl,
history.jsonl}``. ``--resume`` continues each family after its last recorded step with that library version.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from skillworks.errors import UserError
from skillworks.evolve.apply import apply_patch, library_hash, library_skills
from skillworks.evolve.family import Family
from skillworks.evolve.patch import MalformedPatch, Patch, parse_patch
from skillworks.evolve.prompt import CHARS_PER_TOKEN, PATCH_SYSTEM, compact_trajectory, load_template, render_prompt
from skillworks.evolve.source import LIBRARY_SOURCE
from skillworks.experiment.plan import TrialSpec, trial_seed
from skillworks.experiment.spec import ExperimentSpec
from skillworks.experiment.store import RunStore
from skillworks.results import TrialResult, Usage
from skillworks.tasks.model import Task

CONDITIONS = ("evolved", "vanilla", "history")
SEED_GATE_FILE = "seed-gate.json"
# the raw answers kept in patches/<t>.json (a rejected oversized patch is kept once, cut to this)
MAX_STORED_ANSWER_CHARS = 256 * 1024
EXTRA_KEY = "evolve"


class HistoryLine(BaseModel):
    """One step of a family: history.jsonl."""

    model_config = ConfigDict(extra="forbid")

    step: int
    task_id: str
    trial_id: str
    reward: float | None
    outcome: str
    patch_status: str = Field(description="accepted | rejected | patch_error")
    reason: str | None = None
    summary: str = ""
    library_version: str
    library_hash: str
    skills: int
    patch_usage: Usage


@dataclass
class EvolveOptions:
    patch_model: str | None = None
    patch_api_base: str | None = None
    seed_skills: Path | None = None
    prompt_path: Path | None = None
    budget_tokens: int = 4000


@dataclass
class EvolveOutcome:
    run_dir: Path
    results: list[TrialResult] = field(default_factory=list)
    history: dict[str, list[HistoryLine]] = field(default_factory=dict)


def family_dir(run_dir: Path, family: str) -> Path:
    return run_dir / "families" / family


def read_history(path: Path) -> list[HistoryLine]:
    if not path.is_file():
        return []
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            try:
                lines.append(HistoryLine.model_validate_json(raw))
            except ValueError:
                break  # a torn last line: that step is redone
    return lines


def _final_message(trajectory: Path) -> str | None:
    try:
        steps = json.loads(trajectory.read_text(encoding="utf-8")).get("steps") or []
    except (OSError, ValueError):
        return None
    for step in reversed(steps):
        if step.get("source") == "agent" and isinstance(step.get("message"), str) and step["message"].strip():
            return str(step["message"])
    return None


async def _patch_call(
    gateway: Any, call_id: str, log_path: Path, key: str, model: str | None, prompt: str
) -> tuple[Patch | None, str | None, list[str]]:
    """(patch, error, raw answers): one call, retried once when the answer is not a patch."""
    import httpx

    answers: list[str] = []
    channel = await gateway.open_trial(call_id, log_path, task_id=key)
    try:
        transport = httpx.AsyncHTTPTransport(uds=str(channel.socket_path))
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway", timeout=900) as client:
            messages: list[dict[str, str]] = [
                {"role": "system", "content": PATCH_SYSTEM},
                {"role": "user", "content": prompt},
            ]
            for attempt in (1, 2):
                response = await client.post(
                    "/v1/chat/completions",
                    json={"model": model or "default", "messages": messages, "max_tokens": 16000},
                )
                if response.status_code >= 400:
                    return None, f"patch call failed (HTTP {response.status_code}): {response.text[:300]}", answers
                answer = response.json()["choices"][0]["message"].get("content") or ""
                answers.append(answer)
                try:
                    return parse_patch(answer), None, answers
                except MalformedPatch as exc:
                    if attempt == 2:
                        return None, f"malformed answer (after one retry): {exc}", answers
                    messages += [
                        {"role": "assistant", "content": answer},
                        {
                            "role": "user",
                            "content": f"That is not a valid patch ({exc}). Answer again with exactly one JSON "
                            "object with the keys summary, upsert_files and delete_paths, and nothing else.",
                        },
                    ]
    except httpx.HTTPError as exc:
        return None, f"patch call failed: {exc}", answers
    finally:
        await gateway.close_trial(call_id)
    return None, "no answer", answers


def _history_instruction(prior: list[tuple[Task, TrialResult]], run_dir: Path, instruction: str, budget: int) -> str:
    """SkillFlow's history control: each prior task once (its own instruction, then what the agent did),
    before the task now. A prior history trial's trajectory opens with *its* history prompt; those user
    turns are left out, so the 11th task holds the first task's block once, not ten times."""
    if not prior:
        return instruction
    each = max(200, budget // len(prior))
    parts = ["Earlier tasks of this family, and how your attempts at them went:", ""]
    for task, r in prior:
        traj = run_dir / r.paths["trajectory"] if "trajectory" in r.paths else None
        parts += [
            f"### {task.id} (reward {r.reward})",
            "Task: " + _cap(task.instruction.strip(), each * CHARS_PER_TOKEN // 2),
            compact_trajectory(traj, each, skip_sources=("system", "user")),
            "",
        ]
    parts += ["---", "The task now:", "", instruction]
    return "\n".join(parts)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … ({len(text) - limit} characters cut)"


async def evolve_family(
    family: Family,
    spec: ExperimentSpec,
    tenv: Any,
    store: RunStore,
    patch_gateway: Any,
    options: EvolveOptions,
    outcome: EvolveOutcome,
    console: Console | None,
) -> None:
    from skillworks.experiment.trial import run_trial
    from skillworks.gateway import usage_totals

    fdir = family_dir(store.run_dir, family.name)
    libs = fdir / "library"
    (fdir / "patches").mkdir(parents=True, exist_ok=True)
    if not (libs / "v0").is_dir():
        libs.mkdir(parents=True, exist_ok=True)
        if options.seed_skills is not None:
            await _seed_library(options.seed_skills, libs / "v0", family, fdir / SEED_GATE_FILE, console)
        else:
            (libs / "v0").mkdir()
    history_path = fdir / "history.jsonl"
    history = read_history(history_path)
    template = load_template(options.prompt_path)
    agent_cfg = spec.agents[0]
    recorded = {r.trial_id: r for r in store.read_results()}
    prior_history: list[tuple[Task, TrialResult]] = []
    for t, task in enumerate(family.tasks, start=1):
        results: dict[str, TrialResult] = {}
        if t <= len(history):  # done before a resume
            tid = TrialSpec(task, "history", agent_cfg, 0, 0).trial_id
            if tid in recorded:
                prior_history.append((task, recorded[tid]))
            continue
        prev = libs / f"v{t - 1}"
        LIBRARY_SOURCE.assign(store.run_dir, task.id, prev)
        specs = []
        for cond in CONDITIONS:
            the_task = task
            if cond == "history":
                text = _history_instruction(prior_history, store.run_dir, task.instruction, options.budget_tokens)
                the_task = task.model_copy(update={"instruction": text})
            tid = TrialSpec(task, cond, agent_cfg, 0, 0).trial_id
            specs.append(TrialSpec(the_task, cond, agent_cfg, 0, trial_seed(spec.seed, tid)))
        todo = [s for s in specs if s.trial_id not in recorded]
        for s in todo:  # the remains of an interrupted attempt are kept, renamed
            path = store.trial_dir(s.trial_id)
            n = 1
            while path.exists() and path.with_name(f"{path.name}.interrupted-{n}").exists():
                n += 1
            if path.exists():
                path.rename(path.with_name(f"{path.name}.interrupted-{n}"))
        done = await asyncio.gather(*(run_trial(s, tenv) for s in todo))
        for r in done:
            store.append(r)
            outcome.results.append(r)
            recorded[r.trial_id] = r
        for s in specs:
            results[s.condition] = recorded[s.trial_id]
        prior_history.append((task, results["history"]))
        evolved = results["evolved"]

        # --- patch
        patch_json = fdir / "patches" / f"{t}.json"
        dest = libs / f"v{t}"
        if dest.exists() and not patch_json.is_file():
            shutil.rmtree(dest)  # an apply that finished without its record: redo the step's patch
        if patch_json.is_file() and dest.exists():
            line = HistoryLine.model_validate(json.loads(patch_json.read_text())["history"])
        else:
            traj = store.run_dir / evolved.paths["trajectory"] if "trajectory" in evolved.paths else None
            prompt = render_prompt(
                template,
                library=prev,
                position=t,
                total=len(family.tasks),
                family=family.name,
                instruction=task.instruction,
                result=evolved,
                final_message=_final_message(traj) if traj else None,
                trajectory=traj,
                budget_tokens=options.budget_tokens,
                task_source=str(task.root),
            )
            log_path = fdir / "patches" / f"{t}.gateway.jsonl"
            log_path.unlink(missing_ok=True)
            call_id = f"{spec.run_id}-{family.name}-patch-{t}"
            patch, error, answers = await _patch_call(
                patch_gateway, call_id, log_path, f"{task.id}@patch", options.patch_model or agent_cfg.model, prompt
            )
            # the new version is used on the family's remaining tasks (the last one's: on every task of it)
            applied = await apply_patch(prev, patch, dest, gate_tasks=family.tasks[t:] or family.tasks)
            status = "patch_error" if error else "accepted" if applied.accepted else "rejected"
            line = HistoryLine(
                step=t,
                task_id=task.id,
                trial_id=evolved.trial_id,
                reward=evolved.reward,
                outcome=evolved.outcome,
                patch_status=status,
                reason=error or applied.reason,
                summary=patch.summary if patch else "",
                library_version=f"v{t}",
                library_hash=applied.library_hash,
                skills=applied.skills,
                patch_usage=usage_totals(log_path) if log_path.is_file() else Usage(),
            )
            record = {
                "system": PATCH_SYSTEM,
                "prompt": prompt,
                # the patch as the model wrote it is in `answers`; the parsed patch is kept only when applied
                "answers": [_cap(a, MAX_STORED_ANSWER_CHARS) for a in answers],
                "patch": patch.model_dump() if patch is not None and applied.accepted else None,
                "history": line.model_dump(mode="json"),
            }
            tmp = patch_json.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(record, indent=2))
            tmp.replace(patch_json)
        with history_path.open("a", encoding="utf-8") as fh:
            fh.write(line.model_dump_json() + "\n")
        history.append(line)
        if console is not None:
            console.print(
                f"{family.name} {t}/{len(family.tasks)} {task.id}: "
                + "  ".join(f"{c} {results[c].reward}" for c in CONDITIONS)
                + f"  patch {line.patch_status}{f' ({line.reason})' if line.reason else ''}; {line.skills} skill(s)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    outcome.history[family.name] = history


async def _seed_library(seed: Path, dest: Path, family: Family, record: Path, console: Console | None) -> None:
    """v0 of a family from the seed library, every seed skill through the gate against the family's tasks
    (the tasks it will be used on): what the gate rejects is left out of v0 and recorded (seed-gate.json)."""
    from skillworks.provision.gate import gate_library

    outcome = await gate_library(seed, family.tasks, authored=True)  # the user's own library
    tmp = dest.with_name(f".{dest.name}-seed")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(seed, tmp, symlinks=True)
    for verdict in outcome.rejected:
        shutil.rmtree(tmp / verdict.skill, ignore_errors=True)
        if console is not None:
            console.print(
                f"{family.name}: seed skill {verdict.skill!r} rejected by the gate: {verdict.reasons[0]}",
                markup=False,
                highlight=False,
            )
    record.write_text(json.dumps(outcome.to_record(), indent=2))
    tmp.rename(dest)


def final_library(run_dir: Path, family: str) -> Path:
    libs = family_dir(run_dir, family) / "library"
    versions = sorted((p for p in libs.glob("v*") if p.name[1:].isdigit()), key=lambda p: int(p.name[1:]))
    return versions[-1]


async def run_evolve(
    spec: ExperimentSpec,
    families: list[Family],
    run_dir: Path,
    *,
    options: EvolveOptions,
    resume: bool = False,
    console: Console | None = None,
) -> EvolveOutcome:
    from skillworks.agents.registry import create_agent
    from skillworks.experiment.executor import sandbox_session, started_gateways
    from skillworks.experiment.runner import _check_resume_compatible, _make_gateways
    from skillworks.experiment.trial import TrialEnvironment, TrialGateway
    from skillworks.sandbox import preflight_sandbox

    store = RunStore(run_dir)
    if resume:
        _check_resume_compatible(store.read_spec(), spec, store)
        store.repair_torn_tail()
    elif store.experiment_path.exists():
        raise UserError("run directory already exists; pass --resume to continue it", run_dir)
    tasks = [t for f in families for t in f.tasks]
    ids = [t.id for t in tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"task id {dupes[0]!r} appears in two families (or twice in one)")
    for task in tasks:
        preflight_sandbox(spec.env, task, **spec.env_options)
    (cfg,) = spec.agents
    agent = create_agent(cfg.name, model=cfg.model, **{k: v for k, v in cfg.options.items() if k != "label"})
    if not agent.needs_model or cfg.model is None:
        raise UserError(f"evolve needs an agent that talks to a model, with --model (agent {cfg.name})")
    preflight = getattr(agent, "preflight", None)
    if preflight is not None:
        await preflight()
    cfg.version = agent.version
    built = _make_gateways(spec, {cfg.label: agent})  # a bad model fails here, before anything is written
    outcome = EvolveOutcome(run_dir=run_dir)
    with store.exclusive():
        store.write_spec(spec)
        async with started_gateways(built) as gateways:
            patch_gateway = gateways[cfg.label]
            own_patch_gateway = None
            # the patch model's own endpoint: --patch-api-base, never the agent's --api-base for another model
            api_base = options.patch_api_base
            if api_base is None and options.patch_model == cfg.model:
                api_base = cfg.api_base
            if options.patch_model and (options.patch_model, api_base) != (cfg.model, cfg.api_base):
                from skillworks.gateway import Gateway

                own_patch_gateway = Gateway(model=options.patch_model, api_base=api_base)
                await own_patch_gateway.start()
                patch_gateway = own_patch_gateway
            try:
                hidden = {t.root.resolve() for t in tasks}
                if options.seed_skills is not None:
                    hidden.add(options.seed_skills.resolve())
                tenv = TrialEnvironment(
                    run_id=spec.run_id,
                    run_dir=run_dir,
                    env=spec.env,
                    env_options=dict(spec.env_options),
                    gateways=dict[str, TrialGateway](gateways),
                    agents={cfg.label: agent},
                    hide_paths=sorted(hidden),
                    experiment_extra=dict(spec.extra),
                )
                async with sandbox_session(spec):
                    for family in families:
                        await evolve_family(family, spec, tenv, store, patch_gateway, options, outcome, console)
            finally:
                if own_patch_gateway is not None:
                    await own_patch_gateway.stop()
    return outcome


def library_versions(run_dir: Path, family: str) -> list[tuple[str, str, int]]:
    """(version, hash, #skills) of every saved version of a family's library, in order."""
    libs = family_dir(run_dir, family) / "library"
    out = []
    for p in sorted((p for p in libs.glob("v*") if p.name[1:].isdigit()), key=lambda p: int(p.name[1:])):
        out.append((p.name, library_hash(p), len(library_skills(p))))
    return out
