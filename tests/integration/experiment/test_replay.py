"""Record and replay (`skillworks run --replay RUN`): a recorded run's trials run again with every model call
answered from the recording. The model provider is the one test double (the `scripted` provider; no model
API is reachable in tests) and it is *gone* during the replay (its script deleted); the sandbox
(bubblewrap), the gateway's HTTP channel, the builtin agent and the verifier are real."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillworks.experiment import RunStore
from skillworks.gateway import read_calls

pytestmark = [pytest.mark.bwrap]

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "tasks_sandbox" / "selfgen-sum"
SUM = "grep -v '^#' /app/data/numbers.txt | awk 'NF{s+=$1} END{printf \\\"%.1f\\\\n\\\", s}'"
SCRIPT = f"""
- text: "summing"
  tool_calls:
    - {{name: bash, arguments: {{command: "mkdir -p /app/output && {SUM} > /app/output/total.txt && cat /app/output/total.txt"}}}}
  usage: {{input_tokens: 100, output_tokens: 10}}
  cost_usd: 0.01
- {{text: "done", usage: {{input_tokens: 120, output_tokens: 5}}, cost_usd: 0.01}}
"""
_VOLATILE = re.compile(rb'"(session_id|timestamp)": "[^"]*"')


def _record(cli: Any, tmp_path: Path, task: Path, *extra: str) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    runs = tmp_path / "runs"
    args = ["--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "none,curated"]
    done = cli("run", str(task), *args, "--trials", "2", "--out", str(runs), "--run-id", "rec", *extra)
    assert done.returncode == 0, done.stderr
    script.unlink()  # the provider is unavailable from here on
    return runs / "rec"


def test_replay_reproduces_each_trial_with_no_provider(cli: Any, tmp_path: Path) -> None:
    rec = _record(cli, tmp_path, TASK)
    done = cli("run", "--replay", str(rec), "--out", str(tmp_path / "runs"), "--run-id", "rep")
    assert done.returncode == 0, done.stderr
    assert "replay: 4 of 4 trial(s) reproduced" in done.stderr
    rep = tmp_path / "runs" / "rep"
    old = {r.trial_id: r for r in RunStore(rec).read_results()}
    new = {r.trial_id: r for r in RunStore(rep).read_results()}
    assert set(old) == set(new) and len(new) == 4
    for trial_id, r in new.items():
        assert r.error is None and r.reward == old[trial_id].reward == 1.0
        assert r.usage.cost_usd == 0.0 and old[trial_id].usage.cost_usd == pytest.approx(0.02)  # nothing paid
        assert r.usage.input_tokens == old[trial_id].usage.input_tokens
        a = (rec / "trials" / trial_id / "trajectory.json").read_bytes()
        b = (rep / "trials" / trial_id / "trajectory.json").read_bytes()
        # byte for byte once the two wall-clock facts (session id, step timestamps) are masked
        assert _VOLATILE.sub(b"<masked>", a) == _VOLATILE.sub(b"<masked>", b)
        assert len(_VOLATILE.findall(a)) >= 5
        calls = read_calls(rep / "trials" / trial_id / "gateway.jsonl")
        assert [(c.provider, c.cost_source, c.attempts) for c in calls] == [("replay", "replay", 1)] * 2
    report = json.loads((rep / "replay.json").read_text())
    assert {t["trajectory"] for t in report["trials"]} == {"identical_masked"}
    assert json.loads((rep / "experiment.json").read_text())["extra"]["replay_of"] == str(rec.resolve())


def test_replay_divergence_names_trial_and_step_and_bodies_can_be_withheld(cli: Any, tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(TASK, task)
    rec = _record(cli, tmp_path, task)
    numbers = task / "environment" / "data" / "numbers.txt"
    numbers.write_text(numbers.read_text() + "1000\n")  # the tool's output, and so the next request, changes
    runs = tmp_path / "runs"
    done = cli("run", "--replay", str(rec), "--out", str(runs), "--run-id", "rep")
    assert done.returncode == 1, done.stderr
    assert re.search(
        r"failed: .*replay: trial \w+__\w+__builtin-script__t\d, model call 2: the request differs from "
        r"the recording: message 4 \(tool\) differs",
        done.stderr,
    ), done.stderr
    results = RunStore(runs / "rep").read_results()
    assert {r.error.category for r in results if r.error} == {"replay_mismatch"} and len(results) == 4
    # privacy: a run recorded without bodies keeps none, and cannot be replayed (one line naming the file)
    private = tmp_path / "private"
    private.mkdir()
    rec2 = _record(cli, private, TASK, "--no-record-bodies")
    logs = list((rec2 / "trials").glob("*/gateway.jsonl"))
    assert logs and all(c.response is None and c.request_sha256 for p in logs for c in read_calls(p))
    assert "summing" not in "".join(p.read_text() for p in logs)
    refused = cli("run", "--replay", str(rec2), "--out", str(runs))
    assert refused.returncode == 2 and "recorded without their response bodies" in refused.stderr
    assert "gateway.jsonl" in refused.stderr
    # bad input: not a run, a plan flag with --replay, Ray
    assert "not a run directory" in cli("run", "--replay", str(tmp_path), "--out", str(runs)).stderr
    flag = cli("run", "--replay", str(rec), "--model", "scripted/x.yaml", "--out", str(runs))
    assert flag.returncode == 2 and "drop --model" in flag.stderr
    ray = cli("run", "--replay", str(rec), "--executor", "ray", "--out", str(runs))
    assert ray.returncode == 2 and "--replay runs on this machine" in ray.stderr
