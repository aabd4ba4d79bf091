"""Evaluation assets next to a skill: `evals/evals.json` (two dialects) plus optional `EVAL.md` overrides.

Dialects (detected from the file's shape):

- ACES: a list of cases, or ``{"skill": name, "cases": [...]}``; a case is ``{id, question, expected_skill,
  expected_script, ground_truth, expected_behavior: [..], files: [..]}`` (``id`` and ``question`` required).
- skill-creator (Anthropic): ``{"skill_name": name, "evals": [{id, prompt, expected_output, files,
  expectations | assertions}]}`` (``id`` and ``prompt`` required; an assertion is a string or ``{text}``).

``EVAL.md`` (optional, beside SKILL.md or in ``evals/``): YAML frontmatter with author overrides, and a
body of guidance for the LLM judges::

    ---
    weights: {accuracy: 2, security: 1}   # metric weights for the overall score (default: equal)
    timeout_sec: 300                       # agent time limit per case
    skip: [3]                              # case ids not to run
    cases:                                 # per-case overrides, keyed by case id
      "1": {ground_truth: "42", expected_behavior: ["runs the script before answering"]}
    ---
    Judge guidance: answers in EUR or € are both fine.

Each case becomes a `Task` (source_format ``evals.json``) with no verifier: the ACES metrics grade it.
Malformed cases are reported one line each (`EvalsError.problems`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from skillworks.errors import TaskError
from skillworks.tasks.model import Environment, EvalExpectations, Task

EVALS_JSON = "evals.json"
EVAL_MD = "EVAL.md"
Dialect = Literal["aces", "skill-creator"]

ACES_CASE_KEYS = (
    "id",
    "question",
    "expected_skill",
    "expected_script",
    "ground_truth",
    "expected_behavior",
    "files",
    "metadata",
)
CREATOR_CASE_KEYS = ("id", "prompt", "expected_output", "files", "expectations", "assertions", "metadata")
CREATOR_ASSERTION_KEYS = ("text", "name", "type")
EVAL_MD_KEYS = ("weights", "timeout_sec", "skip", "cases")
OVERRIDE_KEYS = (
    "question",
    "expected_skill",
    "expected_script",
    "ground_truth",
    "expected_behavior",
    "files",
    "weights",
    "judge_notes",
)
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")


class EvalsError(TaskError):
    """One or more malformed evaluation cases; `problems` holds one line each (``<file>: <message>``)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)


@dataclass
class _Case:
    index: int
    case_id: str
    prompt: str
    fields: dict[str, Any] = field(default_factory=dict)


def find_evals_file(skill_dir: Path | str) -> Path | None:
    """`evals/evals.json` in a skill directory (or `evals.json` at its root), or None."""
    root = Path(skill_dir)
    for candidate in (root / "evals" / EVALS_JSON, root / EVALS_JSON):
        if candidate.is_file():
            return candidate
    return None


def find_eval_md(skill_dir: Path | str) -> Path | None:
    root = Path(skill_dir)
    for candidate in (root / EVAL_MD, root / "evals" / EVAL_MD):
        if candidate.is_file():
            return candidate
    return None


def detect_dialect(data: Any) -> Dialect | None:
    if isinstance(data, dict):
        if "evals" in data or "skill_name" in data:
            return "skill-creator"
        if "cases" in data:
            return "aces"
        return None
    if isinstance(data, list):
        if any(isinstance(c, dict) and "prompt" in c and "question" not in c for c in data):
            return "skill-creator"
        return "aces"
    return None


def _fmt_id(value: Any) -> str:
    return repr(value)


def _str_list(value: Any, key: str) -> tuple[list[str] | None, str | None]:
    if value is None:
        return [], None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return None, f"'{key}' must be a list of non-empty strings"
    return [v.strip() for v in value], None


