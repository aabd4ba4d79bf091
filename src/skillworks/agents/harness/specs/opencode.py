"""OpenCode (`opencode run --format json`): OpenAI Chat Completions to the gateway, skills in
~/.config/opencode/skills.

Checked against 1.18.33 on this machine: a custom provider `skillworks` with the bundled
`@ai-sdk/openai-compatible` package and `options.baseURL` (nothing is downloaded); `--title` avoids the
extra title-generation request (which would race the first turn for a scripted model); `--auto` approves
tools. Skills under ~/.config/opencode/skills (its documented global path) are loaded with the `skill` tool;
`opencode debug skill` prints what it discovered as JSON. MCP servers (`mcp` in opencode.json, `type: local`)
reach the model as `<server>_<tool>`.
"""

from __future__ import annotations

from skillworks.agents.harness.spec import ConfigFile, HarnessSpec, ListedSkills, McpWiring, NpmInstall
from skillworks.agents.harness.specs._common import COMMON_ERRORS

_CONFIG = """\
{
  "$$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "skillworks/${model}",
  "small_model": "skillworks/${model}",
  "provider": {
    "skillworks": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "skillworks gateway",
      "options": {"baseURL": "${gateway_url}/v1", "apiKey": "${api_key}"},
      "models": {"${model}": {"name": "${model}", "tool_call": true}}
    }
  }
}
"""

OPENCODE = HarnessSpec(
    name="opencode",
    display_name="OpenCode",
    install=NpmInstall(package="opencode-ai", version="1.18.33", bin="opencode", needs_node=False),
    skills_subdir=".config/opencode/skills",
    api="openai_chat",
    default_model="skillworks-model",
    env={
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "NO_COLOR": "1",
    },
    config_files=[ConfigFile(path=".config/opencode/opencode.json", content=_CONFIG)],
    command=[
        "run",
        "--format",
        "json",
        "--auto",
        "--title",
        "skillworks trial",
        "-m",
        "skillworks/${model}",
        "${instruction}",
    ],
    converter="opencode",
    listed_skills=ListedSkills(source="command", args=["debug", "skill"], parse="json"),
    # its `skill` and grep tools run ripgrep, and without one on PATH it tries to download one
    host_tools=["rg"],
    # its own session record: the sqlite database (with its write-ahead files) and its logs
    collect=[
        ".local/share/opencode/storage",
        ".local/share/opencode/opencode.db",
        ".local/share/opencode/opencode.db-wal",
        ".local/share/opencode/opencode.db-shm",
        ".local/share/opencode/log",
    ],
    mcp=McpWiring(config_path=".config/opencode/opencode.json", format="opencode"),  # compiled skills: `mcp`
    error_patterns=[*COMMON_ERRORS],
    docs="opencode run --help (1.18.33); skills: its built-in customize-opencode skill, https://opencode.ai/docs/skills",
)
