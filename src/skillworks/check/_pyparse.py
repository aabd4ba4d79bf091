"""One parse of each Python source per skill: the syntax check, the flow analysis, the data-literal test and
the `setup.py` hooks all read the same file, so within `shared_parses()` (one skill's scan) each text is
parsed once and its tree (or the error it raised) is handed to every reader. The trees are never modified."""

from __future__ import annotations

import ast
import contextlib
import warnings
from collections.abc import Iterator

_cache: dict[str, ast.Module | Exception] | None = None


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning/DeprecationWarning of the skill's code are not ours
        return ast.parse(text)


def parse_python(text: str) -> ast.Module:
    """`ast.parse(text)` (warnings silenced), shared within `shared_parses()`: raises what it raised."""
    cache = _cache
    if cache is None:
        return _parse(text)
    found = cache.get(text)
    if found is None:
        try:
            found = _parse(text)
        except MemoryError:
            raise  # not a property of the text: not kept
        except Exception as exc:  # SyntaxError, ValueError (null bytes), RecursionError (deep nesting)
            found = exc
        cache[text] = found
    if isinstance(found, Exception):
        raise found
    return found


@contextlib.contextmanager
def shared_parses() -> Iterator[None]:
    """Parse each Python text once while this is open (one skill's scan); the trees are dropped on exit."""
    global _cache
    outer = _cache
    if outer is None:
        _cache = {}
    try:
        yield
    finally:
        _cache = outer
