"""Gemini CLI (`gemini -p`): Google generateContent to the gateway, skills in ~/.gemini/skills.

Checked against 0.61.0 on this machine: GOOGLE_GEMINI_BASE_URL points the SDK at the gateway
(POST /v1beta/models/<model>:streamGenerateContent?alt=sse); headless mode needs
`security.auth.selectedType = gemini-api-key` in ~/.gemini/settings.json. Skills under $HOME/.gemini/skills
are offered through the `activate_skill` tool; `gemini skills list` prints what it discovered. MCP servers
(`mcpServers` in settings.json) reach the model as `mcp_<server>_<tool>`.
"""

from __future__ import annotations

from skillworks.agents.harness.spec import ConfigFile, HarnessSpec, ListedSkills, McpWiring, NpmInstall
from skillworks.agents.harness.specs._common import COMMON_ERRORS

_SETTINGS = """\
{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}
"""

GEMINI_CLI = HarnessSpec(
    name="gemini-cli",
    display_name="Gemini CLI",
    install=NpmInstall(package="@google/gemini-cli", version="0.61.0", bin="gemini"),
    skills_subdir=".gemini/skills",
    api="gemini",
    default_model="gemini-2.5-pro",
    env={
        "GEMINI_API_KEY": "${api_key}",
        "GOOGLE_GEMINI_BASE_URL": "${gateway_url}",
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "NO_COLOR": "1",
    },
    config_files=[ConfigFile(path=".gemini/settings.json", content=_SETTINGS)],
    command=[
        "-p",
        "${instruction}",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "yolo",
        "--skip-trust",
        "-m",
        "${model}",
    ],
    converter="gemini-cli",
    listed_skills=ListedSkills(
        source="command", args=["skills", "list"], pattern=r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*) \[Enabled\]"
    ),
    collect=[".gemini/tmp"],
    mcp=McpWiring(config_path=".gemini/settings.json", format="gemini_cli"),  # compiled skills: mcpServers
    error_patterns=[*COMMON_ERRORS],
    docs="gemini --help (0.61.0); skills: https://geminicli.com/docs/cli/skills",
)
