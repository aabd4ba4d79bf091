"""Lazy package exports: a package lists `name -> module` and imports the module on first access, so
importing the package stays cheap (start-up of `skillworks run` never pays for what it does not use)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `package`: imports `names[name]`, caches the value in `namespace`."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
