"""Validate, read and write ATIF trajectory files with one-line errors naming the step and the field."""

from __future__ import annotations

import json
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from skillworks.errors import UserError
from skillworks.trajectory.models import AudioSource, ImageSource, Trajectory

_TAGGED_MODELS: dict[str, type[BaseModel]] = {"image-source": ImageSource, "audio-source": AudioSource}


class TrajectoryError(UserError):
    """A trajectory that is not valid ATIF. `str(err)` reads e.g.
    ``trajectory.json: steps[3] (step_id 4): tool_calls[0].function_name: field required``."""


def validate_trajectory(data: dict[str, Any] | Path | str, *, name: str | None = None) -> Trajectory:
    """Parse and check an ATIF trajectory given as a dict or a path to a JSON file.

    `name` labels the source in error messages (default: the file path, or "trajectory" for a dict).
    Raises TrajectoryError with the first problem found, naming the step (index and step_id) and field.
    """
    if isinstance(data, (str, Path)):
        path = Path(data)
        label = name or str(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TrajectoryError("file not found", label) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TrajectoryError(f"cannot read: {exc}", label) from None
        except json.JSONDecodeError as exc:
            raise TrajectoryError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", label) from None
    else:
        raw, label = data, name or "trajectory"
    if not isinstance(raw, dict):
        raise TrajectoryError(f"expected a JSON object at the top level, got {type(raw).__name__}", label)
    try:
        return Trajectory.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        message = _describe(_most_specific(errors), raw)
        others = len({_field_key(e) for e in errors}) - 1  # a union failing on every branch is one problem
        if others:
            message += f" (and {others} more problem{'s' if others > 1 else ''})"
        raise TrajectoryError(message, label) from None


def write_trajectory(traj: Trajectory, path: Path | str) -> Path:
    """Validate `traj` (re-checked from its JSON form) and write it atomically as pretty JSON."""
    target = Path(path)
    payload = traj.to_json_dict()
    validate_trajectory(payload, name=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".trajectory-", suffix=".json", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would set trajectory.json apart from its siblings
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _most_specific(errors: list[Any]) -> Any:
    """The first error, or, when a union field failed on every branch, the branch error that got deepest
    (for `message: str | list[ContentPart]` given a list, the ContentPart problem, not "not a string")."""
    key = _field_key(errors[0])
    same_field = [e for e in errors if _field_key(e) == key]
    return max(same_field, key=lambda e: len(e["loc"]))


def _field_key(error: Any) -> tuple[Any, ...]:
    """The field an error is about: for a union that failed on every branch, the field holding the union."""
    loc = tuple(error["loc"])
    for i, part in enumerate(loc):
        if _is_union_tag(part):
            return loc[:i]
    return loc


def _describe(error: Any, raw: dict[str, Any]) -> str:
    loc: tuple[Any, ...] = tuple(error["loc"])
    msg = str(error["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if error["type"] == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        msg = f"unknown key (allowed: {', '.join(allowed)})" if allowed else "unknown key"
    elif error["type"] == "missing":
        msg = "field required"
    else:
        msg = msg[:1].lower() + msg[1:]
    # A failing union reports one error per member: name the field, not the union branch.
    loc = tuple(p for p in loc if not _is_union_tag(p))
    return _format_loc(loc, raw, msg)


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        part in ("str", "int", "float", "bool", "image-source", "audio-source")
        or part.startswith(("list[", "function-"))
    )


def _format_loc(loc: tuple[Any, ...], raw: dict[str, Any], msg: str) -> str:
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        index = loc[1]
        step_id: Any = None
        steps = raw.get("steps")
        if isinstance(steps, list) and index < len(steps) and isinstance(steps[index], dict):
            step_id = steps[index].get("step_id")
        head = f"steps[{index}]" + (f" (step_id {step_id})" if step_id is not None else "")
        rest = _dotted(loc[2:])
        return f"{head}: {rest}: {msg}" if rest else f"{head}: {msg}"
    where = _dotted(loc)
    return f"{where}: {msg}" if where else msg


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] | None = Trajectory
    for part in loc:
        if model is None:
            return []
        if part in _TAGGED_MODELS:
            model = _TAGGED_MODELS[part]
            continue
        if isinstance(part, int) or _is_union_tag(part):
            continue
        field = model.model_fields.get(str(part))
        model = _model_in(field.annotation) if field is not None else None
    return list(model.model_fields) if model is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is None and not isinstance(annotation, types.UnionType):
        return None
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