def _parse_case(raw: Any, index: int, dialect: Dialect) -> tuple[_Case | None, str | None]:
    """One case -> (_Case, None) or (None, problem)."""
    where = f"case [{index}]"
    if not isinstance(raw, dict):
        return None, f"{where}: a case must be an object, got {type(raw).__name__}"
    if "id" in raw and isinstance(raw["id"], str | int) and not isinstance(raw["id"], bool):
        where = f"case [{index}] (id {_fmt_id(raw['id'])})"
    allowed = ACES_CASE_KEYS if dialect == "aces" else CREATOR_CASE_KEYS
    unknown = [str(k) for k in raw if k not in allowed]
    if unknown:
        return None, f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(allowed)})"
    case_id = raw.get("id")
    if case_id is None:
        return None, f"{where}: missing required key 'id'"
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or (isinstance(case_id, str) and not case_id):
        return None, f"{where}: 'id' must be a non-empty string or an integer"
    text_key = "question" if dialect == "aces" else "prompt"
    prompt = raw.get(text_key)
    if prompt is None:
        return None, f"{where}: missing required key {text_key!r}"
    if not isinstance(prompt, str) or not prompt.strip():
        return None, f"{where}: {text_key!r} must be a non-empty string"
    fields: dict[str, Any] = {}
    for key in ("expected_skill", "expected_script", "expected_output"):
        if key in raw and raw[key] is not None:
            if not isinstance(raw[key], str) or not raw[key].strip():
                return None, f"{where}: {key!r} must be a non-empty string"
            fields[key] = raw[key].strip()
    if "ground_truth" in raw:
        fields["ground_truth"] = raw["ground_truth"]
    files, problem = _str_list(raw.get("files"), "files")
    if problem:
        return None, f"{where}: {problem}"
    fields["files"] = files
    if dialect == "aces":
        behavior, problem = _str_list(raw.get("expected_behavior"), "expected_behavior")
        if problem:
            return None, f"{where}: {problem}"
        fields["expected_behavior"] = behavior
    else:
        if "expectations" in raw and "assertions" in raw:
            return None, f"{where}: give 'expectations' or 'assertions', not both"
        key = "assertions" if "assertions" in raw else "expectations"
        items = raw.get(key) or []
        if not isinstance(items, list):
            return None, f"{where}: {key!r} must be a list"
        texts: list[str] = []
        for j, item in enumerate(items):
            if isinstance(item, str) and item.strip():
                texts.append(item.strip())
            elif isinstance(item, dict):
                bad = [str(k) for k in item if k not in CREATOR_ASSERTION_KEYS]
                if bad:
                    return None, (
                        f"{where}: {key}[{j}]: unknown key {bad[0]!r} (allowed: {', '.join(CREATOR_ASSERTION_KEYS)})"
                    )
                text = item.get("text")
                if not isinstance(text, str) or not text.strip():
                    return None, f"{where}: {key}[{j}]: needs a non-empty 'text'"
                texts.append(text.strip())
            else:
                return None, f"{where}: {key}[{j}] must be a non-empty string or an object with 'text'"
        fields["expected_behavior"] = texts
    if "metadata" in raw and not isinstance(raw["metadata"], dict):
        return None, f"{where}: 'metadata' must be an object"
    fields["metadata"] = dict(raw.get("metadata") or {})
    return _Case(index, str(case_id), prompt.strip(), fields), None


@dataclass(frozen=True)
class EvalMd:
    weights: dict[str, float]
    timeout_sec: float | None
    skip: frozenset[str]
    cases: dict[str, dict[str, Any]]
    judge_notes: str | None
    path: Path


