"""What runs on the nodes of a Ray cluster for `RayExecutor`: the trial task, the per-node gateway actor
and the run's tracker actor. Imported only where Ray is installed.

A trial task rebuilds the trial's environment on its node — task and skill files unpacked into a
node-local cache (keyed by content hash, once per node), agents created there, model calls through
the gateway actor of that node — runs the unchanged `run_trial`, and returns the result with its trial
dir packed as a tar archive; the driver unpacks it into the run dir and records the result."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import shutil
import socket
import tarfile
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import ray
from pydantic import BaseModel
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from skillworks.agents.base import Agent
from skillworks.experiment._node_cache import evict, limits_from_env, touch
from skillworks.experiment.plan import TrialSpec
from skillworks.experiment.spec import ExperimentSpec
from skillworks.experiment.trial import TrialEnvironment, TrialGateway, run_trial
from skillworks.gateway.records import GatewayCall
from skillworks.gateway.server import TrialChannel
from skillworks.provision.conditions import SkillSet
from skillworks.results import TrialError, TrialResult

NAMESPACE = "skillworks"
# node-local state of the executor: unpacked task/skill files, trial dirs being written, gateway sockets
NODE_ROOT_ENV = "SKILLWORKS_RAY_NODE_DIR"

M = TypeVar("M", bound=BaseModel)


def node_root() -> Path:
    root = Path(os.environ.get(NODE_ROOT_ENV) or Path(tempfile.gettempdir()) / "skillworks-ray")
    root.mkdir(parents=True, exist_ok=True)
    return root


def gateway_actor_name(run_id: str, nonce: str, node_id: str) -> str:
    """Scoped by the driver's nonce: two drivers of one run id never share (or stop) each other's gateways."""
    return f"gateway-{run_id}-{nonce}-{node_id[:16]}"


def node_run_dir(run: RunShipment) -> Path:
    """This node's dir for the trials of one driver's session of a run (removed when the session ends)."""
    return node_root() / "runs" / f"{run.spec.run_id}-{run.nonce}"


# ----------------------------------------------------------------------------------- shipping files


def pack_tree(root: Path) -> bytes:
    """A directory as an uncompressed tar archive (symlinks kept as links)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(root, arcname=".")
    return buf.getvalue()


