"""An opt-in response cache (`skillworks run --cache DIR`): a model call whose canonical request (the model
and everything the model reads: messages, tools, sampling settings; not whether the client streams) was
answered before is served from DIR, across runs, without asking the provider. One JSON file per request,
named by the SHA-256 of the canonical request, written atomically (concurrent runs may share DIR)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from skillworks.errors import UserError
from skillworks.gateway.internal import ModelRequest, ModelResponse, response_from_dict

log = logging.getLogger(__name__)


def request_key(model: str, request: ModelRequest) -> str:
    body = dataclasses.asdict(request)
    body.pop("stream", None)
    text = json.dumps({"model": model, "request": body}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        if root.exists() and not root.is_dir():
            raise UserError("--cache: not a directory", root)
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            response = response_from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError, UnicodeDecodeError) as exc:  # a damaged entry is a miss, not a crash
            log.warning("response cache: ignoring %s: %s", path, exc)
            return None
        response.cost_usd, response.cost_source = 0.0, "none"  # a hit costs nothing
        return response

    def put(self, key: str, response: ModelResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(dataclasses.asdict(response), fh)
        os.replace(tmp, path)
