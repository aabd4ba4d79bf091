"""Claude Code (`claude -p`): Anthropic Messages to the gateway, skills in ~/.claude/skills.

Checked against 2.1.328 on this machine: skills under $HOME/.claude/skills are listed in the first
stream-json event (`system/init` `skills`, together with bundled ones) and loaded with the `Skill` tool;
`--permission-mode bypassPermissions` runs tools unattended (refused for root unless IS_SANDBOX=1);
with DISABLE_TELEMETRY and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC the only requests are POST /v1/messages.
"""

from __future__ import annotations

from skillworks.agents.harness.spec import HarnessSpec, ListedSkills, McpWiring, NpmInstall
from skillworks.agents.harness.specs._common import COMMON_ERRORS

CLAUDE_CODE = HarnessSpec(
    name="claude-code",
    display_name="Claude Code",
    install=NpmInstall(package="@anthropic-ai/claude-code", version="2.1.328", bin="claude", needs_node=False),
    skills_subdir=".claude/skills",
    api="anthropic_messages",
    default_model="claude-sonnet-4-5",
    env={
        "ANTHROPIC_BASE_URL": "${gateway_url}",
        "ANTHROPIC_API_KEY": "${api_key}",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # skillworks always sandboxes the CLI: lets bypassPermissions run where the sandbox user is root
        "IS_SANDBOX": "1",
    },
    command=[
        "-p",
        "${instruction}",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "bypassPermissions",
        "--model",
        "${model}",
    ],
    # checked against 2.1.328: the CLI reads CLAUDE_CODE_DISABLE_BUNDLED_SKILLS (its init event then lists only
    # the skills found on disk)
    bundled_skills_off_env={"CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "1"},
    converter="claude-code",
    listed_skills=ListedSkills(source="events"),
    collect=[".claude/projects"],
    # compiled skills: only the skillworks server (its tools reach the model as mcp__skillworks__<tool>). Checked
    # against 2.1.328: by default it defers MCP tools behind its ToolSearch tool and, when the endpoint refuses
    # that, retries without; ENABLE_TOOL_SEARCH=false offers the few compact handles directly from the start
    mcp=McpWiring(
        config_path=".skillworks/claude-mcp.json",
        format="claude_code",
        args=["--mcp-config", "${home}/.skillworks/claude-mcp.json", "--strict-mcp-config"],
        env={"MCP_TIMEOUT": "120000", "MCP_TOOL_TIMEOUT": "300000", "ENABLE_TOOL_SEARCH": "false"},
    ),
    error_patterns=[*COMMON_ERRORS],
    docs="claude --help (2.1.328); skills: https://docs.claude.com/en/docs/claude-code/skills",
)
