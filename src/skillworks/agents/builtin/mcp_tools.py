"""MCP tools for the builtin agent: the tools of an MCP server, offered to the model as functions and called
through the official MCP client. Under the `compiled` condition that server is the compiled-skill runtime,
connected in-process, with operators executing in the trial's sandbox."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from skillworks.sandbox.base import Sandbox


class McpTools:
    def __init__(self, client: Any, tools: list[Any], log_path: Path | None = None) -> None:
        self.client = client
        self.names = {t.name for t in tools}
        self.definitions: list[dict[str, Any]] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema},
            }
            for t in tools
        ]
        self.log_path = log_path

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.client.call_tool(name, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        if self.log_path is not None:
            with self.log_path.open("a") as fh:
                fh.write(json.dumps({"tool": name, "arguments": arguments, "result": result.structured_content}) + "\n")
        return text


async def open_mcp_tools(
    tools: list[dict[str, Any]], sandbox: Sandbox, stack: AsyncExitStack, log_dir: Path
) -> McpTools | None:
    """Connect the MCP servers the condition's skill source asked for (today: compiled skills)."""
    from skillworks.compile.source import compiled_tool, open_compiled_runtime

    compiled = compiled_tool(tools)
    if compiled is None:
        return None
    from mcp import Client

    from skillworks.compile.mcp_server import build_server

    runtime = await open_compiled_runtime(compiled, sandbox)
    client = await stack.enter_async_context(Client(build_server(runtime)))
    listed = (await client.list_tools()).tools
    return McpTools(client, listed, log_dir / "mcp-calls.jsonl")
