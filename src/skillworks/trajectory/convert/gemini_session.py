"""Gemini CLI's saved chat session (`~/.gemini/tmp/<project_hash>/chats/session-*.json`) -> ATIF.

The file is one JSON object `{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`. Each message
has `id`, `timestamp`, `type` (`user` | `gemini` | `info` | `error` | `warning`) and `content`; a `gemini`
message may carry `model`, `thoughts [{subject, description, timestamp}]`, `tokens {input, output, cached,
thoughts, tool, total}` and `toolCalls [{id, name, args, result: [{functionResponse: {id, name, response:
{output | error}}}], status, timestamp, resultDisplay}]`. Unlike the stream-json output, token counts are per
model call, so they land on the agent step of that call.

Token mapping: `input` is the prompt (cached tokens included, as Gemini counts them), `cached` its cached part,
`output + thoughts` the completion (thinking tokens are billed as output); `tool` and `total` go to `extra`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillworks.results import Usage
from skillworks.trajectory.builder import TrajectoryBuilder
from skillworks.trajectory.convert._common import ConvertedLog, as_args, as_text, int_or_zero, ms_to_iso, obj
from skillworks.trajectory.validate import TrajectoryError


def is_gemini_session(data: Any) -> bool:
    """Whether a parsed JSON value has the shape of a saved Gemini CLI session."""
    return isinstance(data, dict) and isinstance(data.get("messages"), list) and "sessionId" in data


def convert_gemini_cli_session(
    session: Path | str | dict[str, Any],
    *,
    agent_version: str | None = None,
    model_name: str | None = None,
) -> ConvertedLog:
    """Convert a saved Gemini CLI session file (a path, its text, or the parsed object)."""
    label = str(session) if isinstance(session, Path) else "gemini-cli session"
    data = _load(session, label)
    if not is_gemini_session(data):
        raise TrajectoryError(
            "not a Gemini CLI session file (expected an object with 'sessionId' and 'messages')", label
        )
    messages = [m for m in data["messages"] if isinstance(m, dict)]
    first_model = next((m.get("model") for m in messages if isinstance(m.get("model"), str)), None)
    builder = TrajectoryBuilder(
        "gemini-cli",
        agent_version or "unknown",
        model_name or first_model,
        session_id=str(data["sessionId"]),
        agent_extra={"project_hash": data["projectHash"]} if isinstance(data.get("projectHash"), str) else None,
    )
    errors: list[str] = []
    totals = [0, 0, 0]
    saw_tokens = False
    final: str | None = None
    for message in messages:
        kind = message.get("type")
        ts = _timestamp(message.get("timestamp"))
        text = as_text(message.get("content"))
        if kind == "user":
            builder.add_user(text, timestamp=ts)
        elif kind == "gemini":
            tokens = obj(message.get("tokens"))
            metrics = None
            if tokens:
                saw_tokens = True
                prompt = int_or_zero(tokens.get("input"))
                completion = int_or_zero(tokens.get("output")) + int_or_zero(tokens.get("thoughts"))
                cached = min(int_or_zero(tokens.get("cached")), prompt)
                totals = [totals[0] + prompt, totals[1] + completion, totals[2] + cached]
                extra = {k: tokens[k] for k in ("thoughts", "tool", "total") if k in tokens}
                metrics = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "cached_tokens": cached,
                    "extra": extra or None,
                }
            calls = [c for c in message.get("toolCalls") or () if isinstance(c, dict)]
            builder.add_agent(
                text,
                tool_calls=[
                    {
                        "tool_call_id": str(c.get("id") or ""),
                        "function_name": str(c.get("name") or "unknown"),
                        "arguments": as_args(c.get("args")),
                    }
                    for c in calls
                ],
                reasoning=_thoughts(message.get("thoughts")),
                metrics={k: v for k, v in metrics.items() if v is not None} if metrics else None,
                model_name=message.get("model") if isinstance(message.get("model"), str) else None,
                timestamp=ts,
            )
            step = builder.steps[-1]
            results = []
            for call, recorded in zip(calls, step.tool_calls or (), strict=True):
                results.append(
                    {
                        "source_call_id": recorded.tool_call_id,
                        "content": _call_output(call),
                        "extra": {"status": call.get("status")},
                    }
                )
            if results:
                builder.add_observation(results, step_id=step.step_id)
            if not calls and text:
                final = text
        elif kind in ("error", "warning"):
            if kind == "error":
                errors.append(text)
            builder.add_system(text, timestamp=ts, extra={"gemini_type": kind})
        elif kind == "info" and text:
            builder.add_system(text, timestamp=ts, extra={"gemini_type": kind})
    if not builder.steps:
        raise TrajectoryError("the session has no messages", label)
    usage = (
        Usage(input_tokens=totals[0], output_tokens=totals[1], cached_tokens=totals[2], source="harness")
        if saw_tokens
        else None
    )
    trajectory = builder.finish(notes="Converted by skillworks from a saved Gemini CLI session; tokens per call.")
    return ConvertedLog(trajectory, None, usage, errors, final, 0)


def _load(session: Path | str | dict[str, Any], label: str) -> Any:
    if isinstance(session, dict):
        return session
    try:
        text = session.read_text(encoding="utf-8") if isinstance(session, Path) else session
    except OSError as exc:
        raise TrajectoryError(f"cannot read: {exc}", label) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrajectoryError(f"not valid JSON: {exc.msg} at line {exc.lineno}", label) from None


def _timestamp(value: Any) -> str | None:
    return ms_to_iso(value) if isinstance(value, str) else None


def _thoughts(value: Any) -> str | None:
    parts = []
    for t in value or ():
        if isinstance(t, dict):
            subject, description = t.get("subject"), t.get("description")
            parts.append(
                "\n".join(str(x) for x in (f"**{subject}**" if subject else None, description) if x is not None)
            )
    text = "\n\n".join(p for p in parts if p)
    return text or None


def _call_output(call: dict[str, Any]) -> str:
    """The text the tool returned: its functionResponse output (or error), else the display text."""
    outputs = []
    for item in call.get("result") or ():
        response = obj(obj(obj(item).get("functionResponse")).get("response"))
        if "output" in response:
            outputs.append(as_text(response["output"]))
        elif "error" in response:
            outputs.append(as_text(response["error"]))
    if outputs:
        return "\n".join(outputs)
    display = call.get("resultDisplay")
    return display if isinstance(display, str) else ""
