"""`--executor ray`: the trials of a run as Ray tasks on a cluster (optional extra `skillworks[ray]`).

- Each trial is a Ray task declaring its resources: CPUs and memory from the task (or
  `cpus_per_trial`), and one unit of `skillworks_local` (bubblewrap) or `skillworks_container` (a
  container runtime), so only nodes that can run the sandbox take it. A node advertises these with
  `ray start --resources '{"skillworks_local": 1000}'`; `ray.init()` started here advertises what
  this machine has.
- The driver (this process) stays the only writer of results.jsonl: results stream back as trials
  finish, with their trial dir as an archive unpacked into the run dir, so resume and exactly-once
  recording are the local executor's.
- Model calls go through one gateway actor per node (`_ray_node.NodeGateway`), never via the driver.
- Container images are built on the node that runs the trial and cached there by content hash (the
  container backend's own cache); with `--image-registry`, each distinct image is first built once on some
  node and pushed (`_ray_prebuild.py`), and the trials pull it.
- Ctrl-C cancels the remote trials (their sandboxes are torn down on the nodes). A trial whose worker
  or node dies is retried `retries` times, on another node when there is one; the lost attempts are
  kept in the trial dir (`lost-attempts.json`, with the usage its attempt recorded, which is added to the
  trial's usage: read from its node's gateway.jsonl while that node lives, else from the ledger — the tracker
  actor pinned to the driver's node, to which the node gateways report every call as they record it) and the
  trial is recorded once, with its `attempt`.
- Before any trial, every agent's pre-flight runs on every node (`_ray_node.probe_node`): an agent no node can
  run refuses the run, one only some can run is pinned to those. Actor names and node dirs carry a nonce per
  driver session; the session's node dirs are removed on every node at its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillworks._printable import strip_ansi
from skillworks.errors import UserError
from skillworks.experiment._ray_prebuild import prebuild_on_cluster
from skillworks.experiment.executor import RunContext, TrialRunner
from skillworks.experiment.plan import TrialSpec
from skillworks.results import TrialError, TrialResult, Usage

RESOURCE_FOR_ENV = {"local": "skillworks_local", "container": "skillworks_container"}
NODE_CAPACITY = 1000  # units of the sandbox resource a node advertises: trials are bounded by CPU/memory
_PREFLIGHT_SEC = 300.0  # a node's pre-flight (an agent CLI's version check) may be slow on a busy node


def _require_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray: pip install 'skillworks[ray]'") from None
    return ray


def local_sandbox_resources() -> dict[str, float]:
    """The sandbox resources this machine can offer (for a cluster started by `ray.init()` here)."""
    resources: dict[str, float] = {}
    if shutil.which("bwrap"):
        resources["skillworks_local"] = NODE_CAPACITY
    if shutil.which("podman") or shutil.which("docker"):
        resources["skillworks_container"] = NODE_CAPACITY
    return resources


class RayExecutor:
    """Trials on a Ray cluster. `address`: None starts a one-machine cluster in this process, "auto" joins
    the cluster of this machine, "ray://host:10001" a remote one (Ray client)."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        retries: int = 1,
        cpus_per_trial: float | None = None,
        num_cpus: int | None = None,
    ) -> None:
        self.address = address
        self.retries = max(0, retries)
        self.cpus_per_trial = cpus_per_trial
        self.num_cpus = num_cpus  # only for a cluster started here
        self._allowed: dict[str, set[str] | None] = {}  # by agent label: the nodes that passed its pre-flight
        self._load: dict[str, int] = {}  # trials pinned to each node now

    @asynccontextmanager
    async def session(self, run: RunContext) -> AsyncIterator[TrialRunner]:
        ray = _require_ray()
        from skillworks.experiment import _ray_node as node

        started_here = not ray.is_initialized()
        if started_here:
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.WARNING,
                "address": self.address or "local",  # "local": a new one-machine cluster, never another's
            }
            if self.address is None:
                kwargs.update(resources=local_sandbox_resources(), num_cpus=self.num_cpus)
            try:
                ray.init(**kwargs)  # in this (main) thread: Ray installs its signal handlers here
            except Exception as exc:
                raise UserError(f"cannot start or reach the Ray cluster ({self.address or 'local'}): {exc}") from None
        try:
            resource = RESOURCE_FOR_ENV.get(run.spec.env)
            if resource is None:
                raise UserError(f"--executor ray does not know the sandbox backend {run.spec.env!r}")
            nodes = _capable_nodes(ray, resource)
            if not nodes:
                raise UserError(
                    f"no node of the Ray cluster offers {resource!r}: start nodes with "
                    f"ray start ... --resources '{{\"{resource}\": {NODE_CAPACITY}}}'"
                )
            self._check_fit(ray, resource, run)
            nonce = secrets.token_hex(4)
            shipment = node.RunShipment(
                spec=run.spec,
                trees=_ship_trees(ray, node, run),
                skill_set=run.skill_set,
                keep_workspace=run.keep_workspace,
                scripts=_scripts(run),
                tracker=_start_tracker(ray, node, run.spec.run_id, nonce),
                nonce=nonce,
            )
            shipment_ref = ray.put(shipment)
            gateways: list[Any] = []
            remote = ray.remote(node.run_trial_on_node)
            try:
                self._allowed = await _preflight_nodes(ray, node, shipment_ref, nodes, run)
                await prebuild_on_cluster(ray, shipment_ref, resource, run)  # --image-registry: build once, push
                self._load = dict.fromkeys(nodes, 0)
                if _needs_gateways(run):
                    gateways = [node.start_node_gateway(shipment, n) for n in nodes]

                async def one(spec: TrialSpec) -> TrialResult:
                    return await self._run_one(ray, node, remote, shipment, shipment_ref, resource, spec, run)

                yield one
            finally:
                await _stop_gateways(ray, node, shipment, gateways)
                await _clean_nodes(ray, node, shipment_ref, _capable_nodes(ray, resource))
        finally:
            if started_here:
                ray.shutdown()

    def _trial_options(self, task: Any, resource: str) -> dict[str, Any]:
        res = task.environment.resources
        options: dict[str, Any] = {
            "num_cpus": self.cpus_per_trial if self.cpus_per_trial is not None else (res.cpus or 1),
            "resources": {resource: 1},
            "max_retries": 0,  # retried here, on another node, and recorded once
        }
        if res.memory_mb:
            options["memory"] = res.memory_mb * 1024 * 1024
        return options

    def _check_fit(self, ray: Any, resource: str, run: RunContext) -> None:
        """A trial no node can take would wait forever (Ray queues infeasible tasks for an autoscaler):
        say which task, what it needs and what the biggest node has, before any trial is queued."""
        alive = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
        capable = [n for n in alive if n.get(resource)]
        for task in run.tasks:
            need = self._trial_options(task, resource)
            cpus, memory = need["num_cpus"], need.get("memory", 0)
            if not any(n.get("CPU", 0) >= cpus and n.get("memory", 0) >= memory for n in capable):
                most_cpus = max(n.get("CPU", 0) for n in capable)
                most_memory = max(n.get("memory", 0) for n in capable) / 2**20
                raise UserError(
                    f"no node of the Ray cluster with {resource!r} can take a trial of task {task.id}: it needs "
                    f"{cpus:g} CPU(s){f' and {memory / 2**20:.0f} MB' if memory else ''}, the largest node has "
                    f"{most_cpus:g} CPU(s) and {most_memory:.0f} MB (--ray-cpus-per-trial lowers the CPUs)",
                    task.root,
                )

    async def _run_one(
        self,
        ray: Any,
        node: Any,
        remote: Any,
        shipment: Any,
        shipment_ref: Any,
        resource: str,
        spec: TrialSpec,
        run: RunContext,
    ) -> TrialResult:
        options = self._trial_options(spec.task, resource)
        lost: list[dict[str, Any]] = []
        exclude: set[str] = set()
        allowed = self._allowed.get(spec.agent.label)  # None: every node can run this agent
        while True:
            placement, pinned = _placement(ray, resource, exclude, allowed, self._load)
            ref = remote.options(**options, **placement).remote(shipment_ref, spec)
            if pinned is not None:
                self._load[pinned] = self._load.get(pinned, 0) + 1
            try:
                ret = await ref
            except asyncio.CancelledError:
                ray.cancel(ref)  # KeyboardInterrupt in the trial: its sandbox is torn down on its node
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(_settled(ref)), timeout=60)
                raise
            except ray.exceptions.RayTaskError as exc:  # run_trial records its own errors: a bug
                return _error_result(spec, run, "internal_error", f"trial task failed: {_plain(str(exc))}", lost)
            except ray.exceptions.RayError as exc:  # worker or node lost
                starts = await shipment.tracker.starts.remote(spec.trial_id)
                started = len(starts) > len(lost)  # else it was lost before its worker noted the start
                where = starts[-1] if started else (None, None)
                usage, source = await _lost_usage(
                    ray, node, shipment, shipment_ref, where[0], spec.trial_id, len(starts) if started else None
                )
                lost.append(
                    {
                        "attempt": len(lost) + 1,
                        "node_id": where[0],
                        "pid": where[1],
                        "error": f"{type(exc).__name__}: {_plain(str(exc).splitlines()[0]) if str(exc) else ''}",
                        "at": datetime.now(UTC).isoformat(),
                        "usage": usage,  # what the lost attempt used (None: unknown), added to the trial's usage
                        "usage_source": source,  # "node record", "driver ledger" or "unknown"
                    }
                )
                if where[0]:
                    exclude.add(where[0])
                if len(lost) > self.retries:
                    return _error_result(spec, run, "worker_lost", lost[-1]["error"], lost)
                continue
            finally:
                if pinned is not None:
                    self._load[pinned] -= 1
            shipment.tracker.forget.remote(spec.trial_id)  # its attempts' usage is in the landed trial now
            return await _land(node, ret, spec, run, lost)


