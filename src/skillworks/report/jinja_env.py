"""The one Jinja environment of the report package (templates under ``report/templates``; autoescaped).

Compiled templates are cached in ``$XDG_CACHE_HOME/skillworks/jinja`` (Jinja's own bytecode cache, keyed
by each template's source checksum, so an edited template recompiles): compiling the report templates
costs about as much as writing a one-trial run's whole report."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import jinja2
import markupsafe

from skillworks._printable import printable


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    directory = Path(base) / "skillworks" / "jinja"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile every time
        return None
    if not os.access(directory, os.W_OK):
        return None
    # the compiled code depends on the environment's options too (finalize is compiled in): bump the
    # pattern's tag whenever they change, or templates compiled by an older skillworks would be reused
    return jinja2.FileSystemBytecodeCache(str(directory), pattern="skillworks-env2-%s.cache")


@cache
def environment() -> jinja2.Environment:
    from skillworks.stats.tables import trial_cost_text

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("skillworks.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        bytecode_cache=_bytecode_cache(),
        finalize=_printable,
    )
    env.globals["trial_cost_text"] = trial_cost_text  # "$0.1234" or "unknown", never a made-up $0
    return env


def _printable(value: object) -> object:
    """Every printed string shows terminal controls and bidi overrides escaped (task ids, file names and
    tool output come from task dirs and sandboxes); markup the templates built is left alone."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return printable(value)
    return value


def template(name: str) -> jinja2.Template:
    return environment().get_template(name)
