"""`--help` reads well: no Python type names, an example under every command whose flags exist, grouped
options for the long commands; `skillworks --version`."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest

from skillworks import __version__
from skillworks.cli.help_polish import EXAMPLES
from skillworks.cli.main import command

PYTHON_TYPES = re.compile(r"<(?:list|bool|str|int|float|Path|dict|tuple)\b")


def _commands(group: Any, path: str = "") -> dict[str, Any]:
    subs = getattr(group, "commands", None)
    if subs is None:
        return {path: group}
    out: dict[str, Any] = {}
    for name, sub in subs.items():
        out.update(_commands(sub, f"{path} {name}".strip()))
    return out


COMMANDS = _commands(command())


def _help(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as exc:
        command().main([*args, "--help"], prog_name="skillworks")
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_has_an_example_whose_flags_exist(path: str) -> None:
    examples = EXAMPLES.get(path)
    assert examples, f"add an example for `skillworks {path}` to skillworks.cli.help_polish.EXAMPLES"
    options = {o for p in COMMANDS[path].params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
    for example in examples:
        words = shlex.split(example.split(">")[0])
        assert words[: 1 + len(path.split())] == ["skillworks", *path.split()], example
        unknown = [w for w in words if w.startswith("-") and w not in options]
        assert not unknown, f"{example}: no such option {unknown}"


def test_help_shows_no_python_type_names_and_ends_with_examples(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    top = _help([], capsys, monkeypatch)
    assert "--version" in top and not PYTHON_TYPES.search(top)
    for path in sorted(COMMANDS):
        text = _help(path.split(), capsys, monkeypatch)
        assert not PYTHON_TYPES.search(text), (path, PYTHON_TYPES.search(text))
        assert "Example" in text, path
    run = _help(["run"], capsys, monkeypatch)
    for panel in ("Agent and model", "Sandbox", "Output", "Container backend"):
        assert f"─ {panel} " in run
    assert re.search(r"--trials\s+INTEGER", run) and re.search(r"--resume\s+PATH", run)
    assert not re.search(r"--force-build\s+--no-force-build\s+\S+\s{2}", run.replace("rebuild", ""))


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        command().main(["--version"], prog_name="skillworks")
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"skillworks {__version__}"


@pytest.mark.parametrize("path", ["run", "eval", "tasks check", "check"])
def test_help_at_80_columns_cuts_no_option_name_and_still_parses_negations(
    path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typer's column of --no-x names squeezed the help until names like --ray-cpus-per-trial were cut ("…");
    a flag's negation is now named in its help, and still parses."""
    monkeypatch.setenv("COLUMNS", "80")
    text = _help(path.split(), capsys, monkeypatch)
    assert not re.search(r"│\s*\*?\s*-[-\w]*…", text), [line for line in text.splitlines() if "…" in line]
    cmd = COMMANDS[path]
    for param in cmd.params:
        for name in (o for o in param.opts if o.startswith("--")):
            assert re.search(rf"│ {re.escape(name)}\b", text), name  # every option shown whole
        for negation in param.secondary_opts:
            assert negation in " ".join(text.replace("│", " ").split()), negation
    flags = [p for p in cmd.params if p.secondary_opts]
    if flags:
        flag = flags[0]
        args = [flag.secondary_opts[0]] + (["x"] if path in ("run", "check", "tasks check") else [])
        assert cmd.make_context(path, args).params[flag.name] is False


def test_command_list_shows_each_summary_as_flowing_text() -> None:
    root = command()
    for name, sub in root.commands.items():
        assert sub.short_help and "\n" not in sub.short_help, name
