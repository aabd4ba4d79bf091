"""`skillworks agents list`: --format json, and a table that fits 80 columns."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from skillworks.cli.main import app

runner = CliRunner()


def test_agents_list_json_and_80_column_table() -> None:
    as_json = runner.invoke(app, ["agents", "list", "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    names = {row["agent"] for row in json.loads(as_json.output)}
    assert {"builtin", "oracle", "claude-code"} <= names
    table = runner.invoke(app, ["agents", "list"], env={"COLUMNS": "80"})
    assert table.exit_code == 0
    assert all(len(line) <= 80 for line in table.output.splitlines())
    assert all(name in table.output for name in names)
    assert "install paths: --format json" in table.output
