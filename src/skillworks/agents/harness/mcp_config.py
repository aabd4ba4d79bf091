"""The one MCP server entry (a stdio command) in each CLI's own configuration format.

Formats (checked against the pinned versions, see the specs):
- Claude Code: a JSON file `{"mcpServers": {name: {"type": "stdio", "command", "args"}}}` given with
  `--mcp-config FILE --strict-mcp-config` (no other server is loaded);
- Codex: a `[mcp_servers.<name>]` table (command, args, timeouts, `required`) in its config.toml; it sends the
  server's tools as a Responses `namespace` group `mcp__<name>` (the gateway names them `mcp__<name>__<tool>`);
- Gemini CLI: `mcpServers.<name>` (command, args, timeout in ms, trust) in ~/.gemini/settings.json;
- OpenCode: `mcp.<name>` (`type: local`, command as one argv list, timeout in ms) in its opencode.json.
The entry is merged into the spec's own config file when both have the same path.
"""

from __future__ import annotations

import json
from typing import Any

from skillworks.agents.harness.spec import McpFormat

START_TIMEOUT_SEC = 120  # the server is a Python interpreter importing the MCP SDK: seconds on a busy machine
TOOL_TIMEOUT_SEC = 300  # an operator may run a long script


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _json_object(existing: str | None, what: str) -> dict[str, Any]:
    if not existing:
        return {}
    data = json.loads(existing)
    if not isinstance(data, dict):
        raise ValueError(f"{what}: the CLI's config file is not a JSON object")
    return data


def mcp_config(fmt: McpFormat, name: str, argv: list[str], existing: str | None) -> str:
    """The CLI's config file content (`existing` plus the server `name` started with `argv`)."""
    command, args = argv[0], argv[1:]
    if fmt == "codex":
        table = [
            f"[mcp_servers.{name}]",
            f"command = {_toml_string(command)}",
            f"args = [{', '.join(_toml_string(a) for a in args)}]",
            f"startup_timeout_sec = {START_TIMEOUT_SEC}",
            f"tool_timeout_sec = {TOOL_TIMEOUT_SEC}",
            # checked against 0.169.0: without it the first model request leaves before a slow-starting server's
            # tools are listed (they reach the model from the second turn on); with it `codex exec` waits for
            # the server, and fails when it cannot start instead of running without it
            "required = true",
        ]
        head = (existing or "").rstrip("\n")
        return (head + "\n\n" if head else "") + "\n".join(table) + "\n"
    data = _json_object(existing, fmt)
    if fmt == "claude_code":
        data.setdefault("mcpServers", {})[name] = {"type": "stdio", "command": command, "args": args}
    elif fmt == "gemini_cli":
        data.setdefault("mcpServers", {})[name] = {
            "command": command,
            "args": args,
            "timeout": TOOL_TIMEOUT_SEC * 1000,
            "trust": True,  # skillworks sandboxes the run; the CLI runs in --approval-mode yolo anyway
        }
    else:  # opencode
        data.setdefault("mcp", {})[name] = {
            "type": "local",
            "command": argv,
            "enabled": True,
            "timeout": START_TIMEOUT_SEC * 1000,
        }
    return json.dumps(data, indent=2) + "\n"
