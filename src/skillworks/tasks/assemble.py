"""Turn a validated TaskConfig plus a task directory into the one `Task` model."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from skillworks._printable import printable
from skillworks.errors import TaskError
from skillworks.skills.package import hash_directory
from skillworks.tasks.config import TaskConfig
from skillworks.tasks.layout import (
    ORACLE_ENTRYPOINT,
    VERIFIER_ENTRYPOINT,
    DirChoice,
    check_links_inside,
    dockerfile_skill_copies,
    inside_task,
    load_bundled_skills,
    require_entrypoint,
    resolve_workdir,
    select_dir,
    workdir_problem,
)
from skillworks.tasks.model import Environment, ScriptDir, SourceFormat, Task


def assemble_task(
    root: Path,
    *,
    source_format: SourceFormat,
    config: TaskConfig,
    config_path: Path,
    instruction: str,
    verifier_dirs: tuple[DirChoice, ...],
    oracle_dirs: tuple[DirChoice, ...],
    extra: dict[str, Any],
) -> Task:
    root = root.resolve()
    env_dir = root / "environment"
    if env_dir.is_dir():
        env_dir = inside_task(root, env_dir)
    dockerfile = env_dir / "Dockerfile"
    sandbox = config.sandbox
    workdir = resolve_workdir(sandbox.workdir, dockerfile if dockerfile.is_file() else None)
    problem = workdir_problem(workdir)
    if problem is not None:
        where = "workdir" if sandbox.workdir else "the Dockerfile's WORKDIR"
        raise TaskError(f"{where} {printable(workdir, newlines=False)!r} {problem}", config_path)
    environment = Environment(
        dir=env_dir if env_dir.is_dir() else None,
        dockerfile=dockerfile if dockerfile.is_file() else None,
        workdir=workdir,
        resources=sandbox.resources(config_path),
        network=sandbox.network_policy(),
        build_timeout_sec=sandbox.build_timeout_sec,
    )

    if config.verifier.type != "test-script":
        raise TaskError(
            f"verifier.type {config.verifier.type!r} is not supported; only 'test-script' can run", config_path
        )
    picked = select_dir(root, verifier_dirs)
    if picked is None:
        names = " or ".join(f"{c.name}/" for c in verifier_dirs)
        raise TaskError(f"missing verifier: no {names} directory with {VERIFIER_ENTRYPOINT}", root)
    verifier_dir, verifier_choice = picked
    require_entrypoint(verifier_dir, VERIFIER_ENTRYPOINT, "verifier")
    check_links_inside(root, verifier_dir)
    verifier = ScriptDir(
        dir=verifier_dir,
        mount=verifier_choice.mount,
        entrypoint=VERIFIER_ENTRYPOINT,
        timeout_sec=config.verifier.timeout_sec,
        env=dict(config.verifier.env),
    )

    agent_timeout = config.agent.timeout_sec
    oracle: ScriptDir | None = None
    picked = select_dir(root, oracle_dirs)
    oracle_problem: TaskError | None = None
    if picked is not None:
        oracle_dir, oracle_choice = picked
        try:
            require_entrypoint(oracle_dir, ORACLE_ENTRYPOINT, "oracle")
        except TaskError as exc:
            # only the oracle agent needs it: the task loads without an oracle, `tasks check` reports
            # the problem, and a run with the oracle agent refuses the task before it starts
            oracle_problem = exc
    if picked is not None and oracle_problem is None:
        oracle_dir, oracle_choice = picked
        check_links_inside(root, oracle_dir)
        oracle = ScriptDir(
            dir=oracle_dir,
            mount=oracle_choice.mount,
            entrypoint=ORACLE_ENTRYPOINT,
            timeout_sec=agent_timeout if agent_timeout is not None else 900.0,
            env=dict(config.oracle.env),
        )

    extra = dict(extra)
    if oracle_problem is not None:
        extra["oracle_problem"] = oracle_problem.message
    if not sandbox.network_declared:
        extra["network_defaulted"] = True
    if environment.dockerfile is not None and (copies := dockerfile_skill_copies(environment.dockerfile)):
        extra["image_skill_paths"] = copies
    if sandbox.docker_image:
        extra["docker_image"] = sandbox.docker_image
    if sandbox.env:
        extra["sandbox_env"] = dict(sandbox.env)

    fields: dict[str, Any] = {
        "verifier_isolation": config.verifier.isolation,
        "verifier_inputs": verifier_inputs(config, config_path),
    }
    if agent_timeout is not None:
        fields["agent_timeout_sec"] = agent_timeout
    return Task(
        id=root.name,
        root=root,
        source_format=source_format,
        instruction=instruction,
        environment=environment,
        verifier=verifier,
        oracle=oracle,
        skills=load_bundled_skills(environment.dir),
        metadata=dict(config.metadata),
        content_hash=hash_directory(root),
        name=config.task.name if config.task else None,
        schema_version=config.schema_version,
        extra=extra,
        **fields,
    )


# where skillworks keeps its own state in a sandbox: never an output of the agent
_RESERVED = ("/logs", "/proc", "/sys", "/dev", "/run/skillworks")


def verifier_inputs(config: TaskConfig, config_path: Path) -> tuple[str, ...]:
    """`verifier.inputs`, plus Harbor's top-level `artifacts` (paths, or tables with a `source` path, that
    Harbor collects after a trial): absolute, normalised paths outside skillworks' reserved dirs."""
    declared: list[str] = list(config.verifier.inputs)
    for item in config.artifacts or []:
        source = item.get("source") if isinstance(item, dict) else item
        if not isinstance(source, str):
            raise TaskError(f"artifacts entry {item!r} is not a path or a table with a 'source' path", config_path)
        if not any(source == r or source.startswith(r + "/") for r in _RESERVED):  # e.g. /logs/artifacts
            declared.append(source)
    out: list[str] = []
    for path in declared:
        norm = posixpath.normpath(path) if path else ""
        if not path.startswith("/") or norm != (path.rstrip("/") or "/") or ".." in path.split("/"):
            raise TaskError(f"verifier input {path!r} must be an absolute, normalised path", config_path)
        if norm == "/" or any(norm == r or norm.startswith(r + "/") for r in _RESERVED):
            raise TaskError(f"verifier input {path!r} is the root or a directory skillworks reserves", config_path)
        if norm not in out:
            out.append(norm)
    return tuple(out)