def _capable_nodes(ray: Any, resource: str) -> list[str]:
    return [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(resource, 0) > 0]


def _placement(
    ray: Any, resource: str, exclude: set[str], allowed: set[str] | None, load: dict[str, int]
) -> tuple[dict[str, Any], str | None]:
    """Where a trial goes, and the node it is pinned to (if any). A trial of an agent only some nodes can run
    (the pre-flight) is pinned to the least loaded of those; a retry goes to another capable node when there
    is one (else wherever Ray places it)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if allowed is not None:
        alive = set(_capable_nodes(ray, resource))
        choice = [n for n in allowed if n in alive and n not in exclude] or [n for n in allowed if n in alive]
        if not choice:
            raise UserError("no node of the Ray cluster that passed the pre-flight for this agent is alive")
        pick = min(choice, key=lambda n: (load.get(n, 0), n))
        return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=pick, soft=False)}, pick
    if not exclude:
        return {}, None
    others = [n for n in _capable_nodes(ray, resource) if n not in exclude]
    if not others:
        return {}, None
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=others[0], soft=True)}, None


def _pinned(node_id: str) -> dict[str, Any]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)}


async def _preflight_nodes(
    ray: Any, node: Any, shipment_ref: Any, nodes: list[str], run: RunContext
) -> dict[str, set[str] | None]:
    """Run every agent's pre-flight on every capable node before any trial is placed. By agent label: None
    when every node passed, else the nodes that did. An agent no node can run refuses the run, naming each
    node and why."""
    probe = ray.remote(node.probe_node)
    refs = [probe.options(**_pinned(n)).remote(shipment_ref) for n in nodes]
    try:
        found = await asyncio.wait_for(asyncio.gather(*refs), timeout=_PREFLIGHT_SEC)
    except TimeoutError:
        raise UserError(f"the nodes' pre-flight did not finish within {_PREFLIGHT_SEC:g}s") from None
    allowed: dict[str, set[str] | None] = {}
    for cfg in run.spec.agents:
        ok = {n for n, f in zip(nodes, found, strict=True) if f["agents"].get(cfg.label) is None}
        if not ok:
            why = "; ".join(
                f"node {n[:12]} ({f['host']}): {f['agents'][cfg.label]}" for n, f in zip(nodes, found, strict=True)
            )
            raise UserError(f"agent {cfg.label} cannot run on any node of the Ray cluster: {why}")
        allowed[cfg.label] = None if len(ok) == len(nodes) else ok
    return allowed


def _start_tracker(ray: Any, node: Any, run_id: str, nonce: str) -> Any:
    """The run's tracker and usage ledger, pinned to the driver's node: it outlives any other node (a node that
    dies takes its actors along; the driver's node going means the session is over anyway)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return node.RunTracker.options(
        name=node.tracker_name(run_id, nonce),
        namespace=node.NAMESPACE,
        num_cpus=0,
        max_concurrency=1000,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False),
    ).remote()


