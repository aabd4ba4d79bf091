"""A skill patch: the patch model's one JSON answer ``{summary, upsert_files, delete_paths}``.

``upsert_files`` is a list of ``{path, content}`` objects (a ``{path: content}`` mapping is accepted too);
paths are relative to the library root, e.g. ``csv-sums/SKILL.md`` or ``csv-sums/scripts/sum.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillworks.errors import first_validation_error


class FileUpsert(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    content: str


class Patch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str = ""
    upsert_files: list[FileUpsert] = Field(default_factory=list)
    delete_paths: list[str] = Field(default_factory=list)

    @field_validator("upsert_files", mode="before")
    @classmethod
    def _mapping_form(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return [{"path": k, "content": v} for k, v in value.items()]
        return value

    @property
    def empty(self) -> bool:
        return not self.upsert_files and not self.delete_paths


class MalformedPatch(ValueError):
    """The answer is not one JSON object of the patch shape."""


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.S)


def parse_patch(answer: str) -> Patch:
    """The patch in a model answer: the whole answer, or one fenced ```json block, is the JSON object."""
    text = answer.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedPatch(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MalformedPatch("not a JSON object")
    try:
        return Patch.model_validate(data)
    except ValidationError as exc:
        raise MalformedPatch(f"wrong shape: {first_validation_error(exc)}") from None
