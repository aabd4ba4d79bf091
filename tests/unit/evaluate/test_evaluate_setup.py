"""Eval set-up: case workspaces, the evaluation copy of the target, product targets, decoys, graders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skillworks.errors import UserError
from skillworks.evaluate import choose_decoys, evaluation_copy, load_product, prepare_workspaces
from skillworks.evaluate.product import register_product_conditions
from skillworks.grading.graders import load_grader, run_grader
from skillworks.provision.conditions import SkillSet, get_condition
from skillworks.skills.package import load_skill
from skillworks.tasks import load_eval_cases

EX = Path(__file__).resolve().parents[3] / "examples" / "eval"


def _skill(root: Path, name: str) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} test skill.\n---\nBody\n")
    return d


def _two_case_skill(tmp_path: Path) -> Path:
    root = _skill(tmp_path, "two-cases")
    files = root / "evals" / "files"
    files.mkdir(parents=True)
    (files / "a.txt").write_text("a")
    (files / "b").mkdir()
    (files / "b" / "inner.txt").write_text("b")
    (root / "evals" / "evals.json").write_text(
        json.dumps(
            [
                {"id": "one", "question": "Q1", "files": ["evals/files/a.txt"]},
                {"id": "two", "question": "Q2", "files": ["evals/files/b"]},
                {"id": "three", "question": "Q3"},
            ]
        )
    )
    (root / "EVAL.md").write_text("---\n---\nnotes\n")
    return root


def _files(d: Path | None) -> list[str]:
    assert d is not None
    return sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())


def test_case_files_own_and_all(tmp_path: Path) -> None:
    tasks = load_eval_cases(_two_case_skill(tmp_path))
    iso = prepare_workspaces(tasks, tmp_path / "iso", "own")
    assert [_files(t.environment.dir) for t in iso] == [["evals/files/a.txt"], ["evals/files/b/inner.txt"], []]
    assert [t.content_hash for t in iso] == [t.content_hash for t in tasks]  # seeding does not change identity
    group = prepare_workspaces(tasks, tmp_path / "grp", "all")
    assert len({t.environment.dir for t in group}) == 1
    assert _files(group[0].environment.dir) == ["evals/files/a.txt", "evals/files/b/inner.txt"]


def test_evaluation_copy_drops_eval_assets(tmp_path: Path) -> None:
    root = _two_case_skill(tmp_path)
    (root / "scripts").mkdir()
    (root / "scripts" / "evals").write_text("a script named evals, not an eval asset")
    copy = evaluation_copy(load_skill(root), tmp_path / "staged")
    paths = sorted(a.path for a in copy.assets)
    assert paths == ["scripts/evals"]
    assert copy.name == "two-cases" and copy.root == (tmp_path / "staged" / "two-cases").resolve()


def test_product_targets_and_conditions(tmp_path: Path) -> None:
    product = load_product(EX / "product.yaml", tmp_path / "staged")
    assert [t.name for t in product.targets] == ["plain", "skill", "bundle", "team", "plugin"]
    assert product.baseline.name == "plain"
    by = {t.name: [s.name for s in t.skills] for t in product.targets}
    assert by == {
        "plain": [],
        "skill": ["invoice-vat-total"],
        "bundle": ["invoice-vat-total", "csv-column-stats"],
        "team": ["csv-column-stats", "invoice-vat-total"],
        "plugin": ["vat-rates"],
    }
    for t in product.targets:
        for s in t.skills:
            assert not any(a.path.startswith("evals/") for a in s.assets)
    register_product_conditions(product)
    support = load_skill(EX / "support" / "json-basics")
    selected = get_condition("product-bundle").select(
        load_eval_cases(EX / "skills" / "csv-column-stats")[0], SkillSet(support=(support,))
    )
    assert [s.name for s in selected] == ["json-basics", "invoice-vat-total", "csv-column-stats"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("targets: [{name: a, type: baseline}]", "targets: List should have at least 2 items"),
        ("targets: [{name: a, type: baseline}, {name: b, type: skil, path: x}]", "targets.1.type: Input should be"),
        ("targets: [{name: a, type: baseline}, {name: b, type: skill}]", "a skill target needs 'path'"),
        ("targets: [{name: a, type: baseline}, {name: b, type: skill, path: x, extra: 1}]",
         "targets.1.extra: unknown key (allowed: name, type, path, paths, description)"),
        ("targets: [{name: a, type: skill, path: x}, {name: b, type: skill, path: y}]",
         "name the baseline target ('baseline: <name>') or give exactly one target of type baseline"),
        ("baseline: zz\ntargets: [{name: a, type: baseline}, {name: b, type: baseline}]",
         "baseline 'zz' is not one of the targets (a, b)"),
        ("targets: [{name: a, type: baseline}, {name: a, type: baseline}]", "two targets are named 'a'"),
        ("targets: [{name: a, type: baseline}, {name: B!, type: baseline}]", "must match"),
        ("targets: [{name: a, type: baseline}, {name: p, type: plugin, path: nowhere}]",
         "target 'p': no such directory"),
        ("targets: [", "not valid YAML"),
    ],
)  # fmt: skip
def test_product_errors_are_one_line(tmp_path: Path, yaml_text: str, message: str) -> None:
    path = tmp_path / "product.yaml"
    path.write_text(yaml_text)
    with pytest.raises(UserError) as err:
        load_product(path, tmp_path / "staged")
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(str(path))


def test_choose_decoys_tops_up_with_synthetic(tmp_path: Path) -> None:
    given = [load_skill(_skill(tmp_path / "g", "real-decoy"))]
    choice = choose_decoys(given, 3, tmp_path / "synth", {"decoy-csv-cleanup-1"})
    names = [d.name for d in choice.decoys]
    assert names[0] == "real-decoy" and len(names) == 3 and len(set(names)) == 3
    assert "decoy-csv-cleanup-1" not in names  # a taken name is skipped
    assert (choice.given, choice.synthetic) == (1, 2)
    assert choose_decoys(given, 0, tmp_path / "synth", set()).decoys == ()


async def test_graders_load_and_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tgraders.py").write_text(
        "async def asyncg(task, trajectory, workspace):\n    return 0.5\n"
        "def many(task, trajectory, workspace):\n    return {'a': 1, 'b': 0.25}\n"
        "def bad(task, trajectory, workspace):\n    return 'high'\n"
        "value = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("tgraders", None)
    task = load_eval_cases(EX / "skills" / "csv-column-stats")[0]
    assert await run_grader(load_grader("tgraders:asyncg"), task, None, tmp_path) == {"grader.asyncg": 0.5}
    assert await run_grader(load_grader("tgraders:many"), task, None, tmp_path) == {
        "grader.many.a": 1.0,
        "grader.many.b": 0.25,
    }
    with pytest.raises(ValueError, match="grader bad: expected a finite number, got 'high'"):
        await run_grader(load_grader("tgraders:bad"), task, None, tmp_path)
    for spec, message in [
        ("tgraders:value", "--grader tgraders:value: 'value' is not callable"),
        ("nope_mod_xyz:f", "--grader nope_mod_xyz:f: cannot import 'nope_mod_xyz'"),
        (":f", "--grader expects module:function, got ':f'"),
    ]:
        with pytest.raises(UserError) as err:
            load_grader(spec)
        assert str(err.value).startswith(message)


async def test_entry_point_graders_from_an_installed_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real (minimal) distribution on sys.path registers a grader under `skillworks.graders`."""
    from skillworks.grading.graders import ENTRY_POINT_GROUP, entry_point_graders

    (tmp_path / "epgraders.py").write_text("def length(task, trajectory, workspace):\n    return 0.125\n")
    dist = tmp_path / "epgraders-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: epgraders\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nprompt_length = epgraders:length\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graders = {g.name: g for g in entry_point_graders()}
    assert "prompt_length" in graders and graders["prompt_length"].source == "entry point prompt_length"
    task = load_eval_cases(EX / "skills" / "csv-column-stats")[0]
    assert await run_grader(graders["prompt_length"], task, None, tmp_path) == {"grader.prompt_length": 0.125}
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nbroken = epgraders:missing\n")
    with pytest.raises(UserError, match=r"grader entry point 'broken' \(epgraders:missing\) failed to load"):
        entry_point_graders()
