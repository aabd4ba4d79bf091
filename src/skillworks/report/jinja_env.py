"""The one Jinja environment of the report package (templates under ``report/templates``; autoescaped)."""

from __future__ import annotations

from functools import cache

import jinja2


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("skillworks.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def template(name: str) -> jinja2.Template:
    return environment().get_template(name)
