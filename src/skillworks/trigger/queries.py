"""Trigger query files: which requests should make an agent load the skill, and which should not.

Two shapes are read:

- skill-creator (Anthropic) eval set, as is: a JSON list of ``{"query": str, "should_trigger": bool}``;
- skillworks: ``{"skill": name?, "queries": [{"id"?, "query", "should_trigger", "note"?}]}`` (YAML or JSON).
  A query without ``id`` is numbered ``q01``, ``q02``, … in file order.

Each query becomes a `Task` whose instruction is the query and whose workspace is empty: the trial asks
only "did the agent load the skill?". Bad input is one `UserError` line naming the file and the item.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from skillworks.errors import UserError
from skillworks.tasks.model import Task

QUERY_KEYS = ("id", "query", "should_trigger", "note")
TOP_KEYS = ("skill", "queries")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class TriggerQuery(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="unique within the file; the task id of its trials is trigger-<id>")
    query: str = Field(min_length=1, description="what the user asks the agent")
    should_trigger: bool = Field(description="whether the skill under test should be loaded for it")
    note: str | None = None

    @property
    def task_id(self) -> str:
        return f"trigger-{self.id}"


def _items(data: Any, path: Path) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        unknown = [str(k) for k in data if k not in TOP_KEYS]
        if unknown:
            raise UserError(f"unknown key {unknown[0]!r} (allowed: {', '.join(TOP_KEYS)})", path)
        items = data.get("queries")
        if not isinstance(items, list):
            raise UserError("'queries' must be a list of {query, should_trigger} items", path)
        return items
    raise UserError("a query file is a list of {query, should_trigger} items or {queries: [...]}", path)


def load_queries(path: Path) -> list[TriggerQuery]:
    """The queries of a trigger file (skill-creator eval-set JSON or the skillworks format)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read query file: {exc}", path) from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML/JSON"
        raise UserError(f"not valid {kind}: {exc}".splitlines()[0], path) from None
    queries: list[TriggerQuery] = []
    for i, raw in enumerate(_items(data, path)):
        where = f"item [{i}]"
        if not isinstance(raw, dict):
            raise UserError(f"{where}: an item must be an object with 'query' and 'should_trigger'", path)
        unknown = [str(k) for k in raw if k not in QUERY_KEYS]
        if unknown:
            raise UserError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(QUERY_KEYS)})", path)
        query = raw.get("query")
        if not isinstance(query, str) or not query.strip():
            raise UserError(f"{where}: 'query' must be a non-empty string", path)
        should = raw.get("should_trigger")
        if not isinstance(should, bool):
            raise UserError(f"{where}: 'should_trigger' must be true or false", path)
        qid = raw.get("id", f"q{i + 1:02d}")
        if isinstance(qid, int) and not isinstance(qid, bool):
            qid = str(qid)
        if not isinstance(qid, str) or not _ID.match(qid):
            raise UserError(f"{where}: 'id' must be letters, digits, '.', '_' or '-' (at most 64)", path)
        note = raw.get("note")
        if note is not None and not isinstance(note, str):
            raise UserError(f"{where}: 'note' must be a string", path)
        queries.append(TriggerQuery(id=qid, query=query.strip(), should_trigger=should, note=note))
    if not queries:
        raise UserError("the query file holds no queries", path)
    ids = [q.id for q in queries]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"two queries share the id {dupes[0]!r}", path)
    return queries


def write_queries(queries: list[TriggerQuery], path: Path, skill: str | None = None) -> Path:
    """Write queries in the skillworks format (read back by `load_queries`)."""
    data: dict[str, Any] = {"queries": [q.model_dump(exclude_none=True) for q in queries]}
    if skill:
        data = {"skill": skill, **data}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def query_tasks(queries: list[TriggerQuery], root: Path, timeout_sec: float) -> list[Task]:
    """One task per query: the query is the instruction, the workspace is empty, there is no verifier."""
    root.mkdir(parents=True, exist_ok=True)
    tasks = []
    for q in queries:
        digest = hashlib.sha256(json.dumps(q.model_dump(), sort_keys=True).encode()).hexdigest()
        tasks.append(
            Task(
                id=q.task_id,
                root=root,
                source_format="evals.json",
                instruction=q.query,
                agent_timeout_sec=timeout_sec,
                metadata={"trigger_query": q.id, "should_trigger": q.should_trigger},
                content_hash=digest,
                name=f"trigger/{q.id}",
            )
        )
    return tasks
