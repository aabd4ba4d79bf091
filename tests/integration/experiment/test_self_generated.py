"""Issue 12, self-generated condition: a creator session writes skill packs in its own sandbox; the solver
uses them in a new one. The model provider is the one test double (the `scripted` provider replays the
creator's and the solver's turns, tests/fixtures/selfgen/builtin.yaml); sandboxes, the gateway, the
builtin agent, `skillworks check`, the leakage audit and the verifier are real.

The creator attacks: it reads for the verifier and the oracle, leaves a marker and the answer in its own
workspace, copies the verifier into a pack, plants an answer-key pack, a pack with a symlink and a broken
pack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillworks.experiment import RunStore
from skillworks.gateway import read_calls
from skillworks.results import TrialResult

pytestmark = [pytest.mark.bwrap]

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "tests" / "fixtures" / "tasks_sandbox" / "selfgen-sum"
SCRIPT = REPO / "tests" / "fixtures" / "selfgen" / "builtin.yaml"


def _run(cli: Any, out: Path, run_id: str, *extra: str, conditions: str = "none,curated,self-generated") -> Any:
    return cli(
        "run", str(TASK), "--agent", "builtin", "--model", f"scripted/{SCRIPT}", "--conditions", conditions,
        "--out", str(out), "--run-id", run_id, *extra,
    )  # fmt: skip


def _sums(path: Path) -> tuple[int, int, int]:
    calls = read_calls(path)
    return sum(c.input_tokens for c in calls), sum(c.output_tokens for c in calls), len(calls)


def test_self_generated_creator_and_solver_are_isolated_and_reported(tmp_path: Path, cli: Any) -> None:
    proc = _run(cli, tmp_path, "sg")
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    run_dir = tmp_path / "sg"
    results = {r.condition: r for r in RunStore(run_dir).read_results()}
    assert set(results) == {"none", "curated", "self-generated"}
    assert all(r.error is None for r in results.values()), [r.error for r in results.values()]
    sg = results["self-generated"]
    trial = run_dir / "trials" / sg.trial_id
    creator = trial / "creator"

    # the solver ran in a new sandbox: the verifier's "no creator state" test passed, and the creator's
    # marker, its answer file and its generated-skills dir were not there (reward 1 needs both tests)
    assert sg.reward == 1.0
    assert {t.name: t.status for t in sg.tests} == {"test_total": "passed", "test_no_creator_state": "passed"}
    solver_obs = json.dumps(json.loads((trial / "trajectory.json").read_text())["steps"])
    assert "cannot access '/app/creator-was-here'" in solver_obs

    # the creator could not read the verifier or the oracle; nothing of them reached a pack
    creator_obs = json.dumps(json.loads((creator / "trajectory.json").read_text())["steps"])
    for path in ("/verifier/test.sh", "/tests/test.sh", "/oracle/solve.sh", "/solution/solve.sh"):
        assert f"cat: {path}: No such file or directory" in creator_obs
    assert "cp: cannot stat '/verifier'" in creator_obs
    # the task's own skill (staged under `curated`) is nowhere in the creator's sandbox
    assert results["curated"].skills_staged[0].startswith("task-only-skill@")
    steps = json.loads((creator / "trajectory.json").read_text())["steps"]
    outputs = [o["content"] for st in steps for o in (st.get("observation") or {}).get("results") or []]
    assert "find-done" in outputs[0] and "task-only-skill" not in outputs[0]
    generated = creator / "generated-skills"
    assert sorted(p.name for p in generated.iterdir()) == [
        "answer-sheet",
        "broken",
        "fetcher",
        "linky",
        "number-summing",
    ]
    for f in generated.rglob("*"):
        if f.is_file() and not f.is_symlink():
            assert "test_no_creator_state" not in f.read_text(errors="replace")
    # the creator saw exactly one skill: the project's authoring skill
    creator_audit = json.loads((creator / "skills.json").read_text())
    assert creator_audit["ok"] and [v["name"] for v in creator_audit["visible"]] == ["skill-authoring"]

    # packs: saved, hashed, checked and audited; only the good one reaches the solver
    assert sg.skill_source is not None
    record = sg.skill_source.record
    status = {p["dir"]: p["status"] for p in record["packs"]}
    assert status == {
        "answer-sheet": "answer_key",
        "broken": "invalid",
        "fetcher": "check_failed",
        "linky": "invalid",
        "number-summing": "staged",
    }
    # a pack that tells the agent to pipe a download into sh is withheld by the gate (issue 25)
    fetcher = next(p for p in record["packs"] if p["dir"] == "fetcher")
    assert "sec-remote-exec" in fetcher["reason"]
    assert record["answer_keys"] == ["answer-sheet"]
    assert sg.skills_staged == record["staged"] and sg.skills_staged[0].startswith("number-summing@")
    audit = json.loads((trial / "skills.json").read_text())
    assert audit["ok"] and [v["name"] for v in audit["visible"]] == ["number-summing"]
    creation = json.loads((creator / "creation.json").read_text())
    staged = next(p for p in creation["packs"] if p["status"] == "staged")
    from skillworks.skills.package import hash_directory

    assert staged["package_hash"] == hash_directory(generated / "number-summing")

    # SIR counts the generated pack's use
    assert sg.skill_use.invoked == ["number-summing"] and sg.skill_use.scripts_run == ["number-summing/scripts/sum.py"]

    # creator usage is its own gateway log; the solver's usage is the trial's gateway log; never mixed
    assert sg.skill_source.usage is not None
    creator_usage = sg.skill_source.usage
    assert (creator_usage.input_tokens, creator_usage.output_tokens, creator_usage.calls) == _sums(
        creator / "gateway.jsonl"
    )
    assert (sg.usage.input_tokens, sg.usage.output_tokens, sg.usage.calls) == _sums(trial / "gateway.jsonl")
    assert creator_usage.calls == 6 and sg.usage.calls == 3

    summary = json.loads((run_dir / "summary.json").read_text())
    (src_row,) = summary["skill_source_usage"]
    assert (src_row["condition"], src_row["input_tokens"], src_row["calls"]) == (
        "self-generated",
        creator_usage.input_tokens,
        6,
    )
    usage_rows = {u["condition"]: u for u in summary["usage"]}
    assert usage_rows["self-generated"]["input_tokens"] == sg.usage.input_tokens
    sir = {row["condition"]: row for row in summary["skill_invocation"]}
    assert sir["self-generated"]["invoked_trials"] == 1
    assert {p["pack"]: p["status"] for p in summary["generated_packs"]}["answer-sheet"] == "answer_key"
    report = (run_dir / "report.md").read_text()
    section = report.split("## Skill sources (skills produced per trial)", 1)[1].split("## Errors", 1)[0]
    assert f"{creator_usage.input_tokens:,}" in section and "answer-sheet@" in section and "answer_key" in section
    assert src_row["seconds"] == pytest.approx(record["creator_seconds"]) and src_row["seconds"] > 0
    assert "| Seconds |" in section
    assert "1 generated pack(s) are answer keys" in section
    spec = json.loads((run_dir / "experiment.json").read_text())
    assert spec["extra"]["self_generated"]["reuse"] is False
    assert spec["extra"]["self_generated"]["creator_skill"] == "default"

    # none/curated never ran a creator
    assert results["none"].skill_source is None and results["none"].reward == 0.0


def test_selfgen_reuse_generates_once_per_task_and_agent(tmp_path: Path, cli: Any) -> None:
    authoring = tmp_path / "house-authoring"  # --creator-skill DIR: the user's own authoring skill
    authoring.mkdir()
    (authoring / "SKILL.md").write_text(
        "---\nname: house-authoring\ndescription: Our house rules for writing skills. Use when authoring skills.\n"
        "---\n# House rules\n\nOne pack per task type; every script gets a --help line.\n"
    )
    proc = _run(cli, tmp_path, "reuse", "--selfgen-reuse", "--trials", "3", "--concurrency", "3",
                "--creator-skill", str(authoring), conditions="self-generated")  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    run_dir = tmp_path / "reuse"
    results: list[TrialResult] = RunStore(run_dir).read_results()
    assert len(results) == 3 and all(r.reward == 1.0 for r in results), [r.error for r in results]
    shared = run_dir / "self-generated" / "selfgen-sum__builtin-builtin"
    assert (shared / "creation.json").is_file()
    assert len(read_calls(shared / "gateway.jsonl")) == 6  # one creator session for the three trials
    assert not any((run_dir / "trials" / r.trial_id / "creator").exists() for r in results)
    records = [r.skill_source for r in results if r.skill_source is not None]
    assert len(records) == 3 and len({tuple(r.record["staged"]) for r in records}) == 1
    assert sorted(r.record["reused"] for r in records) == [False, True, True]
    assert sum(1 for r in records if r.usage is not None) == 1  # paid once
    spec = json.loads((run_dir / "experiment.json").read_text())
    assert spec["extra"]["self_generated"]["reuse"] is True
    assert spec["extra"]["self_generated"]["creator_skill"] == str(authoring.resolve())
    assert all(r.record["authoring_skill"].startswith("house-authoring@") for r in records)
    creator_audit = json.loads((shared / "skills.json").read_text())
    assert [v["name"] for v in creator_audit["visible"]] == ["house-authoring"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["skill_source_usage"][0]["source_runs"] == 1


def test_a_failing_creator_is_a_skill_source_error(tmp_path: Path, cli: Any) -> None:
    script = tmp_path / "fail.yaml"
    script.write_text(
        "by_task:\n  selfgen-sum@self-generated-creator:\n    - text: x\n      fail: {status: 500, times: 9}\n"
    )
    proc = cli("run", str(TASK), "--agent", "builtin", "--model", f"scripted/{script}", "--conditions",
               "self-generated", "--out", str(tmp_path), "--run-id", "f")  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # every trial errored: exit 1
    (r,) = RunStore(tmp_path / "f").read_results()
    assert r.outcome == "error" and r.reward is None
    assert r.error is not None and r.error.category == "skill_source_error" and "creator session" in r.error.message


@pytest.mark.parametrize(
    ("swap", "problem"),
    [
        (
            "rm -rf /home/agent/generated-skills; ln -s /usr/share /home/agent/generated-skills",
            "generated-skills is a symlink, not the directory it was created as",
        ),
        (
            "mkdir -p /home/agent/generated-skills/big; head -c 42000000 /dev/zero > /home/agent/generated-skills/big/x",
            "KiB; at most 40960 KiB is kept",
        ),
    ],
    ids=["symlink", "oversized"],
)
def test_creator_cannot_write_outside_its_sandbox_or_swap_the_packs_dir(
    tmp_path: Path, cli: Any, swap: str, problem: str
) -> None:
    """The creator writes into the host's run dir, task dir and repository (hidden from it), then replaces
    its generated-skills dir by a symlink to /usr/share, or fills it: nothing reaches the host, nothing is
    downloaded, the reason is recorded and reported, and the solver runs with no skill."""
    run_dir = tmp_path / "swap"
    script = tmp_path / "swap.yaml"
    command = f"echo pwned > {run_dir}/pwned; echo pwned > {TASK}/pwned; echo pwned > {REPO}/pwned; {swap}"
    script.write_text(
        json.dumps(
            {
                "by_task": {
                    "selfgen-sum@self-generated-creator": [
                        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                        {"text": "done"},
                    ],
                    "selfgen-sum@self-generated": [{"text": "Nothing to do."}],
                }
            }
        )
    )
    proc = cli("run", str(TASK), "--agent", "builtin", "--model", f"scripted/{script}", "--conditions",
               "self-generated", "--out", str(tmp_path), "--run-id", "swap")  # fmt: skip
    assert proc.returncode == 0 or (proc.returncode == 1 and "\nfailed: every trial errored" in proc.stderr), (
        proc.stderr
    )
    for host in (run_dir / "pwned", TASK / "pwned", REPO / "pwned"):
        assert not host.exists()
    (r,) = RunStore(run_dir).read_results()
    assert r.error is None and r.skills_staged == [] and r.skill_source is not None
    assert problem in r.skill_source.record["generated_problem"]
    creator = run_dir / r.skill_source.record["creator_dir"]
    assert not (creator / "generated-skills").exists() and not (creator / "generated-skills").is_symlink()
    assert sum(f.stat().st_size for f in run_dir.rglob("*") if f.is_file()) < 5_000_000  # not /usr/share
    summary = json.loads((run_dir / "summary.json").read_text())
    (row,) = summary["generated_packs"]
    assert (row["pack"], row["status"]) == ("(generated-skills)", "invalid") and problem in row["reason"]


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("/nonexistent/authoring", "not a skill directory"),
        ("bundled", "agent builtin bundles no skill creator"),
    ],
)
def test_bad_creator_skill_is_one_line_error(tmp_path: Path, cli: Any, flag: str, message: str) -> None:
    proc = _run(cli, tmp_path, "bad", "--creator-skill", flag, conditions="self-generated")
    assert proc.returncode != 0
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "bad").exists()
