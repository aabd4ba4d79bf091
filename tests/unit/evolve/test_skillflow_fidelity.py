"""SkillFlow fidelity (issue 25): the ranking file as SkillFlow ships it, the history control with each prior
task once, patch-prompt placeholders, and --seed-skills / --skills-from bad input."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import yaml

from skillworks.errors import UserError
from skillworks.evolve.driver import _history_instruction
from skillworks.evolve.family import RANKING_JSON, load_family
from skillworks.evolve.prompt import PATCH_SYSTEM, PLACEHOLDERS, SKILLFLOW_PLACEHOLDERS, load_template, render_prompt
from skillworks.results import TrialResult

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "families" / "euro-ledgers"


def _family(tmp_path: Path, tasks: tuple[str, ...] = ("ledger-1", "ledger-2", "ledger-3")) -> Path:
    fam = tmp_path / "fam"
    for tid in tasks:
        shutil.copytree(EXAMPLE / tid, fam / tid)
    return fam


def test_skillflows_ranking_array_in_the_family_dir(tmp_path: Path) -> None:
    fam = _family(tmp_path)
    # as shipped: a JSON array of task directory names; a repeat and a non-string are skipped
    (fam / RANKING_JSON).write_text(json.dumps(["ledger-3", " ledger-1 ", "ledger-3", 7]))
    family = load_family(fam)
    assert [t.id for t in family.tasks] == ["ledger-3", "ledger-1", "ledger-2"]
    (warning,) = family.warnings  # the unranked task is appended, with a warning naming it
    assert "'ledger-2' is not in the ranking; appended at position 3" in warning


def test_a_ranking_that_is_neither_array_nor_object_is_one_line_error(tmp_path: Path) -> None:
    fam = _family(tmp_path)
    (fam / RANKING_JSON).write_text('"ledger-1"')
    with pytest.raises(UserError) as info:
        load_family(fam)
    assert "expected a JSON array of task names" in str(info.value) and "\n" not in str(info.value)


def _result(tmp_path: Path, task_id: str, instruction: str) -> TrialResult:
    trial = tmp_path / "trials" / task_id
    trial.mkdir(parents=True)
    steps = [
        {"source": "user", "message": instruction},
        {"source": "agent", "message": f"did {task_id}"},
    ]
    (trial / "trajectory.json").write_text(json.dumps({"steps": steps}))
    return TrialResult.model_validate(
        {
            "trial_id": f"{task_id}__history",
            "run_id": "r",
            "task_id": task_id,
            "condition": "history",
            "agent": "builtin",
            "trial_index": 0,
            "seed": 0,
            "reward": 0.0,
            "outcome": "failed",
            "paths": {"trajectory": f"trials/{task_id}/trajectory.json"},
            "started_at": "2026-01-01T00:00:00Z",
            "finished_at": "2026-01-01T00:00:01Z",
        }
    )


def test_history_control_holds_each_prior_task_once(tmp_path: Path) -> None:
    family = load_family(EXAMPLE)
    prior: list[tuple[object, TrialResult]] = []
    text = ""
    for task in family.tasks:
        text = _history_instruction(prior, tmp_path, task.instruction, 100_000)  # type: ignore[arg-type]
        # the history trial's own trajectory opens with the history prompt it was given
        prior.append((task, _result(tmp_path, task.id, text)))
    # the 5th task's prompt: each of the four earlier tasks once, and what the agent did in each
    assert text.count("Earlier tasks of this family") == 1
    for task in family.tasks[:4]:
        assert text.count(f"### {task.id} ") == 1 and text.count(f"did {task.id}") == 1
    assert text.endswith(family.tasks[4].instruction)


def test_patch_prompt_placeholders(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("{library}\n{trajectory}\n{skill_library}\n")
    with pytest.raises(UserError) as info:
        load_template(bad)
    message = str(info.value)
    assert "unknown placeholder {skill_library}" in message and "\n" not in message
    assert all("{" + p + "}" in message for p in PLACEHOLDERS)
    good = tmp_path / "good.md"  # JSON braces are no placeholder; a value holding braces is not re-filled
    good.write_text('Answer {"summary": ...}\n{family} {position}/{total}\n{library}\n{trajectory}\n')
    result = _result(tmp_path, "ledger-1", "x")
    out = render_prompt(
        load_template(good),
        library=tmp_path / "empty",
        position=1,
        total=5,
        family="{trajectory}",
        instruction="i",
        result=result,
        final_message=None,
        trajectory=None,
        budget_tokens=1000,
    )
    assert out.startswith('Answer {"summary": ...}\n{trajectory} 1/5\n(empty: no skill yet)\n(no trajectory)')


def test_a_stored_answer_is_capped() -> None:
    from skillworks.evolve.driver import MAX_STORED_ANSWER_CHARS, _cap

    big = "x" * (50 * 1024 * 1024)
    kept = _cap(big, MAX_STORED_ANSWER_CHARS)
    assert len(kept) < MAX_STORED_ANSWER_CHARS + 100 and kept.endswith("characters cut)")
    assert _cap("small", MAX_STORED_ANSWER_CHARS) == "small"


# SkillFlow's user prompt template is a Python str.format string over its own names (doubled braces are
# literal); this one is written here in that form, with every one of its placeholders
SKILLFLOW_STYLE = (
    "## Existing skill library\n### Tree\n{tree_json}\n\n### Existing files\n{files_block}\n\n## Trial summary\n"
    "- Task name: {task_name}\n- Task source: {task_source}\n- Verifier passed: {verifier_passed}\n"
    "- Reward: {reward}\n- Exception: {exception_info}\n- Failed tests: {failed_tests}\n\n"
    "## Final agent message\n{final_message}\n\n## Compacted execution trace\n{trajectory_json}\n\n"
    'Return {{"summary": "...", "upsert_files": {{}}, "delete_paths": []}}\n'
)


def test_skillflows_own_placeholders_are_filled(tmp_path: Path) -> None:
    template = tmp_path / "skillflow.md"
    template.write_text(SKILLFLOW_STYLE)
    lib = tmp_path / "lib"
    (lib / "csv-sums").mkdir(parents=True)
    (lib / "csv-sums" / "SKILL.md").write_text("---\nname: csv-sums\ndescription: d\n---\nuse {trajectory_json}\n")
    result = _result(tmp_path, "ledger-1", "Total the ledger.")
    out = render_prompt(
        load_template(template),
        library=lib,
        position=1,
        total=5,
        family="fam",
        instruction="i",
        result=result,
        final_message="did it",
        trajectory=tmp_path / result.paths["trajectory"],
        budget_tokens=1000,
        task_source="/data/fam/ledger-1",
    )
    assert '### Tree\n[\n  "csv-sums/SKILL.md"\n]' in out
    assert "### csv-sums/SKILL.md\n```\n---\nname: csv-sums" in out and "use {trajectory_json}" in out  # not re-filled
    assert "- Task name: ledger-1\n- Task source: /data/fam/ledger-1\n- Verifier passed: False\n" in out
    assert "- Reward: 0.0\n- Exception: None\n- Failed tests: []\n" in out
    assert "## Final agent message\ndid it\n" in out
    trace = out.split("## Compacted execution trace\n")[1].split("\n\nReturn")[0]
    assert json.loads(trace) == ["[user] Total the ledger.", "[agent] did ledger-1"]
    assert out.endswith('Return {"summary": "...", "upsert_files": {}, "delete_paths": []}\n')  # braces unescaped
    empty = render_prompt(
        load_template(template),
        library=tmp_path / "none",
        position=1,
        total=1,
        family="f",
        instruction="i",
        result=result,
        final_message=None,
        trajectory=None,
        budget_tokens=100,
    )
    assert "### Existing files\n<empty library>\n" in empty and "### Tree\n[]\n" in empty


def test_a_skillflow_template_without_a_trajectory_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("{tree_json}\n{task_name}\n")
    with pytest.raises(UserError) as info:
        load_template(bad)
    assert "(SkillFlow's: {files_block} or {tree_json}, and {trajectory_json})" in str(info.value)
    bad.write_text("{files_block}\n{trajectory_json}\n{skill_library}\n")
    with pytest.raises(UserError) as info:
        load_template(bad)
    message = str(info.value)
    assert "unknown placeholder {skill_library}" in message and "\n" not in message
    assert all("{" + p + "}" in message for p in SKILLFLOW_PLACEHOLDERS)


def test_the_patch_call_has_the_system_part_the_scripted_provider_checks(tmp_path: Path) -> None:
    """The patch call over the gateway's real HTTP channel (a unix socket) to the scripted provider, the one
    test double: each turn's `expect` fails the call unless the request has the system part (SkillFlow sends
    one) and the prompt as the user turn; the retry after a malformed answer keeps the system part."""
    from skillworks.evolve.driver import _patch_call
    from skillworks.gateway import Gateway, read_calls

    phrase = "A skill is a reusable capability, not a note about one task."
    assert phrase in PATCH_SYSTEM and "exactly two keys, `name`" in PATCH_SYSTEM
    patch = {"summary": "s", "upsert_files": [], "delete_paths": []}
    expect = {"system_contains": phrase}
    script = {
        "by_task": {
            "t@patch": [
                {"text": "not json", "expect": {**expect, "last_user_contains": "THE PROMPT"}},
                {"text": json.dumps(patch), "expect": {**expect, "last_user_contains": "not a valid patch"}},
            ]
        }
    }
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(script))
    log = tmp_path / "patch.gateway.jsonl"

    async def call() -> tuple[object, str | None, list[str]]:
        async with Gateway(model=f"scripted/{path}") as gateway:
            return await _patch_call(gateway, "c", log, "t@patch", None, "THE PROMPT")

    parsed, error, answers = asyncio.run(call())
    assert error is None and parsed is not None and answers == ["not json", json.dumps(patch)]
    assert [c.status for c in read_calls(log)] == ["ok", "ok"]
    # a provider that sees no system part fails the turn: the check is real
    script["by_task"]["t@patch"] = [{"text": json.dumps(patch), "expect": {"system_contains": "NOT IN IT"}}]
    path.write_text(yaml.safe_dump(script))
    log.unlink()
    parsed, error, _ = asyncio.run(call())
    assert parsed is None and error is not None and "expected the system part to contain 'NOT IN IT'" in error


def test_an_oversized_patch_answer_is_stored_once_and_capped(tmp_path: Path) -> None:
    """A 6 MB patch answer over the gateway's real HTTP channel (scripted provider, the one test double): the
    patch record keeps it capped (`_cap`), and the call's gateway.jsonl, which records answers for replay,
    keeps only its size (`response_omitted`) rather than a second full copy; a small answer is recorded."""
    from skillworks.evolve.driver import _patch_call
    from skillworks.gateway import Gateway, read_calls
    from skillworks.gateway.server import MAX_RECORDED_RESPONSE_CHARS

    huge = "x" * (6 * 1024 * 1024)
    assert len(huge) > MAX_RECORDED_RESPONSE_CHARS
    patch = {"summary": "s", "upsert_files": [], "delete_paths": []}
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump({"by_task": {"t@patch": [{"text": huge}, {"text": json.dumps(patch)}]}}))
    log = tmp_path / "patch.gateway.jsonl"

    async def call() -> tuple[object, str | None, list[str]]:
        async with Gateway(model=f"scripted/{path}") as gateway:
            return await _patch_call(gateway, "c", log, "t@patch", None, "THE PROMPT")

    _, _, answers = asyncio.run(call())
    assert answers[0] == huge
    calls = read_calls(log)
    assert calls[0].response is None and calls[0].response_omitted and "6,2" in calls[0].response_omitted
    assert calls[1].response is not None and calls[1].response_omitted is None
    assert log.stat().st_size < 1024 * 1024  # the 6 MB answer is not in the gateway record
