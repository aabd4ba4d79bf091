"""Compile a SkillPackage into a boundary contract, and keep the artifact on disk keyed by the package hash.

Artifact layout (one directory per skill under the output directory)::

    OUT/<skill>/contract.json     the BoundaryContract
    OUT/<skill>/capsule/...       the original package, file for file (the lossless fallback)

An artifact is only ever used with the package it was compiled from: `load_compiled` re-hashes the
capsule, and `compile_to` refuses to overwrite an artifact of another package version unless told to
recompile. A stale artifact is refused with one line naming the skill.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from skillworks.compile.classify import Classification, classify
from skillworks.compile.contract import (
    CAPSULE_DIR,
    CONTRACT_FILE,
    AssetRecord,
    BoundaryContract,
    Capsule,
    Chunk,
    CompileStats,
    ContractType,
    Evidence,
    IOContract,
    Operator,
    Policy,
    RiskFlag,
    Shape,
    StepGraph,
    ValidationLevel,
)
from skillworks.compile.declaration import apply_declaration, read_declaration
from skillworks.compile.features import extract_features
from skillworks.compile.loading import read_package
from skillworks.compile.lower import chunk_text, lower_sections, lower_workflow, shell_problems
from skillworks.compile.operators import command_operators, script_operators
from skillworks.errors import UserError, first_validation_error
from skillworks.skills.package import SkillPackage, hash_directory, iter_package_files

COMPILER_VERSION = "3"  # 3: shapes from document structure, steps from step sections, data-dependency edges
_TEXT_SUFFIXES = frozenset(
    {
        ".md",
        ".txt",
        ".py",
        ".sh",
        ".bash",
        ".js",
        ".mjs",
        ".ts",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".csv",
        ".rb",
        ".pl",
        ".sql",
        ".html",
        ".xml",
        ".ini",
        ".cfg",
        "",
    }
)


if TYPE_CHECKING:
    from skillworks.compile.judge import Judgement

Judge = Callable[[SkillPackage, Classification], "Judgement"]


class StaleArtifactError(UserError):
    """A compiled artifact whose package changed since it was compiled."""


def _capsule(package: SkillPackage) -> Capsule:
    assets = [
        AssetRecord(
            path="SKILL.md",
            type="skill",
            size=(package.root / "SKILL.md").stat().st_size,
            sha256=package.skill_md_sha256,
        )
    ]
    assets += [AssetRecord(path=a.path, type=a.kind, size=a.size, sha256=a.sha256) for a in package.assets]
    chunks: list[Chunk] = []
    for record in assets:
        if Path(record.path).suffix.lower() not in _TEXT_SUFFIXES or record.size > 1_000_000:
            continue
        try:
            text = (package.root / record.path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        chunks.extend(chunk_text(record.path, text))
    return Capsule(package_hash=package.package_hash, assets=assets, chunks=chunks)


def _contract_type(shape: str, operators: list[Operator], graph: StepGraph | None) -> ContractType:
    if shape == "workflow" and graph is not None and any(s.execution for s in graph.steps):
        return "solver-like"
    if operators:
        return "typed-operator" if any(o.execution.kind == "script" for o in operators) else "adapter"
    return "guidance"


def _summary(package: SkillPackage, shape: str, operators: list[Operator], graph: StepGraph | None) -> str:
    first = package.description.split(". ")[0].rstrip(".")
    if shape == "workflow" and graph is not None:
        runnable = sum(1 for s in graph.steps if s.execution)
        return f"{first}. A {len(graph.steps)}-step workflow ({runnable} runnable step(s))."
    if shape == "dispatcher":
        return f"{first}. Operators: {', '.join(o.id for o in operators[:8])}."
    ops = f" Operators: {', '.join(o.id for o in operators[:8])}." if operators else ""
    if shape == "reference":
        return f"{first}. Reference text, searchable by section.{ops}"
    return f"{first}. Not compiled (insufficient structure): the raw package is served as is.{ops}"


def compile_skill(
    package: SkillPackage,
    judge: Judge | None = None,
    *,
    problem: str | None = None,
    shape: Shape | None = None,
) -> BoundaryContract:
    """Compile one package: deterministic and offline, unless a `judge` (an LLM through the gateway) is
    given, whose shape is used where the structural evidence is close. A package that breaks the skill spec
    (`problem`) compiles as `insufficient` with that diagnostic; its scripts are still operators. `shape`
    fixes the shape (re-deriving a contract whose shape was judged)."""
    t0 = time.perf_counter()
    feats = extract_features(package)
    decision = classify(feats)
    diagnostics: list[str] = []
    evidence = list(decision.evidence)
    if problem is not None and "does not match its directory name" in problem:  # packaging, not content
        diagnostics.append(f"skill spec: {problem}")
        problem = None
    if problem is not None:
        diagnostics.append(f"invalid skill ({problem}): compiled as insufficient")
        evidence.append(Evidence(feature="invalid_package", value=1.0, supports="insufficient", note=problem))
        decision = Classification("insufficient", decision.scores, evidence)
        judge = None
    declaration = read_declaration(package)
    if shape is None and declaration is not None and declaration.shape is not None:
        shape = declaration.shape  # the author's word wins over inference (and over a judge)
        evidence.append(
            Evidence(feature="author_declaration", value=1.0, supports=shape, note="metadata.compile.shape")
        )
        judge = None
    judgement = judge(package, decision) if judge is not None else None
    shape_fixed = shape
    shape = shape_fixed or decision.shape
    if judgement is not None:
        if judgement.shape is None:
            diagnostics.append(
                f"LLM judgement by {judgement.model} unusable ({judgement.reason}); deterministic shape kept"
            )
        else:
            used = (
                "used: the structural evidence was close" if judgement.decided else "not used: the evidence was clear"
            )
            evidence.append(
                Evidence(
                    feature="llm_judgement",
                    value=1.0 if judgement.decided else 0.0,
                    supports=judgement.shape,
                    note=f"{judgement.model} ({used}): {judgement.reason}",
                )
            )
            if judgement.decided and shape_fixed is None:
                shape = judgement.shape
    graph: StepGraph | None = None
    # every executable the package ships is an operator, whatever the shape; documented command templates
    # only where the skill is something to run (workflow, dispatcher)
    operators: list[Operator] = script_operators(package, feats)
    if shape in ("workflow", "dispatcher"):
        operators += command_operators(feats, steps=shape == "workflow")
    if declaration is not None:
        operators = apply_declaration(declaration, operators, package)
    if operators:
        missing = [
            o.execution.script
            for o in operators
            if o.execution.script and not (package.root / o.execution.script).is_file()
        ]
        diagnostics += [f"script {m} is referenced but missing" for m in missing]
        templates = [o.execution.template for o in operators if o.execution.kind == "command" and o.execution.template]
        shell = shell_problems([t for t in templates if t])
        diagnostics += shell
        checked = [
            o.model_copy(update={"execution": o.execution.model_copy(update={"shell_checked": True})})
            if o.execution.kind == "command" and not shell
            else o
            for o in operators
        ]
        operators = checked
    if shape == "workflow":
        graph = lower_workflow(package, feats, operators)
        diagnostics += graph.problems
    sections = lower_sections(package, feats)
    if shape == "insufficient" and problem is None:
        diagnostics.append(
            "insufficient structure to compile ("
            + "; ".join(e.note for e in decision.evidence if e.supports == "insufficient")
            + "): the runtime serves the raw package through the fallback operators"
            + (" and runs its scripts as operators" if operators else "")
        )
    risks: list[RiskFlag] = sorted({r for o in operators for r in o.risks})
    level: ValidationLevel
    if shape == "insufficient":
        level = "none"
    elif diagnostics:
        level = "structural"
    else:
        level = "validated" if shape in ("workflow", "dispatcher") else "structural"
    bindings = {o.id: o.source for o in operators}
    if graph is not None:
        bindings.update({s.id: s.source for s in graph.steps})
    io = IOContract(
        inputs=sorted({i for s in graph.steps for i in s.inputs}) if graph else [],
        outputs=sorted({o for s in graph.steps for o in s.outputs}) if graph else [],
    )
    return BoundaryContract(
        skill=package.name,
        description=package.description,
        package_hash=package.package_hash,
        shape=shape,
        type=_contract_type(shape, operators, graph),
        summary=_summary(package, shape, operators, graph),
        evidence=evidence,
        operators=operators,
        bindings=bindings,
        graph=graph,
        sections=sections,
        io=io,
        risks=risks,
        validation_level=level,
        policy=Policy(action="execute" if operators else "guide-only", selection=package.description),
        diagnostics=diagnostics,
        fallback=_capsule(package),
        compile=CompileStats(
            compiler_version=COMPILER_VERSION,
            compile_sec=round(time.perf_counter() - t0, 4),
            judge_model=judgement.model if judgement else None,
            judge_shape=judgement.shape if judgement else None,
            input_tokens=judgement.usage.input_tokens if judgement else 0,
            output_tokens=judgement.usage.output_tokens if judgement else 0,
            cost_usd=judgement.usage.cost_usd if judgement else None,
        ),
    )


@dataclass(frozen=True)
class CompiledSkill:
    """A loaded artifact: its contract and the directory holding the capsule."""

    contract: BoundaryContract
    root: Path

    @property
    def name(self) -> str:
        return self.contract.skill

    @property
    def capsule_dir(self) -> Path:
        return self.root / CAPSULE_DIR


def write_artifact(contract: BoundaryContract, package: SkillPackage, out_dir: Path, dest: str | None = None) -> Path:
    """Write OUT/<dest or skill>/ (contract + capsule copy) atomically enough: a fresh dir renamed into place."""
    target = out_dir / (dest or contract.skill)
    tmp = out_dir / f".{target.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / CAPSULE_DIR).mkdir(parents=True)
    for path in iter_package_files(package.root):
        copy = tmp / CAPSULE_DIR / path.relative_to(package.root)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
    (tmp / CONTRACT_FILE).write_text(contract.model_dump_json(indent=2))
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def read_contract(path: Path) -> BoundaryContract:
    try:
        return BoundaryContract.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("no compiled skill here (contract.json missing)", path.parent) from None
    except ValidationError as exc:
        raise UserError(f"not a valid boundary contract: {first_validation_error(exc)}", path) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"not a valid boundary contract: {exc}", path) from None


class TamperedArtifactError(StaleArtifactError):
    """A contract.json whose operators, steps or policy are not what its capsule compiles to."""


_SURFACE = {"shape", "type", "operators", "graph", "policy", "risks", "package_hash", "schema_version"}


def _verify_contract(contract: BoundaryContract, root: Path) -> None:
    """The contract is only a cache of what its (hash-checked) capsule compiles to: re-derive it with the same
    shape and refuse the artifact when anything that decides what runs differs (an edited template, script,
    interpreter, risk flag or policy). There is thus no digest to forge beside the file."""
    package, _ = read_package(
        root / CAPSULE_DIR, name_hint=contract.skill
    )  # the capsule's directory name never matches: tolerated
    again = compile_skill(package, shape=contract.shape)
    mine, theirs = contract.model_dump(include=_SURFACE), again.model_dump(include=_SURFACE)
    if mine != theirs:
        fields = sorted(k for k in _SURFACE if mine.get(k) != theirs.get(k))
        raise TamperedArtifactError(
            f"skill {contract.skill!r}: contract.json does not match what its capsule compiles to "
            f"({', '.join(fields)} differ; edited after compile?); recompile it",
            root / CONTRACT_FILE,
        )


def load_compiled(root: Path, source: Path | None = None) -> CompiledSkill:
    """Load OUT/<skill>/, refusing it when the capsule no longer matches the contract's package hash, or when
    `source` (the skill directory it was compiled from) has changed since."""
    contract = read_contract(root / CONTRACT_FILE)
    capsule = root / CAPSULE_DIR
    if not capsule.is_dir() or hash_directory(capsule) != contract.package_hash:
        raise StaleArtifactError(
            f"skill {contract.skill!r}: the compiled capsule does not match the contract's package hash "
            "(edited after compile); recompile it",
            root,
        )
    _verify_contract(contract, root)
    if source is not None:
        current = hash_directory(source)
        if current != contract.package_hash:
            raise StaleArtifactError(
                f"skill {contract.skill!r} changed since it was compiled (package {current[:12]}, artifact "
                f"{contract.package_hash[:12]}); run skillworks compile --recompile",
                source,
            )
    return CompiledSkill(contract, root)


def load_compiled_dir(directory: Path) -> list[CompiledSkill]:
    """Every compiled skill under `directory` (or `directory` itself when it is one)."""
    directory = Path(directory)
    if (directory / CONTRACT_FILE).is_file():
        return [load_compiled(directory)]
    if not directory.is_dir():
        raise UserError("not a directory of compiled skills", directory)
    skills = [load_compiled(p.parent) for p in sorted(directory.glob(f"*/{CONTRACT_FILE}"))]
    if not skills:
        raise UserError("no compiled skills here (no */contract.json); run skillworks compile first", directory)
    return skills


@dataclass(frozen=True)
class CompileOutcome:
    contract: BoundaryContract
    path: Path
    reused: bool


def compile_to(
    skill_dir: Path,
    out_dir: Path,
    *,
    recompile: bool = False,
    model: str | None = None,
    api_base: str | None = None,
    dest: str | None = None,
) -> CompileOutcome:
    """Compile one skill directory into OUT/<dest or skill>/. An existing artifact of the same package hash (and
    the same judge model) is reused; one of another hash (the package was edited) is refused unless `recompile`.
    A package that breaks the skill spec compiles as `insufficient` with the problem as a diagnostic.
    With `model`, the shape is also judged by that model through a gateway (log: OUT/<skill>/judge-gateway.jsonl)."""
    package, problem = read_package(Path(skill_dir))
    target = out_dir / (dest or package.name)
    if (target / CONTRACT_FILE).is_file():
        existing = read_contract(target / CONTRACT_FILE)
        same = existing.compile.compiler_version == COMPILER_VERSION and existing.compile.judge_model == model
        if existing.package_hash == package.package_hash and same:
            return CompileOutcome(existing, target, reused=True)
        if existing.package_hash != package.package_hash and not recompile:
            raise StaleArtifactError(
                f"skill {package.name!r} changed since it was compiled into {target} (package "
                f"{package.short_hash}, artifact {existing.package_hash[:12]}); pass --recompile to replace it",
                skill_dir,
            )
    out_dir.mkdir(parents=True, exist_ok=True)
    judge: Judge | None = None
    log = out_dir / f".{target.name}.judge-gateway.jsonl"
    if model is not None:
        import asyncio

        from skillworks.compile.judge import judge_shape

        log.unlink(missing_ok=True)

        def judge(p: SkillPackage, d: Classification) -> Judgement:
            return asyncio.run(judge_shape(p, d, model, log, api_base))

    contract = compile_skill(package, judge, problem=problem)
    path = write_artifact(contract, package, out_dir, target.name)
    if log.is_file():
        log.replace(path / "judge-gateway.jsonl")
    return CompileOutcome(contract, path, reused=False)
