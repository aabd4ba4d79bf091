"""The scripted provider's file format (YAML or JSON) and its loader.

A script is either a list of assistant turns, or ``{by_task: {<key>: [turns]}, default: [turns]}`` where a
key is a task id or ``<task id>@<condition>`` (the latter wins, so one script can play each condition).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from skillworks.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = sorted(cls.model_fields)
            for key in data:
                if key not in cls.model_fields:
                    raise ValueError(f"unknown key {key!r} (allowed: {', '.join(allowed)})")
        return data


class ScriptToolCall(_Strict):
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptUsage(_Strict):
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int = Field(default=0, ge=0)


class ScriptExpect(_Strict):
    last_user_contains: str | None = None
    system_contains: str | None = Field(default=None, description="the request's system part contains this")
    tool_result_contains: str | None = None
    has_tool: str | None = None
    max_tokens: int | None = Field(default=None, description="the output limit the provider got is exactly this")
    reasoning_effort: str | None = Field(default=None, description="the reasoning effort the provider got is this")
    reasoning_carried: bool = Field(
        default=False,
        description="every signed thinking block this trial's earlier turns produced is sent back unchanged "
        "(as Anthropic requires for extended thinking with tool use), or its signature alone (Gemini thought "
        "signatures: a client may drop the thought summaries but must send the signature back)",
    )


class ScriptFail(_Strict):
    status: int = Field(ge=400, le=599, description="HTTP status the fake provider answers with")
    times: int = Field(default=1, ge=1, description="attempts that fail before the turn succeeds")
    retry_after: float | None = Field(default=None, ge=0)
    message: str | None = None


class ScriptTurn(_Strict):
    text: str | None = None
    thinking: str | None = Field(
        default=None, description="reasoning the fake model emits first, as a signed thinking block"
    )
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)
    usage: ScriptUsage | None = None
    cost_usd: float | None = Field(default=None, ge=0)
    expect: ScriptExpect | None = None
    fail: ScriptFail | None = None
    malformed: bool = False
    delay_sec: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _has_content(self) -> ScriptTurn:
        if self.text is None and not self.tool_calls and not self.malformed:
            raise ValueError("a turn needs `text` or `tool_calls` (or `malformed: true`)")
        return self


class Script(_Strict):
    by_task: dict[str, list[ScriptTurn]] = Field(default_factory=dict)
    default: list[ScriptTurn] | None = None
    source: str | None = Field(default=None, description="file the script was loaded from")

    def turns_for(self, task_id: str | None) -> list[ScriptTurn] | None:
        """Turns for a trial keyed `<task>@<condition>`: that exact key, else `<task>`, else `default`."""
        if task_id is not None:
            for key in (task_id, task_id.rsplit("@", 1)[0]):
                if key in self.by_task:
                    return self.by_task[key]
        return self.default


def _format_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    parts: list[str] = []
    for p in first["loc"]:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        else:
            parts.append(("." if parts else "") + str(p))
    where = "".join(parts)
    msg = first["msg"].removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg


def parse_script(data: Any, source: str | Path) -> Script:
    """Validate parsed YAML/JSON data as a Script; errors are UserErrors naming the source."""
    if isinstance(data, list):
        data = {"default": data}
    if not isinstance(data, dict):
        raise UserError("a script is a list of turns or a mapping with `by_task` / `default`", source)
    if "source" in data:
        raise UserError("unknown key 'source' (allowed: by_task, default)", source)
    try:
        script = Script.model_validate({**data, "source": str(source)})
    except ValidationError as exc:
        raise UserError(_format_error(exc), source) from None
    if not script.default and not script.by_task:
        raise UserError("the script has no turns", source)
    return script


def load_script(path: str | Path) -> Script:
    """Read a script file (.yaml, .yml or .json)."""
    path = Path(path)
    if not path.is_file():
        raise UserError("script file not found", path)
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        raise UserError(f"not valid {kind}: {' '.join(str(exc).split())}", path) from None
    return parse_script(data, path)
