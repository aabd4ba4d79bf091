"""OpenHands CLI (`openhands --headless --json`, PyPI `openhands`): OpenAI Chat Completions to the gateway
through LiteLLM, skills in ~/.openhands/skills.

Checked against 1.16.0 (SDK 1.21.0) on this machine: it needs Python 3.12 (its own venv); with
`--override-with-envs` it takes LLM_MODEL / LLM_BASE_URL / LLM_API_KEY; `--headless` auto-approves actions.
Skills under $HOME/.openhands/skills are listed in its system prompt (`<available_skills>`) and loaded with
the `invoke_skill` tool; the system prompt is the first event of the conversation it saves under
~/.openhands/conversations/, which is where the listed skills are read from. At start it tries to clone a
public skills repository from GitHub (hard-coded: the CLI has no option for it); without network that fails
and it carries on, with network the skills it fetched are listed with the staged ones. harness_skills=false
points that clone at a path that does not exist through git's own configuration (GIT_CONFIG_COUNT/KEY/VALUE,
git >= 2.31, an `insteadOf` rewrite of the repository's URL), so it fails at once, network or not.
"""

from __future__ import annotations

from skillworks.agents.harness.spec import HarnessSpec, ListedSkills, PipInstall
from skillworks.agents.harness.specs._common import COMMON_ERRORS

PUBLIC_SKILLS_REPO = "https://github.com/OpenHands/extensions"  # openhands.sdk.skills.skill.PUBLIC_SKILLS_REPO
_NOWHERE = "/nonexistent/skillworks-no-public-skills"

OPENHANDS = HarnessSpec(
    name="openhands",
    display_name="OpenHands CLI",
    install=PipInstall(package="openhands", version="1.16.0", bin="openhands", python="3.12"),
    skills_subdir=".openhands/skills",
    api="openai_chat",
    default_model="skillworks-model",
    env={
        "LLM_MODEL": "openai/${model}",
        "LLM_BASE_URL": "${gateway_url}/v1",
        "LLM_API_KEY": "${api_key}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENHANDS_SUPPRESS_BANNER": "1",
        "NO_COLOR": "1",
    },
    command=["--headless", "--json", "--override-with-envs", "--exit-without-confirmation", "-t", "${instruction}"],
    converter="openhands",
    listed_skills=ListedSkills(
        source="files",
        glob=".openhands/conversations/*/events/event-00000-*.json",
        pattern=r"<skill>(?:\\n|\s)*<name>(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)</name>",
    ),
    # its conversations, and the public skills it fetched, when it could (their hashes go into skills.json)
    collect=[".openhands/conversations", ".openhands/cache/skills/public-skills/skills"],
    bundled_skills_off_env={
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.file://{_NOWHERE}.insteadOf",
        "GIT_CONFIG_VALUE_0": PUBLIC_SKILLS_REPO,
    },
    harness_skills_origin=f"fetched by {{name}} {{version}} from {PUBLIC_SKILLS_REPO} at start",
    error_patterns=[*COMMON_ERRORS],
    docs="openhands --help (1.16.0); skills: https://docs.openhands.dev/overview/skills",
)