async def _lost_usage(
    ray: Any, node: Any, shipment: Any, shipment_ref: Any, node_id: str | None, trial_id: str, attempt: int | None
) -> tuple[Any, str]:
    """What a lost attempt used, and from where: the gateway.jsonl on its node while that node lives ("node
    record"), else what its node's gateway reported to the ledger on the driver's node, call by call ("driver
    ledger"), else unknown (None; not zero)."""
    if node_id is not None and any(n["NodeID"] == node_id and n.get("Alive") for n in ray.nodes()):
        task = ray.remote(node.lost_attempt_usage)
        with contextlib.suppress(Exception):  # the node died meanwhile, or the record is unreadable
            found = await asyncio.wait_for(task.options(**_pinned(node_id)).remote(shipment_ref, trial_id), timeout=60)
            if found is not None:
                return found, "node record"
    if attempt is not None:
        with contextlib.suppress(Exception):
            found = await asyncio.wait_for(shipment.tracker.attempt_usage.remote(trial_id, attempt), timeout=60)
            if found is not None:
                return found, "driver ledger"
    return None, "unknown"


def with_lost_usage(usage: Usage, lost: list[dict[str, Any]]) -> Usage:
    """A trial's usage with what its lost attempts used added (those whose node could still tell)."""
    recovered = [Usage.model_validate(e["usage"]) for e in lost if e.get("usage")]
    if not recovered:
        return usage
    return usage.model_copy(
        update={
            "source": "gateway" if usage.source == "none" else usage.source,
            "input_tokens": usage.input_tokens + sum(u.input_tokens for u in recovered),
            "output_tokens": usage.output_tokens + sum(u.output_tokens for u in recovered),
            "cached_tokens": usage.cached_tokens + sum(u.cached_tokens for u in recovered),
            "cost_usd": round(usage.cost_usd + sum(u.cost_usd for u in recovered), 10),
            "calls": usage.calls + sum(u.calls for u in recovered),
        }
    )


