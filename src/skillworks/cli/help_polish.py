"""Help that reads well: value names instead of Python types (``PATH``, not ``<list[Path]>``; flags show
none), options of the long commands grouped into panels, and an example under every command. Applied to
the Click command tree that Typer builds, so the command modules only declare their options."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, get_args

# Examples per command path (a new command needs one: tests/unit/cli/test_help.py checks every command).
EXAMPLES: dict[str, list[str]] = {
    "run": [
        "skillworks run examples/quickstart --agent builtin --model anthropic/claude-sonnet-4-5 "
        "--conditions none,curated --trials 3",
        "skillworks run --resume runs/20260101-120000-ab12cd",
        "skillworks run --resume runs/campaign --retry-errors auth,rate_limit --max-cost 300",
    ],
    "regrade": ["skillworks regrade runs/campaign"],
    "power": ["skillworks power runs/<pilot-run-id> --effect 10", "skillworks power runs/<pilot-run-id> --power 0.9"],
    "evolve": ["skillworks evolve examples/families/euro-ledgers --agent builtin --model openai/gpt-5-mini"],
    "report": [
        "skillworks report runs/<run-id>",
        "skillworks report runs/a runs/b --out runs/combined",
        "skillworks report runs/<run-id> --format pr-comment > comment.md",
    ],
    "check": [
        "skillworks check skills/",
        "skillworks check skills/ --format sarif --output check.sarif",
    ],
    "view": ["skillworks view runs/", "skillworks view runs/a runs/b --port 0"],
    "eval-report": ["skillworks eval-report runs/eval-a runs/eval-b --out runs/eval-combined"],
    "eval": [
        "skillworks eval skills/my-skill --model anthropic/claude-sonnet-4-5 --judge-model openai/gpt-5-mini",
        "skillworks eval skills/my-skill --dry-run",
    ],
    "trigger": [
        "skillworks trigger skills/my-skill --queries trigger-evals.json --agent claude-code "
        "--model anthropic/claude-sonnet-4-5 --trials 3 --decoys 5 --max-cost 2",
    ],
    "clean": ["skillworks clean --dry-run"],
    "compile": ["skillworks compile skills/ -o compiled/"],
    "serve-skills": ["skillworks serve-skills compiled/ --workdir /app"],
    "tasks check": ["skillworks tasks check examples/quickstart --oracle"],
    "agents list": ["skillworks agents list --format json"],
    "agents install": ["skillworks agents install claude-code codex"],
    "trajectory validate": ["skillworks trajectory validate runs/<run-id>/trials/*/trajectory.json"],
    "trajectory convert": ["skillworks trajectory convert session.jsonl --from claude-code --out trajectory.json"],
    "import harbor": ["skillworks import harbor jobs/2026-01-01__12-00-00 --out runs"],
    "import results": ["skillworks import results results.csv --baseline none --treatment curated --out stats.json"],
}

# Option panels of the commands with many options: option name -> panel (others stay under "Options").
_RUN_LIKE = {
    "agent": "Agent and model",
    "model": "Agent and model",
    "api_base": "Agent and model",
    "agent_option": "Agent and model",
    "judge_model": "Agent and model",
    "judge_api_base": "Agent and model",
    "patch_model": "Agent and model",
    "out": "Output",
    "run_id": "Output",
    "resume": "Output",
    "env": "Sandbox",
    "concurrency": "Sandbox",
}
PANELS: dict[str, dict[str, str]] = {"run": _RUN_LIKE, "eval": _RUN_LIKE, "evolve": _RUN_LIKE}


def _value_name(param: Any) -> str:
    """A value name from the parameter's declared type: PATH, INTEGER, NUMBER, a|b for choices, else TEXT."""
    desc = getattr(param, "type_descriptor", None)
    annotation = getattr(desc, "annotation", str)
    if desc is not None and desc.is_choice:
        name = "|".join(str(getattr(c, "value", c)) for c in desc.choices or ())
    elif desc is not None and (desc.is_path or desc.is_file):
        name = "PATH"
    else:
        inner = get_args(annotation)[0] if desc is not None and desc.is_list and get_args(annotation) else annotation
        name = {int: "INTEGER", float: "NUMBER"}.get(inner, "TEXT")
        if isinstance(inner, type) and issubclass(inner, PurePath):
            name = "PATH"
    repeated = (desc is not None and desc.is_list) or getattr(param, "multiple", False)
    return name + ("..." if repeated else "")


def _show_type(param: Any, text: str) -> None:
    """What the help's type column shows for ``param`` (Typer would show the Python annotation)."""
    param.display_type_rich = lambda ctx: text
    if param.param_type_name == "option" and text:
        param.metavar = text  # the plain (non-rich) help and usage lines too


def _help_option_without_type(cmd: Any) -> None:
    make = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            _show_type(option, "")
        return option

    cmd.get_help_option = get_help_option


def _one_line_short_help(cmd: Any) -> None:
    """The command list shows the first paragraph of a command's help as one flowing text (Typer keeps the
    docstring's line breaks there, breaking sentences mid-line)."""
    if cmd.help and not cmd.short_help:
        cmd.short_help = " ".join(cmd.help.split("\n\n")[0].split())


def _negations_in_help(cmd: Any) -> None:
    """A ``--x/--no-x`` flag is listed by its first name with ``(or --no-x)`` in its help: the column of
    negative names that Typer would add squeezes the help at 80 columns until option names are cut ("…")."""
    flags = [p for p in cmd.params if getattr(p, "secondary_opts", None)]
    if not flags:
        return
    for p in flags:
        negation = ", ".join(p.secondary_opts)
        if p.default is True:
            p.help = f"{p.help or ''} (on by default; {negation} turns it off)".strip()
            p.show_default = False  # not "[default: True]"
        else:
            p.help = f"{p.help or ''} (or {negation})".strip()
    format_help = cmd.format_help

    def format_help_without_negation_column(ctx: Any, formatter: Any) -> None:
        saved = [(p, p.secondary_opts) for p in flags]
        for p in flags:
            p.secondary_opts = []  # only while the help is drawn; parsing reads them again after
        try:
            format_help(ctx, formatter)
        finally:
            for p, opts in saved:
                p.secondary_opts = opts

    cmd.format_help = format_help_without_negation_column


def _polish_command(cmd: Any, path: str) -> None:
    panels = PANELS.get(path, {})
    _help_option_without_type(cmd)
    _negations_in_help(cmd)
    for param in cmd.params:
        _show_type(param, "" if getattr(param, "is_flag", False) else _value_name(param))  # a flag takes no value
        if param.name in panels and getattr(param, "rich_help_panel", "") is None and param.param_type_name == "option":
            param.rich_help_panel = panels[param.name]
    examples = EXAMPLES.get(path)
    if examples and not cmd.epilog:
        cmd.epilog = "Example" + ("s" if len(examples) > 1 else "") + ":\n" + "\n".join(f"  {e}" for e in examples)


def polish(group: Any, path: str = "") -> None:
    """Apply the help conventions to every command under ``group`` (Typer's command tree)."""
    _help_option_without_type(group)
    for param in group.params:
        _show_type(param, "" if getattr(param, "is_flag", False) else _value_name(param))
    subs = getattr(group, "commands", None)
    if subs is None:
        _polish_command(group, path)
        return
    for name, sub in subs.items():
        _one_line_short_help(sub)
        polish(sub, f"{path} {name}".strip())
