"""The task config schema shared by `task.md` frontmatter (schema_version 1.3) and Harbor `task.toml`.

Section names follow the published standard: `sandbox` (Harbor and the paper spell it
`environment`), `oracle` (Harbor: `solution`). Models are strict; the Harbor loader strips and
records keys it does not know before validating (Harbor itself ignores unknown keys)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillworks.errors import TaskError
from skillworks.tasks.layout import parse_size_mb
from skillworks.tasks.model import NetworkMode, NetworkPolicy, Resources

_STRICT = ConfigDict(extra="forbid", populate_by_name=True)
PositiveSeconds = float


class Author(BaseModel):
    model_config = _STRICT

    name: str
    email: str | None = None


class TaskInfo(BaseModel):
    """The `task` section: package identity."""

    model_config = _STRICT

    name: str = Field(description="package name, usually org/name")
    version: str | None = None
    description: str = ""
    authors: list[Author] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class AgentConfig(BaseModel):
    model_config = _STRICT

    timeout_sec: float | None = Field(default=None, gt=0)
    user: str | int | None = None


class VerifierConfig(BaseModel):
    model_config = _STRICT

    type: Literal["test-script", "llm-judge"] = "test-script"
    timeout_sec: float = Field(default=600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    service: str | None = None
    judge: dict[str, Any] | None = None
    pytest_plugins: list[str] = Field(default_factory=list)
    isolation: Literal["fresh", "shared"] = Field(
        default="fresh",
        description="fresh: the verifier runs in a new sandbox from the task's image with the agent's outputs "
        "copied in; shared: in the agent's own sandbox (for tasks that check services or system state)",
    )
    inputs: list[str] = Field(
        default_factory=list,
        description="absolute paths the agent writes outside the workdir that the verifier needs (copied too)",
    )


class SandboxConfig(BaseModel):
    """The runtime section (`sandbox`, or `[environment]` in task.toml)."""

    model_config = _STRICT

    build_timeout_sec: float = Field(default=600.0, gt=0)
    docker_image: str | None = None
    os: str | None = None
    workdir: str | None = None
    cpus: float | None = Field(default=None, gt=0)
    memory_mb: int | None = Field(default=None, gt=0)
    storage_mb: int | None = Field(default=None, gt=0)
    memory: str | None = Field(default=None, description="deprecated Harbor size string, e.g. '4G'")
    storage: str | None = Field(default=None, description="deprecated Harbor size string, e.g. '10G'")
    gpus: int = Field(default=0, ge=0)
    gpu_types: list[str] | None = None
    allow_internet: bool | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    skills_dir: str | None = None

    @model_validator(mode="after")
    def _network_consistent(self) -> SandboxConfig:
        if self.network_mode == "allowlist" and not [h for h in self.allowed_hosts if h.strip()]:
            raise ValueError("network_mode 'allowlist' requires a non-empty allowed_hosts list")
        if self.allowed_hosts and self.network_mode != "allowlist":
            raise ValueError("allowed_hosts is only valid with network_mode 'allowlist'")
        if self.allow_internet is not None and self.network_mode is not None:
            implied = "public" if self.allow_internet else "no-network"
            if self.network_mode != implied and not (self.allow_internet and self.network_mode == "allowlist"):
                raise ValueError(
                    f"allow_internet = {str(self.allow_internet).lower()} contradicts "
                    f"network_mode {self.network_mode!r}; keep only network_mode"
                )
        if self.memory is not None and self.memory_mb is not None:
            raise ValueError("both 'memory' and 'memory_mb' are set; keep only memory_mb")
        if self.storage is not None and self.storage_mb is not None:
            raise ValueError("both 'storage' and 'storage_mb' are set; keep only storage_mb")
        return self

    def network_policy(self) -> NetworkPolicy:
        """network_mode if given, else allow_internet (true -> public, false -> no-network),
        else `public`: the standard's (and Harbor's) default is allow_internet = true."""
        if self.network_mode is not None:
            mode: NetworkMode = self.network_mode
        elif self.allow_internet is False:
            mode = "no-network"
        else:
            mode = "public"
        hosts = tuple(h.strip() for h in self.allowed_hosts if h.strip())
        return NetworkPolicy(mode=mode, allowed_hosts=hosts if mode == "allowlist" else ())

    @property
    def network_declared(self) -> bool:
        return self.network_mode is not None or self.allow_internet is not None

    def resources(self, path: Path) -> Resources:
        memory_mb = self.memory_mb
        if self.memory is not None:
            memory_mb = parse_size_mb(self.memory, path, "memory")
        storage_mb = self.storage_mb
        if self.storage is not None:
            storage_mb = parse_size_mb(self.storage, path, "storage")
        return Resources(cpus=self.cpus, memory_mb=memory_mb, storage_mb=storage_mb)


class OracleConfig(BaseModel):
    model_config = _STRICT

    env: dict[str, str] = Field(default_factory=dict)


class TaskConfig(BaseModel):
    """Harbor-compatible config keys (schema_version 1.x)."""

    model_config = _STRICT

    schema_version: str | None = None
    task: TaskInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    oracle: OracleConfig = Field(default_factory=OracleConfig)
    source: str | None = None
    artifacts: list[Any] | None = None
    steps: list[Any] | None = None
    multi_step_reward_strategy: str | None = None


class TaskDocumentConfig(TaskConfig):
    """task.md frontmatter: the config keys plus the document keys and the `benchflow:` namespace."""

    agents: dict[str, Any] | None = None
    scenes: list[Any] | None = None
    user: dict[str, Any] | None = None
    benchflow: dict[str, Any] | None = None


# Harbor's task.toml `version` ("1.0") and the task.md standard's `schema_version` (up to "1.3").
SUPPORTED_SCHEMA_VERSIONS = ("1", "1.0", "1.1", "1.2", "1.3")


def normalize_aliases(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Map `version` -> schema_version, `environment` -> sandbox, `solution` -> oracle.
    Both spellings of one key at once is an error."""
    out = dict(data)
    for alias, native in (("version", "schema_version"), ("environment", "sandbox"), ("solution", "oracle")):
        if alias in out:
            if native in out:
                raise TaskError(f"both {native!r} and {alias!r} are set; keep only {native!r}", path)
            out[native] = out.pop(alias)
    if out.get("schema_version") is not None:
        out["schema_version"] = str(out["schema_version"])
        if out["schema_version"] not in SUPPORTED_SCHEMA_VERSIONS:
            raise TaskError(
                f"schema_version {out['schema_version']!r} is not supported; "
                f"supported versions: {', '.join(SUPPORTED_SCHEMA_VERSIONS)}",
                path,
            )
    return out


def describe_keys(model: type[BaseModel]) -> list[str]:
    return sorted(model.model_fields)
