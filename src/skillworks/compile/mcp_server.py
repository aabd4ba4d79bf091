"""The runtime over MCP (official `mcp` Python SDK, low-level server): stdio and streamable HTTP.

Tools: one compact handle `run_<skill>` per compiled skill plus the fallback operators. Every call answers
the runtime's envelope as JSON text and as structured content.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillworks.compile.compiler import CompiledSkill
from skillworks.compile.runtime import SkillRuntime, SubprocessExecutor

SERVER_NAME = "skillworks-skills"


def build_server(runtime: SkillRuntime, calls_log: Path | None = None) -> Any:
    """An `mcp.server.lowlevel.Server` answering tools/list and tools/call from `runtime`; every call (tool,
    arguments, envelope) is appended to `calls_log` as one JSON line when given."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.input_schema) for t in runtime.tools()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        envelope = await runtime.call(params.name, params.arguments)
        data = envelope.model_dump(mode="json")
        if calls_log is not None:
            with calls_log.open("a") as fh:
                fh.write(json.dumps({"tool": params.name, "arguments": params.arguments, "result": data}) + "\n")
        return types.CallToolResult(
            content=[types.TextContent(text=envelope.model_dump_json(exclude_defaults=True))],  # compact for models
            structured_content=data,
            is_error=False,
        )

    from skillworks import __version__

    return Server(SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


def serve(
    skills: list[CompiledSkill], *, transport: str, host: str, port: int, workdir: Path, calls_log: Path | None = None
) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    import anyio

    server = build_server(SkillRuntime(skills, SubprocessExecutor(workdir.resolve())), calls_log)
    if transport == "http":
        import uvicorn

        uvicorn.run(server.streamable_http_app(host=host), host=host, port=port, log_level="warning")
        return

    async def run_stdio() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run_stdio)
