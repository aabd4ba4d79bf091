"""The one Jinja environment of the report package (templates under ``report/templates``; autoescaped).

Compiled templates are cached in ``$XDG_CACHE_HOME/skillworks/jinja`` (Jinja's own bytecode cache, keyed
by each template's source checksum, so an edited template recompiles): compiling the report templates
costs about as much as writing a one-trial run's whole report."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import jinja2


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    directory = Path(base) / "skillworks" / "jinja"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile every time
        return None
    if not os.access(directory, os.W_OK):
        return None
    return jinja2.FileSystemBytecodeCache(str(directory))


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("skillworks.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        bytecode_cache=_bytecode_cache(),
    )


def template(name: str) -> jinja2.Template:
    return environment().get_template(name)
