"""The compiled-skill server entry in each CLI's own MCP configuration format (merged into its config file)."""

from __future__ import annotations

import json
import tomllib

from skillworks.agents.harness.mcp_config import mcp_config
from skillworks.agents.harness.specs import HARNESS_SPECS

ARGV = ["/venv/bin/python", "-I", "-m", "skillworks.cli.main", "serve-skills", "/home/agent/.skillworks/compiled"]


def test_each_format_holds_the_server_and_keeps_the_cli_config() -> None:
    codex = tomllib.loads(mcp_config("codex", "skillworks", ARGV, 'model = "m"\n'))
    assert codex["model"] == "m" and codex["mcp_servers"]["skillworks"]["command"] == ARGV[0]
    assert codex["mcp_servers"]["skillworks"]["args"] == ARGV[1:] and codex["mcp_servers"]["skillworks"]["required"]
    claude = json.loads(mcp_config("claude_code", "skillworks", ARGV, None))
    assert claude["mcpServers"]["skillworks"] == {"type": "stdio", "command": ARGV[0], "args": ARGV[1:]}
    gemini = json.loads(mcp_config("gemini_cli", "skillworks", ARGV, '{"telemetry": {"enabled": false}}'))
    assert gemini["telemetry"] == {"enabled": False} and gemini["mcpServers"]["skillworks"]["args"] == ARGV[1:]
    opencode = json.loads(mcp_config("opencode", "skillworks", ARGV, '{"model": "x"}'))
    assert opencode["model"] == "x" and opencode["mcp"]["skillworks"]["command"] == ARGV


def test_which_harnesses_can_get_compiled_skills() -> None:
    wired = sorted(name for name, spec in HARNESS_SPECS.items() if spec.mcp is not None)
    assert wired == ["claude-code", "codex", "gemini-cli", "opencode"]