async def _clean_nodes(ray: Any, node: Any, shipment_ref: Any, nodes: list[str]) -> None:
    """Remove this session's node dirs (trial dirs of cancelled or lost trials) on every node still alive."""
    clean = ray.remote(node.clean_node)
    refs = [clean.options(**_pinned(n)).remote(shipment_ref) for n in nodes]
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.gather(*refs, return_exceptions=True), timeout=60)


_plain = strip_ansi  # a message without terminal colour codes (Ray's task errors carry them)


async def _settled(ref: Any) -> None:
    with contextlib.suppress(BaseException):
        await ref


def _needs_gateways(run: RunContext) -> bool:
    return any(run.agents[cfg.label].needs_model for cfg in run.spec.agents)


def _scripts(run: RunContext) -> dict[str, str]:
    """Scripted models are files of the driver: their text travels with the run."""
    scripts: dict[str, str] = {}
    for cfg in run.spec.agents:
        if cfg.model and cfg.model.startswith("scripted/"):
            path = Path(cfg.model.removeprefix("scripted/"))
            try:
                scripts[cfg.model] = path.read_text()
            except OSError as exc:
                raise UserError(f"cannot read the scripted model: {exc.strerror}", path) from None
    return scripts


def _ship_trees(ray: Any, node: Any, run: RunContext) -> list[Any]:
    """Every task dir and experiment skill dir, packed once and put in the object store; nodes unpack each
    once into their cache. A skill inside a task dir travels with its task."""
    trees: dict[Path, tuple[str, Path]] = {}
    for task in run.tasks:
        trees[task.root.resolve()] = (f"task-{task.content_hash[:24]}", task.root)
    for skill in run.experiment_skills():
        root = skill.root.resolve()
        if not any(root == t or t in root.parents for t in trees):
            trees[root] = (f"skill-{skill.package_hash[:24]}", skill.root)
    return [
        node.ShippedTree(origin=origin, key=key, archive=ray.put(node.pack_tree(origin)))
        for origin, (key, _) in trees.items()
    ]


