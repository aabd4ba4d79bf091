"""The boundary contract: a compiled skill's public interface (SkillSmith), one JSON file per skill.

It says what kind of help the skill gives (guidance, adapter, typed operator, solver-like), which
operators it offers with their input/output schemas and where each comes from in the package (file and
line span), its risks and the policy the runtime applies, how well it was validated, and a lossless
fallback: a capsule of the original package (every asset with its hash, the text in chunks) so nothing
of the raw skill is lost. `contract_json_schema()` is the published JSON schema of the file.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
CONTRACT_FILE = "contract.json"
CAPSULE_DIR = "capsule"

Shape = Literal["workflow", "dispatcher", "reference", "insufficient"]
ContractType = Literal["guidance", "adapter", "typed-operator", "solver-like"]
ValidationLevel = Literal["none", "structural", "validated"]
RiskFlag = Literal["destructive", "network", "privileged", "writes-files", "installs-packages"]
StepType = Literal["script", "command", "instruction", "check"]
ParamType = Literal["string", "path", "number", "integer", "boolean"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceRef(_Model):
    """Where something came from: a file of the package and a 1-based inclusive line span."""

    file: str
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)


class AssetRecord(_Model):
    path: str = Field(description="POSIX path relative to the skill root")
    type: str = Field(description="inferred type: script, reference, asset, other (SKILL.md: skill)")
    size: int = Field(ge=0)
    sha256: str


class Evidence(_Model):
    """One structural feature and what it contributed to the shape decision."""

    feature: str
    value: float
    supports: Shape | None = Field(default=None, description="the shape this feature counts towards")
    note: str = ""
    source: SourceRef | None = None


class Param(_Model):
    name: str
    type: ParamType = "string"
    required: bool = True
    flag: str | None = Field(default=None, description="CLI flag (e.g. --summary); None for a positional")
    description: str = ""
    default: str | None = None


class Execution(_Model):
    """How an operator or step runs: a bundled script with arguments, or a shell command template whose
    `{param}` placeholders are filled with shell-quoted inputs."""

    kind: Literal["script", "command"]
    interpreter: str | None = Field(default=None, description="python3, bash, node ... (scripts)")
    script: str | None = Field(default=None, description="path of the script in the package")
    template: str | None = Field(default=None, description="command template (commands)")
    shell_checked: bool = Field(default=False, description="the command parsed with `bash -n`")


class Operator(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    summary: str
    params: list[Param] = Field(default_factory=list)
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    execution: Execution
    risks: list[RiskFlag] = Field(default_factory=list)
    risk_evidence: list[str] = Field(
        default_factory=list, description="what raised each risk flag (`network: scripts/x.py line 12: httpx.get`)"
    )
    cacheable: bool = False
    source: SourceRef


class Step(_Model):
    id: str
    name: str
    type: StepType
    execution: Execution | None = None
    operator: str | None = Field(default=None, description="the operator that runs this step, if any")
    inputs: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    depends_on: list[str] = Field(default_factory=list)
    risks: list[RiskFlag] = Field(default_factory=list)
    risk_evidence: list[str] = Field(
        default_factory=list, description="what raised each risk flag (`network: scripts/x.py line 12: httpx.get`)"
    )
    cacheable: bool = False
    source: SourceRef


class StepGraph(_Model):
    steps: list[Step]
    valid: bool
    problems: list[str] = Field(default_factory=list)


class Section(_Model):
    id: str
    title: str
    level: int
    tokens: int
    source: SourceRef


class Chunk(_Model):
    file: str
    line_start: int
    line_end: int
    text: str


class Capsule(_Model):
    """The lossless fallback: the original package (files kept beside the contract, under `capsule/`)."""

    package_hash: str
    assets: list[AssetRecord]
    chunks: list[Chunk]


class Policy(_Model):
    action: Literal["execute", "guide-only"] = Field(
        description="execute: the runtime runs operators; guide-only: it only answers with guidance"
    )
    selection: str = Field(description="when an agent should select this skill (the skill's description)")
    risky: Literal["block", "confirm"] = Field(
        default="confirm",
        description="an operator with a risk flag is blocked (block) or runs only with confirm=true (confirm)",
    )
    network: Literal["block", "confirm"] = Field(
        default="confirm", description="an operator that uses the network runs only with confirm=true, or never"
    )


class IOContract(_Model):
    inputs: list[str] = Field(default_factory=list, description="inputs the skill needs from the task")
    outputs: list[str] = Field(default_factory=list, description="what the skill produces")


class CompileStats(_Model):
    compiler_version: str
    compile_sec: float
    judge_model: str | None = None
    judge_shape: Shape | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


class BoundaryContract(_Model):
    schema_version: int = SCHEMA_VERSION
    skill: str
    description: str
    package_hash: str
    shape: Shape
    type: ContractType
    summary: str = Field(description="one-paragraph boundary summary shown with the skill's handle")
    evidence: list[Evidence]
    operators: list[Operator] = Field(default_factory=list)
    bindings: dict[str, SourceRef] = Field(
        default_factory=dict, description="operator or step id -> where it came from in the package"
    )
    graph: StepGraph | None = None
    sections: list[Section] = Field(default_factory=list)
    io: IOContract = Field(default_factory=IOContract)
    risks: list[RiskFlag] = Field(default_factory=list)
    validation_level: ValidationLevel
    policy: Policy
    diagnostics: list[str] = Field(default_factory=list)
    fallback: Capsule
    compile: CompileStats


def contract_json_schema() -> dict[str, Any]:
    """The published JSON schema of contract.json."""
    return BoundaryContract.model_json_schema()