def load_eval_md(path: Path) -> EvalMd:
    """Parse EVAL.md (frontmatter optional). Raises TaskError naming the file."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    front: dict[str, Any] = {}
    body = text
    if text.startswith("---\n"):
        lines = text.splitlines(keepends=True)
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            raise TaskError("EVAL.md frontmatter is not closed by a '---' line", path)
        try:
            loaded = yaml.safe_load("".join(lines[1:end])) or {}
        except yaml.YAMLError as exc:
            raise TaskError(f"invalid YAML frontmatter: {' '.join(str(exc).split())}", path) from None
        if not isinstance(loaded, dict):
            raise TaskError("EVAL.md frontmatter must be a YAML mapping", path)
        front, body = loaded, "".join(lines[end + 1 :])
    unknown = [str(k) for k in front if k not in EVAL_MD_KEYS]
    if unknown:
        raise TaskError(f"unknown key {unknown[0]!r} (allowed: {', '.join(EVAL_MD_KEYS)})", path)
    weights = _weights(front.get("weights"), path, "weights")
    timeout = front.get("timeout_sec")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        raise TaskError("'timeout_sec' must be a positive number", path)
    skip = front.get("skip") or []
    if not isinstance(skip, list):
        raise TaskError("'skip' must be a list of case ids", path)
    cases_raw = front.get("cases") or {}
    if not isinstance(cases_raw, dict):
        raise TaskError("'cases' must be a mapping of case id -> overrides", path)
    cases: dict[str, dict[str, Any]] = {}
    for key, over in cases_raw.items():
        if not isinstance(over, dict):
            raise TaskError(f"cases.{key}: overrides must be a mapping", path)
        bad = [str(k) for k in over if k not in OVERRIDE_KEYS]
        if bad:
            raise TaskError(f"cases.{key}: unknown key {bad[0]!r} (allowed: {', '.join(OVERRIDE_KEYS)})", path)
        if "weights" in over:
            over = {**over, "weights": _weights(over["weights"], path, f"cases.{key}.weights")}
        for list_key in ("expected_behavior", "files"):
            if list_key in over:
                values, problem = _str_list(over[list_key], list_key)
                if problem:
                    raise TaskError(f"cases.{key}: {problem}", path)
                over = {**over, list_key: values}
        cases[str(key)] = over
    notes = body.strip() or None
    return EvalMd(weights, float(timeout) if timeout else None, frozenset(str(s) for s in skip), cases, notes, path)


def _weights(value: Any, path: Path, key: str) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value.values()
    ):
        raise TaskError(f"'{key}' must map metric names to non-negative numbers", path)
    from skillworks.grading.metrics.context import METRIC_NAMES

    unknown = [str(k) for k in value if k not in METRIC_NAMES]
    if unknown:
        raise TaskError(f"'{key}': unknown metric {unknown[0]!r} (metrics: {', '.join(METRIC_NAMES)})", path)
    return {str(k): float(v) for k, v in value.items()}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TaskError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", path) from None
    except UnicodeDecodeError:
        raise TaskError("not valid UTF-8", path) from None


def _raw_cases(data: Any, dialect: Dialect, path: Path) -> tuple[list[Any], str | None]:
    """The list of raw cases and the skill name the file declares (if any)."""
    if dialect == "skill-creator":
        if not isinstance(data, dict):
            raise TaskError("a skill-creator evals.json is an object with 'skill_name' and 'evals'", path)
        unknown = [str(k) for k in data if k not in ("skill_name", "evals")]
        if unknown:
            raise TaskError(f"unknown top-level key {unknown[0]!r} (allowed: skill_name, evals)", path)
        evals = data.get("evals")
        if not isinstance(evals, list):
            raise TaskError("'evals' must be a list of cases", path)
        name = data.get("skill_name")
        if name is not None and not isinstance(name, str):
            raise TaskError("'skill_name' must be a string", path)
        return evals, name
    if isinstance(data, list):
        return data, None
    unknown = [str(k) for k in data if k not in ("skill", "cases")]
    if unknown:
        raise TaskError(f"unknown top-level key {unknown[0]!r} (allowed: skill, cases)", path)
    cases = data.get("cases")
    if not isinstance(cases, list):
        raise TaskError("'cases' must be a list of cases", path)
    name = data.get("skill")
    if name is not None and not isinstance(name, str):
        raise TaskError("'skill' must be a string", path)
    return cases, name


def task_id_for(skill: str, case_id: str) -> str:
    """A filesystem-safe task id for a case: ``<skill>--<case id>``."""
    return f"{skill}--{_SAFE_ID.sub('-', case_id).strip('-') or 'case'}"


def _hash_case(payload: dict[str, Any], skill_root: Path, files: list[str]) -> str:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode())
    for rel in sorted(files):
        target = skill_root / rel
        paths = sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]
        for p in paths:
            digest.update(p.relative_to(skill_root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(p.read_bytes()).digest())
    return digest.hexdigest()


def _check_file(skill_root: Path, rel: str) -> str | None:
    if rel.startswith("/") or ".." in Path(rel).parts:
        return f"file {rel!r} must be a relative path inside the skill directory"
    if not (skill_root / rel).exists():
        return f"file {rel!r} not found under {skill_root}"
    if not (skill_root / rel).resolve().is_relative_to(skill_root.resolve()):
        return f"file {rel!r} is a symlink out of the skill directory"
    return None


def load_eval_cases(skill_dir: Path | str, skill_name: str | None = None) -> list[Task]:
    """Every case of the skill's evals.json as a Task (EVAL.md overrides applied, skipped cases left out).

    Raises `EvalsError` listing every malformed case (one line each), or `TaskError` for a file that cannot
    be read at all."""
    root = Path(skill_dir).resolve()
    path = find_evals_file(root)
    if path is None:
        raise TaskError("no evals/evals.json in this skill directory", root)
    data = _read_json(path)
    dialect = detect_dialect(data)
    if dialect is None:
        raise TaskError(
            "unrecognised evals.json: expected a list of ACES cases, {'cases': [...]} or "
            "skill-creator's {'skill_name': ..., 'evals': [...]}",
            path,
        )
    raw_cases, declared = _raw_cases(data, dialect, path)
    skill = skill_name or declared or root.name
    if skill_name and declared and declared != skill_name:
        raise TaskError(f"evals.json is for skill {declared!r}, but the skill is named {skill_name!r}", path)
    md_path = find_eval_md(root)
    md = load_eval_md(md_path) if md_path is not None else None
    problems: list[str] = []
    cases: list[_Case] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_cases):
        case, problem = _parse_case(raw, i, dialect)
        if problem is not None:
            problems.append(f"{path}: {problem}")
            continue
        assert case is not None
        if case.case_id in seen:
            problems.append(
                f"{path}: case [{i}] (id {case.case_id!r}): duplicate id (also case [{seen[case.case_id]}])"
            )
            continue
        seen[case.case_id] = i
        cases.append(case)
    if md is not None:
        for key in md.cases:
            if key not in seen:
                problems.append(f"{md.path}: cases.{key}: no case with this id in {path.name}")
    if not raw_cases:
        problems.append(f"{path}: the file holds no cases")
    tasks: list[Task] = []
    for case in cases:
        if md is not None and case.case_id in md.skip:
            continue
        fields = dict(case.fields)
        prompt = case.prompt
        override = md.cases.get(case.case_id, {}) if md is not None else {}
        for key, value in override.items():
            if key == "question":
                prompt = str(value)
            else:
                fields[key] = value
        files: list[str] = list(fields.get("files") or [])
        file_problems = [p for rel in files if (p := _check_file(root, rel)) is not None]
        if file_problems:
            problems.append(f"{path}: case [{case.index}] (id {case.case_id!r}): {file_problems[0]}")
            continue
        weights = {**(md.weights if md else {}), **(fields.get("weights") or {})}
        notes = fields.get("judge_notes") or (md.judge_notes if md else None)
        expectations = EvalExpectations(
            dialect=dialect,
            case_id=case.case_id,
            skill=skill,
            expected_skill=fields.get("expected_skill") or (skill if dialect == "skill-creator" else None),
            expected_script=fields.get("expected_script"),
            ground_truth=fields.get("ground_truth"),
            expected_output=fields.get("expected_output"),
            expected_behavior=tuple(fields.get("expected_behavior") or ()),
            files=tuple(files),
            weights=weights,
            judge_notes=notes,
        )
        payload = {"prompt": prompt, **expectations.model_dump(mode="json")}
        extra: dict[str, Any] = {"evals_file": str(path)}
        if md is not None:
            extra["eval_md"] = str(md.path)
        tasks.append(
            Task(
                id=task_id_for(skill, case.case_id),
                root=root,
                source_format="evals.json",
                instruction=prompt,
                environment=Environment(),
                verifier=None,
                oracle=None,
                agent_timeout_sec=md.timeout_sec if md and md.timeout_sec else 900.0,
                metadata=dict(fields.get("metadata") or {}),
                content_hash=_hash_case(payload, root, files),
                name=f"{skill}/{case.case_id}",
                extra=extra,
                evaluation=expectations,
            )
        )
    ids = [t.id for t in tasks]
    clashes = sorted({i for i in ids if ids.count(i) > 1})
    if clashes:
        problems.append(f"{path}: case ids map to the same task id {clashes[0]!r}; make them differ in letters/digits")
    if problems:
        raise EvalsError(problems)
    return tasks
