"""Codex CLI (`codex exec --json`): OpenAI Responses to the gateway, skills in ~/.agents/skills.

Checked against 0.169.0 on this machine: Codex ignores OPENAI_BASE_URL, so the provider goes into
~/.codex/config.toml (wire_api = "responses"). Skills under $HOME/.agents/skills appear in the request's
`<skills_instructions>` block, which Codex also writes to its session log (~/.codex/sessions/**/rollout-*.jsonl):
that log is where the listed skills are read from. Its own sandbox (landlock / user namespaces) cannot nest
inside skillworks' sandbox, so it runs with --dangerously-bypass-approvals-and-sandbox; stdin is closed.
MCP servers ([mcp_servers.<name>] in config.toml) reach the model as a Responses `namespace` tool group
`mcp__<name>`; a server still starting when the first request leaves is missing from it unless `required = true`.
"""

from __future__ import annotations

from skillworks.agents.harness.spec import ConfigFile, HarnessSpec, ListedSkills, McpWiring, NpmInstall
from skillworks.agents.harness.specs._common import COMMON_ERRORS

_CONFIG = """\
model = "${model}"
model_provider = "skillworks"
check_for_update_on_startup = false

[model_providers.skillworks]
name = "skillworks gateway"
base_url = "${gateway_url}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false
"""

CODEX = HarnessSpec(
    name="codex",
    display_name="Codex CLI",
    install=NpmInstall(package="@openai/codex", version="0.169.0", bin="codex"),
    skills_subdir=".agents/skills",
    api="openai_responses",
    default_model="gpt-5-codex",
    env={"OPENAI_API_KEY": "${api_key}", "CODEX_HOME": "${home}/.codex", "NO_COLOR": "1"},
    config_files=[ConfigFile(path=".codex/config.toml", content=_CONFIG)],
    command=[
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--color",
        "never",
        "-C",
        "${workdir}",
        "-m",
        "${model}",
        "${instruction}",
    ],
    # checked against 0.169.0: with this it neither writes its system skills nor lists them
    bundled_skills_off_args=["-c", "skills.bundled.enabled=false"],
    converter="codex",
    listed_skills=ListedSkills(
        source="files",
        glob=".codex/sessions/**/rollout-*.jsonl",
        pattern=r"\(file: r\d+/(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)/SKILL\.md\)",
    ),
    # its session logs, and the system skills it writes to $CODEX_HOME/skills/.system at start (their hashes
    # go into skills.json)
    collect=[".codex/sessions", ".codex/skills/.system"],
    mcp=McpWiring(config_path=".codex/config.toml", format="codex"),  # compiled skills: [mcp_servers.skillworks]
    error_patterns=[*COMMON_ERRORS],
    docs="codex exec --help (0.169.0); skills: https://developers.openai.com/codex/skills",
)
