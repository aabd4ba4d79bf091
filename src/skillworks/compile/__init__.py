"""Compiling skills (SkillSmith): shape classification, lowerings, the boundary contract, and the runtime
that serves compiled skills to agents over MCP."""

from skillworks.compile.classify import Classification, classify
from skillworks.compile.compiler import (
    CompiledSkill,
    CompileOutcome,
    StaleArtifactError,
    compile_skill,
    compile_to,
    load_compiled,
    load_compiled_dir,
)
from skillworks.compile.contract import BoundaryContract, contract_json_schema
from skillworks.compile.explain import explain_record, print_explain
from skillworks.compile.features import Features, extract_features

__all__ = [
    "BoundaryContract",
    "Classification",
    "CompileOutcome",
    "CompiledSkill",
    "Features",
    "StaleArtifactError",
    "classify",
    "compile_skill",
    "compile_to",
    "contract_json_schema",
    "explain_record",
    "extract_features",
    "load_compiled",
    "load_compiled_dir",
    "print_explain",
]