async def _stop_gateways(ray: Any, node: Any, shipment: Any, started: list[Any]) -> None:
    """Stop the gateways this session started, and those nodes that joined later started for themselves
    (only this driver's: the names carry its nonce)."""
    handles = list(started)
    prefix = f"gateway-{shipment.spec.run_id}-{shipment.nonce}-"
    with contextlib.suppress(Exception):
        for entry in ray.util.list_named_actors(all_namespaces=True):
            if entry.get("namespace") == node.NAMESPACE and entry["name"].startswith(prefix):
                handles.append(ray.get_actor(entry["name"], namespace=node.NAMESPACE))
    for handle in handles:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(handle.stop.remote(), timeout=30)
        with contextlib.suppress(Exception):
            ray.kill(handle)


async def _land(node: Any, ret: Any, spec: TrialSpec, run: RunContext, lost: list[dict[str, Any]]) -> TrialResult:
    """Unpack the trial dir into the run dir and make the result the driver records."""
    trial_dir = run.run_dir / "trials" / spec.trial_id
    await asyncio.to_thread(shutil.rmtree, trial_dir, True)
    trial_dir.mkdir(parents=True)
    await asyncio.to_thread(node.unpack_tree, ret.archive, trial_dir)
    result: TrialResult = node.result_from(ret)
    if lost:
        _write_lost(trial_dir, lost)
        result = result.model_copy(update={"attempt": len(lost) + 1, "usage": with_lost_usage(result.usage, lost)})
    if run.post_trial is not None:
        result = await run.post_trial(spec, result, trial_dir)
    return result


def _write_lost(trial_dir: Path, lost: list[dict[str, Any]]) -> None:
    (trial_dir / "lost-attempts.json").write_text(json.dumps(lost, indent=2))


def _error_result(
    spec: TrialSpec, run: RunContext, category: str, message: str, lost: list[dict[str, Any]]
) -> TrialResult:
    """A trial that never came back: an infrastructure error, recorded once."""
    trial_dir = run.run_dir / "trials" / spec.trial_id
    trial_dir.mkdir(parents=True, exist_ok=True)
    if lost:
        _write_lost(trial_dir, lost)
    now = datetime.now(UTC)
    usage = with_lost_usage(Usage(), lost)
    return TrialResult(
        trial_id=spec.trial_id,
        run_id=run.spec.run_id,
        task_id=spec.task.id,
        condition=spec.condition,
        agent=spec.agent.label,
        model=spec.agent.model,
        provider=spec.agent.provider,
        trial_index=spec.trial_index,
        seed=spec.seed,
        attempt=max(1, len(lost)),
        outcome="error",
        error=TrialError(category=category, message=message, phase="internal"),
        usage=usage,
        paths={"trial_dir": trial_dir.relative_to(run.run_dir).as_posix()},
        started_at=now,
        finished_at=now,
    )
