"""The declarative description of an agent CLI ("harness"): how to install it, where it reads skills,
how to point it at the trial's gateway, the headless command line and how to read its output.

One small spec per CLI (see ``specs/``); one generic runner (``runner.py``) executes any of them.
String values may use ``${name}`` placeholders (``string.Template``), filled per trial:

  gateway_url  base URL of the trial's gateway inside the sandbox (e.g. http://127.0.0.1:4141)
  model        the model id the CLI sends (the gateway answers with its configured model whatever it is)
  instruction  the task instruction
  workdir      the task's workspace inside the sandbox
  home         $HOME inside the sandbox
  api_key      a placeholder key (the gateway holds the real credentials)
"""

from __future__ import annotations

import re
from string import Template
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ErrorCategory = Literal["auth", "rate_limit", "context_overflow", "timeout"]
PLACEHOLDERS = frozenset({"gateway_url", "model", "instruction", "workdir", "home", "api_key"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_template(value: str) -> str:
    for match in Template.pattern.finditer(value):
        name = match.group("named") or match.group("braced")
        if name is not None and name not in PLACEHOLDERS:
            raise ValueError(f"unknown placeholder ${{{name}}} (allowed: {', '.join(sorted(PLACEHOLDERS))})")
    return value


class NpmInstall(_Strict):
    """An npm package pinned to one version; `bin` is its executable under node_modules/.bin."""

    kind: Literal["npm"] = "npm"
    package: str = Field(description="npm package name, e.g. @anthropic-ai/claude-code")
    version: str = Field(description="pinned version, e.g. 2.1.328")
    bin: str = Field(description="executable name in node_modules/.bin")
    needs_node: bool = Field(default=True, description="the executable is a node script (node must be visible)")


class PipInstall(_Strict):
    """A PyPI package pinned to one version, installed into its own venv; `bin` is its console script."""

    kind: Literal["pip"] = "pip"
    package: str = Field(description="PyPI package name, e.g. openhands")
    version: str
    bin: str = Field(description="console script in the venv's bin/")
    python: str = Field(default="3.12", description="major.minor of the interpreter the venv needs")


class ConfigFile(_Strict):
    """A file written into the sandbox's $HOME before the CLI starts (e.g. the provider config)."""

    path: str = Field(description="path relative to $HOME, e.g. .codex/config.toml")
    content: str = Field(description="file content; ${placeholders} are filled per trial")

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError("config file paths are relative to $HOME, without '..'")
        return value

    @field_validator("content")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        return _check_template(value)


McpFormat = Literal["claude_code", "codex", "gemini_cli", "opencode"]


class McpWiring(_Strict):
    """How the CLI is given one stdio MCP server (the compiled-skill runtime under the `compiled` condition):
    an entry in its own MCP configuration, in `format`, written to `config_path` (merged into the spec's own
    config file of that path when there is one), plus `args` appended to the command and `env` set."""

    config_path: str = Field(description="path relative to $HOME, e.g. .codex/config.toml")
    format: McpFormat
    args: list[str] = Field(default_factory=list, description="appended to the command (${placeholders} filled)")
    env: dict[str, str] = Field(default_factory=dict, description="e.g. the CLI's MCP start-up timeout")

    @field_validator("config_path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError("MCP config paths are relative to $HOME, without '..'")
        return value

    @field_validator("args")
    @classmethod
    def _placeholders(cls, value: list[str]) -> list[str]:
        return [_check_template(text) for text in value]


class ErrorPattern(_Strict):
    """A regex over the CLI's stderr, error events and final message that names a typed error."""

    category: ErrorCategory
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value


class ListedSkills(_Strict):
    """Where the CLI itself says which skills it found.

    - `events`: the converter reads them from the event log (Claude Code's init event);
    - `command`: run the CLI with `args` (e.g. `skills list`) before the task and parse its stdout;
    - `files`: parse files the CLI wrote under $HOME matching `glob` (e.g. Codex's session log).
    `parse`: `regex` (named group `name`, every match) or `json` (a list of objects with `name`).
    """

    source: Literal["events", "command", "files"]
    args: list[str] = Field(default_factory=list)
    glob: str | None = None
    parse: Literal["regex", "json"] = "regex"
    pattern: str | None = None

    @field_validator("pattern")
    @classmethod
    def _named_group(cls, value: str | None) -> str | None:
        if value is not None and "name" not in re.compile(value).groupindex:
            raise ValueError("the pattern needs a named group (?P<name>...)")
        return value


class HarnessSpec(_Strict):
    """Everything skillworks needs to run one agent CLI headless inside a sandbox."""

    name: str = Field(description="agent name on the command line, e.g. claude-code")
    display_name: str
    install: NpmInstall | PipInstall = Field(discriminator="kind")
    version_args: list[str] = Field(default_factory=lambda: ["--version"])
    version_pattern: str = Field(default=r"(\d+\.\d+\.\d+(?:[-.][0-9A-Za-z.]+)?)")
    skills_subdir: str = Field(description="where the CLI discovers skills, relative to $HOME")
    api: Literal["anthropic_messages", "openai_responses", "openai_chat", "gemini"] = Field(
        description="wire format the CLI speaks to the gateway"
    )
    default_model: str = Field(description="model id the CLI sends when the gateway's model has no usable name")
    env: dict[str, str] = Field(default_factory=dict, description="environment of the CLI (gateway, telemetry off)")
    config_files: list[ConfigFile] = Field(default_factory=list)
    command: list[str] = Field(description="argv after the executable; ${instruction} is one argument")
    converter: str = Field(description="key of skillworks.trajectory.CONVERTERS for the stdout event log")
    listed_skills: ListedSkills | None = None
    bundled_skills_off_env: dict[str, str] = Field(
        default_factory=dict,
        description="environment that turns the CLI's bundled skills off (--agent-option harness_skills=false); "
        "empty when the CLI has no such switch",
    )
    bundled_skills_off_args: list[str] = Field(
        default_factory=list,
        description="arguments (before the spec's command) that turn the CLI's bundled skills off; empty when none",
    )
    harness_skills_origin: str = Field(
        default="bundled with {name} {version}",
        description="where the skills the CLI lists beyond the staged ones come from (skills.json `origin`); "
        "{name} and {version} are filled in",
    )
    host_tools: list[str] = Field(
        default_factory=list,
        description="host executables the CLI needs inside any image (e.g. rg), mounted with their libraries",
    )
    collect: list[str] = Field(
        default_factory=list, description="paths under $HOME copied to <trial>/agent/home/ after the run"
    )
    mcp: McpWiring | None = Field(
        default=None, description="how the CLI gets an MCP server (compiled skills); None: it cannot get one"
    )
    error_patterns: list[ErrorPattern] = Field(default_factory=list)
    docs: str = Field(default="", description="where the skills path and flags were checked")

    @field_validator("env")
    @classmethod
    def _env_placeholders(cls, value: dict[str, str]) -> dict[str, str]:
        return {key: _check_template(text) for key, text in value.items()}

    @field_validator("command")
    @classmethod
    def _command_placeholders(cls, value: list[str]) -> list[str]:
        return [_check_template(text) for text in value]

    @property
    def version(self) -> str:
        return self.install.version


def render(value: str, values: dict[str, str]) -> str:
    """Fill ${placeholders}; `$$` is a literal dollar sign."""
    return Template(value).substitute(values)


def classify_error(spec: HarnessSpec, text: str) -> ErrorCategory | None:
    """The first error category whose pattern matches `text`, if any."""
    for pattern in spec.error_patterns:
        if re.search(pattern.pattern, text, flags=re.IGNORECASE | re.MULTILINE):
            return pattern.category
    return None
