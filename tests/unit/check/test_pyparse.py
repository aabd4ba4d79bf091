"""The shared Python parse of one skill's scan (`_pyparse`): one tree per text inside `shared_parses()`,
the same error for a text that does not parse, and nothing kept once it is closed."""

from __future__ import annotations

import ast

import pytest

from skillworks.check._pyparse import parse_python, shared_parses


def test_one_tree_per_text_inside_shared_parses_and_none_kept_after() -> None:
    text = "import os\nprint(os.getcwd())\n"
    with shared_parses():
        first = parse_python(text)
        assert parse_python(text) is first
        with shared_parses():  # nested (a decoded payload scanned again): the same cache
            assert parse_python(text) is first
        assert ast.dump(first) == ast.dump(ast.parse(text))
    assert parse_python(text) is not first  # closed: parsed again


def test_a_text_that_does_not_parse_raises_its_error_every_time() -> None:
    with shared_parses():
        for _ in range(2):
            with pytest.raises(SyntaxError) as caught:
                parse_python("def f(:\n")
            assert caught.value.lineno == 1
        with pytest.raises((SyntaxError, ValueError)):  # ValueError before Python 3.11.4
            parse_python("x = 1\0\n")  # null bytes
