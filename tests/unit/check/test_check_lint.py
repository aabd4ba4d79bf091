from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.check import check_skills
from skillworks.check import lint as lint_mod
from skillworks.check.lint import LintTarget, lint_scripts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "skills"


def _write(tmp_path: Path, name: str, text: str) -> LintTarget:
    p = tmp_path / name
    p.write_text(text)
    return LintTarget(7, f"scripts/{name}", p, "python" if name.endswith(".py") else "shell")


async def test_ruff_shellcheck_and_bash_findings(tmp_path: Path) -> None:
    targets = [
        _write(tmp_path, "a.py", "import os\nprint(undefined_thing)\n"),
        _write(tmp_path, "b.sh", "#!/bin/bash\nset -e\nunused=1\ncd /somewhere\n"),
        _write(tmp_path, "c.sh", "#!/bin/bash\nif true; then\n  echo hi\n"),
    ]
    found, tools = await lint_scripts(targets)
    assert tools == {"ruff": True, "shellcheck": True, "bash": True}
    by_rule = {(f.rule_id, f.file) for f in found[7]}
    assert ("lint-python", "scripts/a.py") in by_rule
    assert ("lint-shell", "scripts/b.sh") in by_rule
    assert ("script-syntax-error", "scripts/c.sh") in by_rule
    f821 = next(f for f in found[7] if f.evidence == "F821")
    assert f821.line == 2 and "undefined_thing" in f821.message


async def test_without_shellcheck_bash_checks_every_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = lint_mod.find_tool
    monkeypatch.setattr(lint_mod, "find_tool", lambda name: None if name == "shellcheck" else real(name))
    targets = [_write(tmp_path, "ok.sh", "#!/bin/bash\necho ok\n"), _write(tmp_path, "bad.sh", "echo 'unterminated\n")]
    found, tools = await lint_scripts(targets)
    assert tools["shellcheck"] is False and tools["bash"] is True
    assert [(f.rule_id, f.file) for f in found[7]] == [("script-syntax-error", "scripts/bad.sh")]


async def test_shell_batches_cut_by_bytes_find_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """shellcheck's memory grows with the bytes of one run, so a batch ends at `_CHUNK_BYTES`: real
    shellcheck runs, one script per run here, report exactly what one run over all of them reports."""
    texts = ["#!/bin/bash\nunused=1\ncd /somewhere\n", "#!/bin/bash\nif true; then\n  echo hi\n", "echo $1\n"]
    targets = [_write(tmp_path, f"s{i}.sh", t) for i, t in enumerate(texts)]
    whole, _ = await lint_scripts(targets)
    sized = [LintTarget(t.key, t.rel, t.path, t.language, len(texts[i])) for i, t in enumerate(targets)]
    monkeypatch.setattr(lint_mod, "_CHUNK_BYTES", 1)
    runs: list[int] = []
    real = lint_mod._shellcheck

    async def counted(shellcheck: str, bash: str | None, batch: list[LintTarget], *rest: object) -> None:
        runs.append(len(batch))
        await real(shellcheck, bash, batch, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(lint_mod, "_shellcheck", counted)
    cut, _ = await lint_scripts(sized)
    assert runs == [1, 1, 1]
    key = lambda f: (f.file, f.line, f.rule_id, f.message)  # noqa: E731
    monkeypatch.setattr(lint_mod, "_CHUNK_BYTES", 10_000)
    monkeypatch.setattr(lint_mod, "_BIG_SCRIPT", len(texts[1]))  # the largest: linted alone, last
    runs.clear()
    deferred, _ = await lint_scripts(sized)
    assert runs == [2, 1]
    assert sorted(deferred[7], key=key) == sorted(whole[7], key=key)
    assert sorted(cut[7], key=key) == sorted(whole[7], key=key) and len(whole[7]) >= 3


def test_missing_linters_are_reported_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint_mod, "find_tool", lambda name: None)
    report = check_skills([FIXTURES / "defects" / "lint-python"])
    assert report.lint_tools == {"ruff": False, "shellcheck": False, "bash": False}
    assert not report.skills[0].has_rule("lint-python")


def test_a_linter_that_times_out_is_reported_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real ruff and shellcheck processes, killed at a zero timeout: their scripts are reported as not
    linted (report, text, JSON, SARIF) instead of passing as clean."""
    import json

    import jsonschema

    from skillworks.check import iter_json, iter_sarif
    from skillworks.check.text_output import to_text

    cases = [FIXTURES / "defects" / "lint-python", FIXTURES / "defects" / "lint-shell"]
    linted = check_skills(cases)
    assert linted.lint_problems == []
    assert linted.skills[0].has_rule("lint-python") and linted.skills[1].has_rule("lint-shell")

    monkeypatch.setattr(lint_mod, "_TIMEOUT", 0.0)
    report = check_skills(cases)
    assert report.lint_tools["ruff"] and report.lint_tools["shellcheck"]
    assert sorted(p.split(" on ")[0] for p in report.lint_problems) == [
        "ruff timed out after 0 s",
        "shellcheck timed out after 0 s",
    ]
    assert not any(s.has_rule("lint-python") or s.has_rule("lint-shell") for s in report.skills)
    assert "lint incomplete: ruff timed out after 0 s on 2 script(s)" in to_text(report)
    assert json.loads("".join(iter_json(report)))["lint_problems"] == report.lint_problems
    sarif = json.loads("".join(iter_sarif(report)))
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == report.lint_problems
    schema = json.loads((FIXTURES.parent / "sarif" / "sarif-schema-2.1.0.json").read_text())
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(sarif))


async def test_bash_n_timing_out_is_no_syntax_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = lint_mod.find_tool
    monkeypatch.setattr(lint_mod, "find_tool", lambda name: None if name == "shellcheck" else real(name))
    monkeypatch.setattr(lint_mod, "_TIMEOUT", 0.0)
    linter = lint_mod.Linter()
    linter.add([_write(tmp_path, "bad.sh", "echo 'unterminated\n")])
    assert await linter.finish() == {}
    assert linter.problems == ["bash -n timed out after 0 s on scripts/bad.sh: its syntax is not checked"]
