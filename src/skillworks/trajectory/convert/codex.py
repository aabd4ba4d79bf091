"""Codex CLI `codex exec --json` -> ATIF.

Events: `thread.started {thread_id}`, `turn.started`, `item.started|item.updated|item.completed {item}`,
`turn.completed {usage: {input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens, ...}}`,
`turn.failed {error: {message}}`, `error {message}`. Item types: `agent_message {text}`, `reasoning {text}`,
`command_execution {command, aggregated_output, exit_code, status}`, `file_change {changes: [{path, kind}],
status}`, `mcp_tool_call {server, tool, arguments, result, error, status}`, `web_search {query}`,
`todo_list {items}`, `error {message}`.

Codex reports usage per turn, not per model call: the turn's usage goes on the turn's last agent step
(marked `extra.usage_scope = "turn"`), so step sums equal the totals. Tool items become one agent step each
with one call and its result. The call keeps the name of the tool the model called, not the event type
(kept in the call's `extra.codex_item_type`): the log does not say it, so it is Codex's tool for that item
— `exec_command` (its shell tool since unified exec; `shell` before), `apply_patch`, `<server>__<tool>` for
MCP tools, `web_search` — and a harness trial replaces it with the name the gateway recorded when the
calls pair up (`skillworks.agents.harness.runner.tool_names_from_gateway`).
"""

from __future__ import annotations

from typing import Any

from skillworks.results import Usage
from skillworks.trajectory.builder import TrajectoryBuilder
from skillworks.trajectory.convert._common import (
    ConvertedLog,
    LogInput,
    as_args,
    as_text,
    int_or_zero,
    obj,
    read_events,
)
from skillworks.trajectory.models import Metrics

_TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search")


def _call_for(item: dict[str, Any]) -> tuple[str, dict[str, Any], str, dict[str, Any]]:
    """(function_name, arguments, result content, result extra) for a tool item."""
    kind = item["type"]
    status = item.get("status")
    if kind == "command_execution":
        extra = {"exit_code": item.get("exit_code"), "status": status}
        return "exec_command", {"command": item.get("command", "")}, as_text(item.get("aggregated_output")), extra
    if kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        summary = "\n".join(f"{c.get('kind', 'update')} {c.get('path', '')}" for c in changes)
        return "apply_patch", {"changes": changes}, summary, {"status": status}
    if kind == "mcp_tool_call":
        name = f"{item.get('server')}__{item.get('tool')}"
        args = {"server": item.get("server"), "tool": item.get("tool"), "arguments": as_args(item.get("arguments"))}
        error = item.get("error")
        content = (
            as_text(error.get("message") if isinstance(error, dict) else error)
            if error
            else as_text(
                (item.get("result") or {}).get("content")
                if isinstance(item.get("result"), dict)
                else item.get("result")
            )
        )
        return name, args, content, {"status": status, "is_error": bool(error)}
    return "web_search", {"query": item.get("query", "")}, "", {"status": status}


