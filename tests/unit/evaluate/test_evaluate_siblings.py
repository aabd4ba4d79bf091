"""ACES workspaces: which sibling skills a group workspace stages, the conditions that show them, the
routing table, an old eval plan's `workspace` read as case files, and one line per bad input."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.evaluate import find_siblings
from skillworks.evaluate.run import read_plan
from skillworks.provision.conditions import SkillSet, get_condition
from skillworks.report.eval_routing import routing_rows
from skillworks.results import SkillUse, TrialError, TrialResult
from skillworks.skills.package import load_skill


def _skill(root: Path, name: str, cases: bool = False) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} test skill.\n---\nBody\n")
    if cases:
        (d / "evals").mkdir()
        (d / "evals" / "evals.json").write_text(json.dumps([{"id": "a", "question": "Q"}]))
    return d


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    """skills/{target (with a case), alpha, beta, support-one} and a plain dir without SKILL.md."""
    skills = tmp_path / "skills"
    _skill(skills, "target", cases=True)
    for name in ("alpha", "beta", "support-one"):
        _skill(skills, name)
    (skills / "notes").mkdir()
    return skills


def test_siblings_by_mode(collection: Path) -> None:
    target = load_skill(collection / "target")
    assert find_siblings(target, "isolation") == []
    found = find_siblings(target, "group", taken={"support-one"})  # the collection, minus other roles
    assert [s.name for s in found] == ["alpha", "beta"]
    explicit = find_siblings(target, "group", [collection / "beta"])
    assert [s.name for s in explicit] == ["beta"]


def test_conditions_show_siblings_on_both_sides(collection: Path) -> None:
    target, alpha, support = (load_skill(collection / n) for n in ("target", "alpha", "support-one"))
    skills = SkillSet(target=target, support=(support,), siblings=(alpha,))
    task = None  # the ACES conditions do not look at the task
    with_skill = get_condition("with-skill").select(task, skills)  # type: ignore[arg-type]
    withheld = get_condition("target-withheld").select(task, skills)  # type: ignore[arg-type]
    assert [s.name for s in with_skill] == ["support-one", "alpha", "target"]
    assert [s.name for s in withheld] == ["support-one", "alpha"]


def _result(condition: str, invoked: list[str], scripts: list[str] = [], error: bool = False) -> TrialResult:  # noqa: B006
    now = datetime.now(UTC)
    return TrialResult(
        trial_id=f"t-{condition}-{len(invoked)}-{len(scripts)}-{error}",
        run_id="r",
        task_id="target--a",
        condition=condition,
        agent="builtin",
        trial_index=0,
        seed=0,
        outcome="error" if error else "ungraded",
        error=TrialError(category="agent_error", message="x", phase="agent") if error else None,
        skill_use=SkillUse(invoked=invoked, scripts_run=scripts),
        started_at=now,
        finished_at=now,
    )


def test_routing_counts_target_sibling_and_misroutes() -> None:
    spec = {
        "conditions": ["with-skill", "target-withheld"],
        "target_skill": {"name": "target"},
        "extra": {"eval": {"sibling_names": ["beta", "alpha", "gamma"]}},
    }
    results = [
        _result("target-withheld", ["alpha"]),
        _result("with-skill", ["target"]),
        _result("with-skill", ["target", "alpha"]),
        _result("with-skill", [], ["beta/scripts/run.py"]),  # a sibling's script: a misroute
        _result("with-skill", []),
        _result("with-skill", ["beta"], error=True),  # errored trials are left out
    ]
    row, baseline = routing_rows([(spec, results)])  # in the conditions' order
    assert (row.trials, row.target_loaded, row.sibling_loaded, row.sibling_only, row.none_loaded) == (4, 2, 2, 1, 1)
    assert row.by_sibling == {"alpha": 1, "beta": 1}  # gamma, never loaded, is left out
    assert (baseline.condition, baseline.sibling_only, baseline.by_sibling) == ("target-withheld", 1, {"alpha": 1})
    assert routing_rows([({"extra": {"eval": {"sibling_names": []}}}, results)]) == []  # isolation: no table


def test_an_old_plan_workspace_is_read_as_case_files(tmp_path: Path) -> None:
    options = {"skill": str(tmp_path), "workspace": "group"}
    (tmp_path / "eval_plan.json").write_text(json.dumps({"schema": "skillworks.eval-plan/1", "options": options}))
    plan = read_plan(tmp_path)
    assert (plan.workspace, plan.case_files) == ("isolation", "all")


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", "eval", *args, "--dry-run"])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_cli_dry_run_names_the_siblings(
    collection: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(collection / "target"), "--workspace", "group", "--support", str(collection / "support-one")]
    assert _cli(monkeypatch, *args) == 0
    assert "workspace group: target + siblings alpha, beta" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--case-files", "mine"], "error: unknown --case-files 'mine' (allowed: own, all)"),
        (["--sibling", "{c}/alpha"], "error: {c}/alpha: --sibling needs --workspace group (isolation stages the "
         "target alone)"),
        (["--workspace", "group", "--sibling", "{c}/notes"], "error: {c}/notes: --sibling: missing SKILL.md"),
        (["--workspace", "group", "--sibling", "{c}/target"],
         "error: {c}/target: --sibling: this is the target skill 'target', not a sibling"),
        (["--workspace", "group", "--sibling", "{c}/alpha", "--decoys", "{c}/alpha"],
         "error: {c}/alpha: --sibling: skill 'alpha' is already given as a support or decoy skill"),
    ],
)  # fmt: skip
def test_cli_bad_sibling_input(
    collection: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    assert _cli(monkeypatch, str(collection / "target"), *(a.format(c=collection) for a in args)) == 2
    assert capsys.readouterr().err.strip() == message.format(c=collection)


def test_cli_group_without_siblings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _skill(tmp_path / "alone", "target", cases=True)
    assert _cli(monkeypatch, str(target), "--workspace", "group") == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {target.parent}: --workspace group: no sibling skill beside the target (another directory here "
        "with a SKILL.md); give --sibling DIR"
    )


def test_cli_group_with_a_broken_skill_beside_the_target(
    collection: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _skill(collection, "gamma")
    (broken / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\n")
    assert _cli(monkeypatch, str(collection / "target"), "--workspace", "group") == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {broken}/SKILL.md: --workspace group: sibling skill cannot be loaded: skill name 'other' does not "
        "match its directory name 'gamma' (name the siblings with --sibling DIR)"
    )