def unpack_tree(data: bytes, dest: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(dest, filter="tar")


@dataclass(frozen=True)
class ShippedTree:
    """A host directory of the driver (a task or a skill), by content key, to unpack on the nodes."""

    origin: Path  # the path on the driver; paths in the models are rebased from it
    key: str  # content hash: the node cache entry
    archive: Any  # ray.ObjectRef[bytes]

    def materialise(self) -> Path:
        dest = node_root() / "cache" / self.key
        if dest.is_dir():
            with contextlib.suppress(OSError):
                touch(dest)  # used now: not evicted while trials use it
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{self.key}.tmp-", dir=dest.parent))
        try:
            unpack_tree(ray.get(self.archive), tmp)
            with contextlib.suppress(OSError):  # another worker of this node won the race: same content
                os.rename(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return dest


def rebase(model: M, moves: dict[Path, Path]) -> M:
    """`model` with every path under a key of `moves` moved under its value (task and skill models hold
    host paths of the driver; on a node they point into the node's cache)."""

    def swap(value: Any) -> Any:
        if isinstance(value, Path):
            for old, new in moves.items():
                if value == old or old in value.parents:
                    return new / value.relative_to(old)
            return value
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(swap(v) for v in value)
        return value

    return type(model).model_validate(swap(model.model_dump(mode="python")))


# ----------------------------------------------------------------------------------- the run's job


@dataclass
class RunShipment:
    """Everything a node needs to run trials of one run (sent once, by reference)."""

    spec: ExperimentSpec
    trees: list[ShippedTree]
    skill_set: SkillSet
    keep_workspace: bool
    scripts: dict[str, str] = field(default_factory=dict)  # scripted model -> script text
    tracker: Any = None  # ActorHandle of RunTracker: on the driver's node, also the run's usage ledger
    nonce: str = "0"  # one per driver session: scopes actor names and node dirs


@dataclass
class TrialReturn:
    result_json: str
    archive: bytes  # the trial dir


_AGENTS: dict[tuple[str, str, str], Agent] = {}  # (run id, nonce, agent label) -> agent, per worker process


async def _agent_for(run: RunShipment, label: str) -> Agent:
    key = (run.spec.run_id, run.nonce, label)
    if key not in _AGENTS:
        from skillworks.agents.registry import create_agent

        cfg = next(a for a in run.spec.agents if a.label == label)
        agent = create_agent(cfg.name, model=cfg.model, **{k: v for k, v in cfg.options.items() if k != "label"})
        preflight = getattr(agent, "preflight", None)  # e.g. the harness CLI must be installed on this node
        if preflight is not None:
            await preflight()
        _AGENTS[key] = agent
    return _AGENTS[key]


def probe_node(run: RunShipment) -> dict[str, Any]:
    """The pre-flight of one node (a Ray task pinned to it): for each agent of the run, None when it can run
    here, else why not (e.g. the harness CLI is not installed on this node)."""

    async def probe() -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for cfg in run.spec.agents:
            try:
                await _agent_for(run, cfg.label)
                found[cfg.label] = None
            except Exception as exc:  # a UserError of the preflight, or anything else: this node cannot
                found[cfg.label] = " ".join(str(exc).split())[:300] or type(exc).__name__
        return found

    max_age, max_bytes = limits_from_env()  # once per session and node: the node's cache is pruned
    evicted = evict(node_root() / "cache", max_age, max_bytes)
    images = _evict_images(run, max_age, max_bytes) if run.spec.env == "container" else []
    return {"host": socket.gethostname(), "agents": asyncio.run(probe()), "evicted": evicted, "evicted_images": images}


def _evict_images(run: RunShipment, max_age: float, max_bytes: int) -> list[str]:
    """The node's stale task images removed (same limits as its file cache); never fails the pre-flight."""
    from skillworks.sandbox.container.factory import runtime_from_options
    from skillworks.sandbox.container.image import cache_dir
    from skillworks.sandbox.container.image_eviction import evict_images

    try:
        runtime = runtime_from_options(**run.spec.env_options)
        return asyncio.run(evict_images(runtime, cache_dir(), max_age, max_bytes))
    except Exception as exc:  # no runtime here (the agent pre-flight says so), a runtime that errs
        logging.getLogger(__name__).warning("image eviction skipped on %s: %s", socket.gethostname(), exc)
        return []


def lost_attempt_usage(run: RunShipment, trial_id: str) -> dict[str, Any] | None:
    """What a trial whose worker died used, from the gateway.jsonl its node's gateway wrote (a Ray task pinned
    to that node, before the trial is retried); None when there is no record. The node's gateway closes the
    dead attempt's channel first, so a retry on this node can open the trial again."""
    from skillworks.gateway import usage_totals

    async def close() -> None:
        try:
            actor = ray.get_actor(gateway_actor_name(run.spec.run_id, run.nonce, _node_id()), namespace=NAMESPACE)
        except ValueError:
            return
        for cfg in run.spec.agents:
            if cfg.model is not None:
                await actor.close_trial.remote(cfg.model, cfg.api_base, trial_id)

    with contextlib.suppress(Exception):
        asyncio.run(close())
    log = node_run_dir(run) / "trials" / trial_id / "gateway.jsonl"
    if not log.is_file():
        return None
    return usage_totals(log).model_dump()


def _node_id() -> str:
    return str(ray.get_runtime_context().get_node_id())


def clean_node(run: RunShipment) -> bool:
    """Remove what one driver session of the run left on this node (a Ray task pinned to it)."""
    path = node_run_dir(run)
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()


def run_trial_on_node(run: RunShipment, spec: TrialSpec) -> TrialReturn:
    """The Ray task: one trial on this node."""
    node_id = ray.get_runtime_context().get_node_id()
    attempt = ray.get(run.tracker.trial_started.remote(spec.trial_id, node_id, os.getpid()))
    return asyncio.run(_run_on_node(run, spec, node_id, attempt))


async def _run_on_node(run: RunShipment, spec: TrialSpec, node_id: str, attempt: int) -> TrialReturn:
    moves = {tree.origin: tree.materialise() for tree in run.trees}
    task = rebase(spec.task, moves)
    skill_set = SkillSet(
        target=rebase(run.skill_set.target, moves) if run.skill_set.target else None,
        support=tuple(rebase(s, moves) for s in run.skill_set.support),
        decoys=tuple(rebase(s, moves) for s in run.skill_set.decoys),
        siblings=tuple(rebase(s, moves) for s in run.skill_set.siblings),
    )
    spec = replace(spec, task=task)
    run_dir = node_run_dir(run)
    trial_dir = run_dir / "trials" / spec.trial_id
    shutil.rmtree(trial_dir, ignore_errors=True)  # what an earlier, lost attempt left on this node
    agent = await _agent_for(run, spec.agent.label)
    gateways: dict[str, TrialGateway] = {}
    if agent.needs_model and spec.agent.model is not None:
        gateways[spec.agent.label] = _GatewayClient(
            _node_gateway(run, node_id), spec.agent.model, spec.agent.api_base, attempt
        )
    tenv = TrialEnvironment(
        run_id=run.spec.run_id,
        run_dir=run_dir,
        env=run.spec.env,
        env_options=dict(run.spec.env_options),
        skill_set=skill_set,
        gateways=gateways,
        agents={spec.agent.label: agent},
        hide_paths=sorted(set(moves.values())),
        keep_workspace=run.keep_workspace,
        experiment_extra=dict(run.spec.extra),
    )
    if run.spec.env == "container":
        from skillworks.sandbox.container import labelled_run

        with labelled_run(run.spec.run_id):
            result = await run_trial(spec, tenv)
    else:
        result = await run_trial(spec, tenv)
    # where the trial ran, for the person reading the run dir (and to retry a lost trial elsewhere)
    (trial_dir / "ray-node.json").write_text(
        json.dumps(
            {"node_id": node_id, "host": socket.gethostname(), "pid": os.getpid(), "node_dir": str(node_root())},
            indent=2,
        )
    )
    try:
        return TrialReturn(result.model_dump_json(), pack_tree(trial_dir))
    finally:
        shutil.rmtree(trial_dir, ignore_errors=True)


# ----------------------------------------------------------------------------------- gateways


def _node_gateway(run: RunShipment, node_id: str) -> Any:
    """This node's gateway actor: the driver starts one per node at the start of the run; a node that
    joined later gets one here (detached, removed by the driver at the end of the run)."""
    try:
        return ray.get_actor(gateway_actor_name(run.spec.run_id, run.nonce, node_id), namespace=NAMESPACE)
    except ValueError:
        return start_node_gateway(run, node_id, detached=True)


def start_node_gateway(run: RunShipment, node_id: str, *, detached: bool = False) -> Any:
    return NodeGateway.options(  # type: ignore[attr-defined]
        name=gateway_actor_name(run.spec.run_id, run.nonce, node_id),
        namespace=NAMESPACE,
        get_if_exists=True,
        lifetime="detached" if detached else None,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
        num_cpus=0,
        max_concurrency=1000,
    ).remote(run.scripts, dict(run.spec.extra), run.tracker)


class _GatewayClient:
    """A TrialGateway whose gateway is the node's actor (same node: the trial's socket is a local file)."""

    def __init__(self, actor: Any, model: str, api_base: str | None, attempt: int = 1) -> None:
        self._actor, self._model, self._api_base, self._attempt = actor, model, api_base, attempt
        self._errors: dict[str, TrialError | None] = {}

    async def open_trial(self, trial_id: str, log_path: Path, task_id: str | None = None) -> TrialChannel:
        channel: TrialChannel = await self._actor.open_trial.remote(
            self._model, self._api_base, trial_id, log_path, task_id, self._attempt
        )
        return channel

    async def close_trial(self, trial_id: str) -> None:
        self._errors[trial_id] = await self._actor.close_trial.remote(self._model, self._api_base, trial_id)

    def trial_error(self, trial_id: str) -> TrialError | None:
        return self._errors.get(trial_id)


@ray.remote
class NodeGateway:
    """The model gateway(s) of one node for one run: one `Gateway` per (model, api_base), each trial on its
    own unix socket and gateway.jsonl — model traffic stays on the node. Each recorded call is also reported,
    fire-and-forget, to the run's ledger on the driver's node (`RunTracker.record_call`), so that what an attempt
    used is known when this node dies with its gateway.jsonl."""

    def __init__(self, scripts: dict[str, str], plan_extra: dict[str, Any] | None = None, ledger: Any = None) -> None:
        self._scripts = scripts
        self._ledger = ledger
        self._attempts: dict[str, int] = {}  # open trial -> its attempt (as the ledger numbered it)
        # the run's limits (the trial token budget, what one call may ask) and whether answers are recorded
        self._plan_extra = plan_extra or {}
        self._gateways: dict[tuple[str, str | None], Any] = {}
        self._dir = Path(tempfile.mkdtemp(prefix="sw-raygw-", dir=node_root()))

    async def _gateway(self, model: str, api_base: str | None) -> Any:
        from skillworks.gateway import CallLimits, Gateway

        key = (model, api_base)
        if key not in self._gateways:
            source = model
            if model in self._scripts:  # the driver's script, written on this node
                script = self._dir / f"script-{len(self._gateways)}{Path(model).suffix or '.yaml'}"
                script.write_text(self._scripts[model])
                source = f"scripted/{script}"
            gateway = Gateway(
                model=source,
                api_base=api_base,
                socket_dir=self._dir / f"sockets-{len(self._gateways)}",
                trial_token_budget=self._plan_extra.get("trial_token_budget"),
                call_limits=CallLimits.from_plan(self._plan_extra),
                record_bodies=bool(self._plan_extra.get("record_bodies", True)),
                on_record=self._report if self._ledger is not None else None,
            )
            gateway.model = model  # recorded as the run names it, not as this node's copy of a script
            await gateway.start()
            self._gateways[key] = gateway
        return self._gateways[key]

    def _report(self, call: GatewayCall) -> None:
        """Tell the ledger about one recorded call, without its bodies and without waiting (an ObjectRef
        nobody awaits: a model call never waits on the driver)."""
        attempt = self._attempts.get(call.trial_id, 1)
        self._ledger.record_call.remote(call.trial_id, attempt, call.model_copy(update=_NO_BODIES))

    async def open_trial(
        self,
        model: str,
        api_base: str | None,
        trial_id: str,
        log_path: Path,
        task_id: str | None,
        attempt: int = 1,
    ) -> TrialChannel:
        gateway = await self._gateway(model, api_base)
        channel: TrialChannel = await gateway.open_trial(trial_id, log_path, task_id=task_id)
        self._attempts[trial_id] = attempt
        if self._ledger is not None:  # an attempt whose gateway opened: none of its calls is "no record"
            self._ledger.attempt_opened.remote(trial_id, attempt)
        return channel

    async def close_trial(self, model: str, api_base: str | None, trial_id: str) -> TrialError | None:
        gateway = await self._gateway(model, api_base)
        await gateway.close_trial(trial_id)
        error: TrialError | None = gateway.trial_error(trial_id)
        return error

    async def stop(self) -> None:
        for gateway in self._gateways.values():
            with contextlib.suppress(Exception):
                await gateway.stop()
        self._gateways.clear()
        shutil.rmtree(self._dir, ignore_errors=True)


_NO_BODIES: dict[str, Any] = {"response": None, "request_parts": None}


def tracker_name(run_id: str, nonce: str) -> str:
    return f"tracker-{run_id}-{nonce}"


@ray.remote
class RunTracker:
    """On the driver's node (pinned there): which node and worker process each trial attempt started on (to
    retry a lost trial on another node, and to say where it was lost), and the run's usage ledger — every model
    call the node gateways recorded, by trial and attempt, as they recorded it (what a lost attempt used when
    its node, and the gateway.jsonl there, died with it)."""

    def __init__(self) -> None:
        self._starts: dict[str, list[tuple[str, int]]] = {}
        self._calls: dict[tuple[str, int], list[GatewayCall]] = {}

    def trial_started(self, trial_id: str, node_id: str, pid: int) -> int:
        """Note an attempt's start; its number (1, 2, ...), which its gateway reports its calls under."""
        self._starts.setdefault(trial_id, []).append((node_id, pid))
        return len(self._starts[trial_id])

    def attempt_opened(self, trial_id: str, attempt: int) -> None:
        self._calls.setdefault((trial_id, attempt), [])

    def record_call(self, trial_id: str, attempt: int, call: GatewayCall) -> None:
        self._calls.setdefault((trial_id, attempt), []).append(call)

    def forget(self, trial_id: str) -> None:
        """The trial landed: its calls are in its gateway.jsonl (the ledger holds only trials in flight)."""
        for key in [k for k in self._calls if k[0] == trial_id]:
            del self._calls[key]

    def attempt_usage(self, trial_id: str, attempt: int) -> dict[str, Any] | None:
        """What one attempt's model calls used, as reported; None when its gateway never reported."""
        from skillworks.gateway import usage_totals

        calls = self._calls.get((trial_id, attempt))
        return None if calls is None else usage_totals(calls).model_dump()

    def starts(self, trial_id: str) -> list[tuple[str, int]]:
        return list(self._starts.get(trial_id, []))

    def all_starts(self) -> dict[str, list[tuple[str, int]]]:
        return {k: list(v) for k, v in self._starts.items()}


def result_from(ret: TrialReturn) -> TrialResult:
    return TrialResult.model_validate_json(ret.result_json)