def convert_codex(
    log: LogInput,
    *,
    instruction: str | None = None,
    agent_version: str | None = None,
    model_name: str | None = None,
) -> ConvertedLog:
    """Convert a `codex exec --json` log. Codex does not list skills in its events (listed_skills is None)."""
    events, skipped = read_events(log, "codex log")
    thread = next((e.get("thread_id") for e in events if e.get("type") == "thread.started"), None)
    builder = TrajectoryBuilder("codex", agent_version or "unknown", model_name, session_id=thread)
    if instruction is not None:
        builder.add_user(instruction)
    errors: list[str] = []
    final: str | None = None
    reasoning: list[str] = []
    turn_start = len(builder.steps)
    totals = {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "turns": 0}

    def flush_reasoning_into_step() -> str | None:
        text = "\n\n".join(reasoning) if reasoning else None
        reasoning.clear()
        return text

    unfinished: dict[str, dict[str, Any]] = {}  # tool items started but not (yet) completed
    for event in events:
        kind = event.get("type")
        if kind == "turn.started":
            turn_start = len(builder.steps)
        elif kind in ("item.started", "item.updated"):
            item = obj(event.get("item"))
            if item.get("type") in _TOOL_ITEMS and item.get("id"):
                unfinished[str(item["id"])] = item
        elif kind == "item.completed":
            item = obj(event.get("item"))
            unfinished.pop(str(item.get("id")), None)
            itype = item.get("type")
            if itype == "reasoning" and item.get("text"):
                reasoning.append(str(item["text"]))
            elif itype == "agent_message":
                final = str(item.get("text", ""))
                builder.add_agent(final, reasoning=flush_reasoning_into_step(), extra={"codex_item_id": item.get("id")})
            elif itype in _TOOL_ITEMS:
                name, args, content, rextra = _call_for(item)
                call_id = str(item.get("id") or f"item_{len(builder.steps)}")
                if builder.has_call(call_id):
                    call_id = f"{call_id}#{len(builder.steps)}"
                builder.add_agent(
                    "",
                    tool_calls=[
                        {
                            "tool_call_id": call_id,
                            "function_name": name,
                            "arguments": args,
                            "extra": {"codex_item_type": itype},
                        }
                    ],
                    reasoning=flush_reasoning_into_step(),
                )
                builder.add_observation([{"source_call_id": call_id, "content": content, "extra": rextra}])
            elif itype == "todo_list":
                items = [i for i in item.get("items") or [] if isinstance(i, dict)]
                plan = "\n".join(f"[{'x' if i.get('completed') else ' '}] {i.get('text', '')}" for i in items)
                builder.add_agent(plan, reasoning=flush_reasoning_into_step(), extra={"codex_item_type": "todo_list"})
            elif itype == "error":
                errors.append(str(item.get("message", "error")))
        elif kind == "turn.completed":
            usage = event.get("usage") or {}
            inp, cached = int_or_zero(usage.get("input_tokens")), int_or_zero(usage.get("cached_input_tokens"))
            out, rsn = int_or_zero(usage.get("output_tokens")), int_or_zero(usage.get("reasoning_output_tokens"))
            totals["input"] += inp
            totals["cached"] += cached
            totals["output"] += out
            totals["reasoning"] += rsn
            totals["turns"] += 1
            if reasoning:
                builder.add_agent("", reasoning=flush_reasoning_into_step())
            extra: dict[str, Any] = {"reasoning_output_tokens": rsn} if rsn else {}
            if usage.get("cache_write_input_tokens"):
                extra["cache_write_input_tokens"] = usage["cache_write_input_tokens"]
            metrics = Metrics(prompt_tokens=inp, completion_tokens=out, cached_tokens=cached, extra=extra or None)
            if any(s.source == "agent" for s in builder.steps[turn_start:]):
                builder.update_last_agent(metrics=metrics, extra={"usage_scope": "turn"})
            else:
                builder.add_agent("", metrics=metrics, extra={"usage_scope": "turn"})
        elif kind == "turn.failed":
            err = event.get("error")
            errors.append(str(err.get("message") if isinstance(err, dict) else err or "turn failed"))
        elif kind == "error":
            errors.append(str(event.get("message", "error")))

    if reasoning:
        builder.add_agent("", reasoning=flush_reasoning_into_step())
    for item_id, item in unfinished.items():  # e.g. a command still running when the agent was stopped
        name, args, _, _ = _call_for(item)
        call_id = item_id if not builder.has_call(item_id) else f"{item_id}#{len(builder.steps)}"
        builder.add_agent(
            "",
            tool_calls=[
                {
                    "tool_call_id": call_id,
                    "function_name": name,
                    "arguments": args,
                    "extra": {"codex_item_type": item.get("type")},
                }
            ],
            extra={"codex_item_status": "unfinished"},
        )
    usage_out = None
    if totals["turns"]:
        usage_out = Usage(
            input_tokens=totals["input"],
            output_tokens=totals["output"],
            cached_tokens=totals["cached"],
            calls=totals["turns"],
            source="harness",
        )
    trajectory = builder.finish(
        notes="Converted by skillworks from `codex exec --json`; usage is per turn (extra.usage_scope).",
        extra={"codex_reasoning_output_tokens": totals["reasoning"]} if totals["reasoning"] else None,
    )
    return ConvertedLog(trajectory, None, usage_out, errors, final, skipped)
