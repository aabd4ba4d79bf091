"""`skillworks run --executor ray` on real Ray clusters on this machine: one started in-process by the
run (`ray.init`), and a two-node cluster started with `ray start --head` plus a second `ray start` with
its own resources. Trials run in real bubblewrap sandboxes (and podman containers) on the nodes; the
builtin agent's model is the scripted provider (no model API is reachable here) behind real gateways on
the nodes. What is checked: the same results as the local executor, every planned trial recorded exactly
once — also when a worker is killed mid-trial and when the driver is interrupted and resumed."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
RAY = Path(sys.executable).with_name("ray")
SKILLWORKS = [sys.executable, "-m", "skillworks.cli.main"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _results(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _sleep_tasks(root: Path, n: int, seconds: float) -> Path:
    """n tasks whose oracle sleeps, then writes the file the verifier checks."""
    for i in range(n):
        task = root / f"sleep-{i}"
        (task / "environment").mkdir(parents=True)
        (task / "environment" / "input.txt").write_text("x\n")
        (task / "oracle").mkdir()
        (task / "oracle" / "solve.sh").write_text(
            f"#!/usr/bin/env bash\nsleep {seconds}\nmkdir -p /app/output && echo ok > /app/output/x.txt\n"
        )
        (task / "verifier").mkdir()
        (task / "verifier" / "test.sh").write_text(
            "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
            "[ -f /app/output/x.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
        )
        (task / "task.md").write_text(
            textwrap.dedent(
                """\
                ---
                schema_version: "1.3"
                environment:
                  network_mode: no-network
                  cpus: 1
                agent:
                  timeout_sec: 120
                verifier:
                  timeout_sec: 60
                ---
                Write ok to /app/output/x.txt.
                """
            )
        )
    return root


def _run(args: list[str], env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SKILLWORKS, "run", *args], cwd=REPO, capture_output=True, text=True, env={**os.environ, **(env or {})}, **kw
    )


def _driver(args: list[str], cluster: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*SKILLWORKS, "run", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **_auth(cluster)},
    )


def _by_trial(run_dir: Path) -> dict[str, tuple[Any, ...]]:
    return {
        r["trial_id"]: (r["outcome"], r["reward"], sorted(r["skill_use"]["invoked"]), r["usage"]["input_tokens"])
        for r in _results(run_dir)
    }


def test_quickstart_on_ray_in_process_matches_the_local_executor(tmp_path: Path) -> None:
    """The paired quickstart through gateways on the node gives trial-for-trial the local executor's results."""
    common = [
        "examples/quickstart",
        "--agent",
        "builtin",
        "--model",
        "scripted/examples/scripted/quickstart-builtin.yaml",
        "--conditions",
        "none,curated",
        "--out",
        str(tmp_path),
        "--concurrency",
        "4",
    ]
    ray_run = _run([*common, "--run-id", "ray", "--executor", "ray"], timeout=600)
    assert ray_run.returncode == 0, ray_run.stderr[-3000:]
    local_run = _run([*common, "--run-id", "local"], timeout=600)
    assert local_run.returncode == 0, local_run.stderr[-3000:]
    ray_results, local_results = _by_trial(tmp_path / "ray"), _by_trial(tmp_path / "local")
    assert len(ray_results) == 8 and len(_results(tmp_path / "ray")) == 8  # each trial recorded once
    assert ray_results == local_results
    assert {o for o, *_ in ray_results.values()} == {"solved", "failed"}  # the scripted none/curated split
    for trial in (tmp_path / "ray" / "trials").iterdir():
        calls = (trial / "gateway.jsonl").read_text().splitlines()
        assert calls and all(json.loads(c)["trial_id"] == trial.name for c in calls)  # per-trial gateway log
        assert json.loads(calls[0])["model"] == "scripted/examples/scripted/quickstart-builtin.yaml"
        assert (trial / "trajectory.json").is_file() and (trial / "verifier").is_dir()
        assert json.loads((trial / "ray-node.json").read_text())["node_id"]
    spec = json.loads((tmp_path / "ray" / "experiment.json").read_text())
    assert spec["extra"]["executor"]["name"] == "ray"
    assert "Δ vs none" in ray_run.stderr


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A head node and a second node on this machine, each offering bwrap and container sandboxes, each with
    its own node dir; the second node has no agent CLI installed (an empty harness cache)."""
    temp = Path("/tmp") / f"swray-{os.getpid()}"  # short: Ray's unix socket paths must stay < 108 bytes
    head_dir, second_dir = tmp_path_factory.mktemp("node-head"), tmp_path_factory.mktemp("node-second")
    no_harness = tmp_path_factory.mktemp("no-harness")
    # token authentication, as a real cluster should have; the drivers below get the same token
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
        # a busy machine starts Ray's agents slowly: wait longer than Ray's defaults before giving up
        "RAY_agent_register_timeout_ms": "180000",
        "RAY_raylet_start_wait_time_s": "180",
    }
    resources = json.dumps({"skillworks_local": 1000, "skillworks_container": 1000})

    def start(*extra: str, node_env: dict[str, str]) -> None:
        cmd = [str(RAY), "start", "--num-cpus", "2", "--resources", resources, *extra]
        done = subprocess.run(cmd, env={**env, **node_env}, capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])

    def cluster() -> str:
        port = _free_port()
        address = f"127.0.0.1:{port}"
        start(
            "--head",
            "--port",
            str(port),
            "--include-dashboard",
            "false",
            "--temp-dir",
            str(temp),
            "--ray-client-server-port",
            str(_free_port()),
            "--node-ip-address",
            "127.0.0.1",
            node_env={"SKILLWORKS_RAY_NODE_DIR": str(head_dir)},
        )
        second = {"SKILLWORKS_RAY_NODE_DIR": str(second_dir), "SKILLWORKS_HARNESS_CACHE": str(no_harness)}
        start("--address", address, "--node-ip-address", "127.0.0.1", node_env=second)
        return address

    try:
        try:
            address = cluster()
        except RuntimeError as exc:
            # Ray waits a fixed 30 s for a raylet to register: on a busy 2-core machine, once more
            if "timed out during startup" not in str(exc):
                raise
            subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)
            address = cluster()
        yield {
            "address": address,
            "RAY_AUTH_MODE": env["RAY_AUTH_MODE"],
            "RAY_AUTH_TOKEN": env["RAY_AUTH_TOKEN"],
            "head_dir": str(head_dir),
            "second_dir": str(second_dir),
        }
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def _auth(cluster: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in cluster.items() if k.startswith("RAY_AUTH")}


def _session_dirs(cluster: dict[str, str], run_id: str) -> list[Path]:
    """What driver sessions of `run_id` left in the nodes' dirs."""
    return [p for key in ("head_dir", "second_dir") for p in (Path(cluster[key]) / "runs").glob(f"{run_id}-*")]


SLOW_SUM = (
    '- text: "summing"\n'
    "  tool_calls:\n"
    '    - {name: bash, arguments: {command: "sleep 2; mkdir -p /app/output && '
    "grep -v '^#' /app/data/numbers.txt | awk 'NF{s+=$1} END{printf \\\"%.1f\\\\n\\\", s}' "
    '> /app/output/total.txt"}}\n'
    '- {text: "done"}\n'
)


def test_two_drivers_with_one_run_id_do_not_collide_and_leave_the_nodes_clean(
    two_nodes: dict[str, str], tmp_path: Path
) -> None:
    """Two drivers of the same --run-id at once (their gateways are actors on the nodes, their trial dirs
    node dirs): each records all its trials solved, and neither leaves anything in the nodes' dirs."""
    script = tmp_path / "slow.yaml"
    script.write_text(SLOW_SUM)
    task = REPO / "tests" / "fixtures" / "tasks_sandbox" / "selfgen-sum"
    ray_args = ["--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "0.5"]

    def driver(out: str, trials: int) -> subprocess.Popen[bytes]:
        args = [str(task), "--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "none"]
        args += ["--trials", str(trials), "--concurrency", "2", "--out", str(tmp_path / out), "--run-id", "same"]
        return _driver([*args, *ray_args], two_nodes)

    # the first driver ends (and stops its gateways) while the second's later trials still run
    first, second = driver("a", 2), driver("b", 4)
    for proc in (first, second):
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-3000:]
    for out, n in (("a", 2), ("b", 4)):
        results = _results(tmp_path / out / "same")
        assert len(results) == n and all(r["outcome"] == "solved" for r in results), [r["error"] for r in results]
    assert _session_dirs(two_nodes, "same") == []


def test_the_model_calls_of_an_attempt_lost_with_its_worker_are_counted(
    two_nodes: dict[str, str], tmp_path: Path
) -> None:
    """A builtin trial's worker is killed after its first model call (during a 5 s tool call): the retry
    solves it, and the lost attempt's call, read from its node's gateway record, is in the trial's usage."""
    script = tmp_path / "slow.yaml"
    script.write_text(SLOW_SUM.replace("sleep 2;", "sleep 5;"))
    task = REPO / "tests" / "fixtures" / "tasks_sandbox" / "selfgen-sum"
    args = [str(task), "--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "none"]
    args += ["--out", str(tmp_path), "--run-id", "lost", "--executor", "ray", "--ray-address", two_nodes["address"]]
    driver = _driver(args, two_nodes)
    deadline = time.monotonic() + 240
    called: list[Path] = []
    while not called and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.2)
        logs = [
            p for key in ("head_dir", "second_dir") for p in Path(two_nodes[key]).glob("runs/lost-*/trials/*/*.jsonl")
        ]
        called = [p for p in logs if p.name == "gateway.jsonl" and p.read_text().strip()]
    pids = _worker_pids()
    assert called and len(pids) == 1, "the trial made no model call"
    os.kill(pids[0], signal.SIGKILL)
    _, err = driver.communicate(timeout=600)
    assert driver.returncode == 0, err.decode()[-3000:]
    (result,) = _results(tmp_path / "lost")
    assert (result["outcome"], result["attempt"]) == ("solved", 2), result["error"]
    (lost,) = json.loads((tmp_path / "lost" / result["paths"]["trial_dir"] / "lost-attempts.json").read_text())
    assert lost["usage"]["calls"] == 1 and lost["usage"]["input_tokens"] > 0
    assert result["usage"]["calls"] == 3  # the retry's two calls and the lost attempt's one


def test_harness_trials_run_only_on_the_nodes_that_have_the_harness(two_nodes: dict[str, str], tmp_path: Path) -> None:
    """The second node has no Claude Code: the pre-flight on every node sees it, and every claude-code trial
    runs on the head node (none fails on the other as an internal error), although at one CPU per trial the
    head node cannot take all four at once."""
    script = REPO / "tests" / "fixtures" / "harness_scripts" / "claude-code.yaml"
    task = REPO / "tests" / "fixtures" / "harness_tasks" / "greeting-card"
    args = [str(task), "--agent", "claude-code", "--model", f"scripted/{script}", "--conditions", "curated"]
    args += ["--trials", "4", "--concurrency", "4", "--out", str(tmp_path), "--run-id", "h"]
    done = _run(
        [*args, "--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "1"],
        env=_auth(two_nodes),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = _results(tmp_path / "h")
    assert len(results) == 4 and all(r["outcome"] == "solved" for r in results), [r["error"] for r in results]
    where = {
        json.loads((tmp_path / "h" / r["paths"]["trial_dir"] / "ray-node.json").read_text())["node_dir"]
        for r in results
    }
    assert where == {two_nodes["head_dir"]}


def _worker_pids() -> list[int]:
    """Processes of Ray workers running a trial (Ray names them after the task)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if "ray::run_trial_on_node" in line]


def test_two_node_cluster_records_every_trial_once_despite_a_killed_worker(
    two_nodes: dict[str, str], tmp_path: Path
) -> None:
    tasks = _sleep_tasks(tmp_path / "tasks", 6, 4)
    run_dir = tmp_path / "runs" / "kill"
    args = [
        str(tasks),
        "--trials",
        "2",
        "--conditions",
        "none",
        "--concurrency",
        "6",
        "--out",
        str(tmp_path / "runs"),
        "--run-id",
        "kill",
    ]
    args += ["--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "0.5"]
    driver = _driver(args, two_nodes)
    deadline = time.monotonic() + 240
    pids: list[int] = []
    while not pids and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.5)
        pids = _worker_pids()
    assert pids, "no trial started on the cluster"
    # a worker is named after its task before the driver's tracker has noted its start; kill one only once
    # a trial has got past that (its trial dir on a node exists), so the lost attempt has a node and pid
    while time.monotonic() < deadline and not any(list(d.glob("trials/*")) for d in _session_dirs(two_nodes, "kill")):
        time.sleep(0.2)
    time.sleep(1.0)  # inside the agent phase
    pids = _worker_pids()
    os.kill(pids[0], signal.SIGKILL)
    _, err = driver.communicate(timeout=600)
    assert driver.returncode == 0, err.decode()[-3000:]
    results = _results(run_dir)
    ids = [r["trial_id"] for r in results]
    assert len(ids) == 12 and len(set(ids)) == 12  # every planned trial, exactly once
    assert all(r["outcome"] == "solved" for r in results), [r["error"] for r in results if r["error"]]
    retried = [r for r in results if r["attempt"] == 2]
    assert len(retried) == 1
    trial = run_dir / "trials" / retried[0]["trial_id"]
    (lost,) = json.loads((trial / "lost-attempts.json").read_text())
    assert lost["pid"] == pids[0] and lost["node_id"]
    assert json.loads((trial / "ray-node.json").read_text())["node_id"] != lost["node_id"]  # on the other node
    nodes = {json.loads((run_dir / "trials" / i / "ray-node.json").read_text())["node_id"] for i in ids}
    assert len(nodes) == 2  # both nodes took trials


def _node_dirs(cluster: dict[str, str]) -> list[str]:
    return [cluster[key] for key in ("head_dir", "second_dir")]


def _environ(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _node_processes(node_dirs: list[str]) -> dict[int, str]:
    """pid -> command line of every process started by the nodes (they inherit `SKILLWORKS_RAY_NODE_DIR`)."""
    marks = {f"SKILLWORKS_RAY_NODE_DIR={d}" for d in node_dirs}
    found: dict[int, str] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and marks & set(_environ(int(proc.name))):
            with contextlib.suppress(OSError):
                found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return found


def _trial_cgroups() -> set[Path]:
    """Every trial cgroup (`skillworks-<pid>-<hex>`, see sandbox/_limits.py) in the cgroup hierarchies."""
    found: set[Path] = set()
    for root in Path("/sys/fs/cgroup").iterdir():
        for current, dirnames, _files in os.walk(root):
            for name in list(dirnames):
                if name.startswith("skillworks-"):
                    dirnames.remove(name)
                    found.add(Path(current) / name)
    return found


def _trial_leftovers(node_dirs: list[str], cgroups_before: set[Path]) -> list[str]:
    """What trials left on the nodes: a trial cgroup made since `cgroups_before` by a node process (or by a
    process now gone), a sandbox (bwrap) or container-runtime process started by a node."""
    node_pids = _node_processes(node_dirs)
    left = [
        f"cgroup {c}"
        for c in _trial_cgroups() - cgroups_before
        if int(c.name.split("-")[1]) in node_pids or not Path(f"/proc/{c.name.split('-')[1]}").exists()
    ]
    sandboxes = ("bwrap", "podman", "conmon", "docker")
    left += [f"process {pid}: {cmd}" for pid, cmd in node_pids.items() if Path(cmd.split(" ")[0]).name in sandboxes]
    return left


def test_interrupted_ray_run_resumes_and_records_each_trial_once(two_nodes: dict[str, str], tmp_path: Path) -> None:
    tasks = _sleep_tasks(tmp_path / "tasks", 6, 3)
    run_dir = tmp_path / "runs" / "resume"
    ray_args = ["--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "1"]
    args = [
        str(tasks),
        "--trials",
        "2",
        "--conditions",
        "none",
        "--concurrency",
        "2",
        "--out",
        str(tmp_path / "runs"),
        "--run-id",
        "resume",
    ]
    cgroups_before = _trial_cgroups()
    driver = _driver([*args, *ray_args], two_nodes)
    deadline = time.monotonic() + 240
    made: set[Path] = set()  # trial cgroups seen while trials run: the check below can fail
    while len(_results(run_dir)) < 2 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.3)
        made |= _trial_cgroups() - cgroups_before
    assert 2 <= len(_results(run_dir)) < 12
    assert made, "no trial made a cgroup"
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=180)
    assert driver.returncode == 130, err.decode()[-3000:]
    before = len(_results(run_dir))
    time.sleep(1.0)
    assert not _worker_pids()  # the remote trials were cancelled
    # nothing of the session is left on either node: its node dirs, the trials' scratch dirs
    assert _session_dirs(two_nodes, "resume") == []
    assert not list(Path(tempfile.gettempdir()).glob("sw-scratch-*-resume-*"))
    # ... nor a trial's cgroup (made for its limits by the bwrap sandbox), sandbox or container process
    assert _trial_leftovers(_node_dirs(two_nodes), cgroups_before) == []
    resumed = _run(["--resume", str(run_dir), *ray_args], env=_auth(two_nodes), timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    ids = [r["trial_id"] for r in _results(run_dir)]
    assert len(ids) == 12 and len(set(ids)) == 12
    assert before < 12
    assert f"{before} already recorded" in resumed.stderr


def _join_node(cluster: dict[str, str], node_dir: Path, cpus: int) -> None:
    """Another node of the cluster on this machine, with its own node dir (which its processes inherit)."""
    env = {
        **os.environ,
        **_auth(cluster),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_agent_register_timeout_ms": "180000",
        "RAY_raylet_start_wait_time_s": "180",
        "SKILLWORKS_RAY_NODE_DIR": str(node_dir),
    }
    resources = json.dumps({"skillworks_local": 1000, "skillworks_container": 1000})
    cmd = [str(RAY), "start", "--address", cluster["address"], "--node-ip-address", "127.0.0.1"]
    cmd += ["--num-cpus", str(cpus), "--resources", resources]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _kill_node(node_dir: Path, sig: int = signal.SIGKILL) -> list[int]:
    """Every process of one node — its raylet and agents, its workers (trials, gateway actor), the sandboxes
    they started — killed at once, as when the machine dies. Returns the pids."""
    pids = sorted(_node_processes([str(node_dir)]))
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    return pids


def test_the_model_calls_of_an_attempt_lost_with_its_whole_node_are_counted(
    two_nodes: dict[str, str], tmp_path: Path
) -> None:
    """A third node joins with 4 CPUs, the only node a trial asking 3 CPUs fits on. A builtin trial (scripted
    provider, known usage per call) makes its first model call there; during its 15 s tool call every process
    of that node is killed — raylet, workers, its gateway actor — so that node's gateway record is out of the
    cluster's reach. A replacement 4-CPU node joins, the retry solves the trial there, and the lost attempt's
    call is in the trial's usage: recovered from the ledger actor on the driver's node (`driver ledger`)."""
    script = tmp_path / "slow.yaml"
    first, second = (
        "  usage: {input_tokens: 1234, output_tokens: 56}\n",
        "  usage: {input_tokens: 700, output_tokens: 8}\n",
    )
    turns = SLOW_SUM.replace("sleep 2;", "sleep 15;").split('- {text: "done"}\n')[0]
    script.write_text(turns + first + '- text: "done"\n' + second)
    # short: the gateway's unix socket paths under the node dir must stay < 108 bytes
    doomed, spare = Path(tempfile.mkdtemp(prefix="swdoomed-")), Path(tempfile.mkdtemp(prefix="swspare-"))
    _join_node(two_nodes, doomed, 4)
    task = REPO / "tests" / "fixtures" / "tasks_sandbox" / "selfgen-sum"
    args = [str(task), "--agent", "builtin", "--model", f"scripted/{script}", "--conditions", "none"]
    args += ["--out", str(tmp_path), "--run-id", "dead", "--executor", "ray", "--ray-address", two_nodes["address"]]
    args += ["--ray-cpus-per-trial", "3"]
    try:
        driver = _driver(args, two_nodes)
        deadline = time.monotonic() + 240
        called: list[Path] = []
        while not called and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.2)
            called = [p for p in doomed.glob("runs/dead-*/trials/*/gateway.jsonl") if p.read_text().strip()]
        if not called:
            driver.kill()
            raise AssertionError(f"the trial made no model call on the third node: {driver.communicate()[1][-3000:]!r}")
        time.sleep(1.0)  # in the tool call (a report still in the node's send queue would be lost with it)
        killed = _kill_node(doomed)
        assert len(killed) > 2  # the raylet, the trial's worker, the gateway's worker, ...
        _join_node(two_nodes, spare, 4)
        _, err = driver.communicate(timeout=600)
        assert driver.returncode == 0, err.decode()[-3000:]
    finally:
        _kill_node(spare, signal.SIGTERM)  # the later tests see two nodes again
        _kill_node(doomed)
        shutil.rmtree(spare, ignore_errors=True)
    (result,) = _results(tmp_path / "dead")
    assert (result["outcome"], result["attempt"]) == ("solved", 2), result["error"]
    trial = tmp_path / "dead" / result["paths"]["trial_dir"]
    assert json.loads((trial / "ray-node.json").read_text())["node_dir"] == str(spare)
    (lost,) = json.loads((trial / "lost-attempts.json").read_text())
    assert lost["usage_source"] == "driver ledger"
    assert (lost["usage"]["calls"], lost["usage"]["input_tokens"], lost["usage"]["output_tokens"]) == (1, 1234, 56)
    # the dead node's own record (still on this machine's disk) says the same
    (record,) = called
    assert [json.loads(line)["input_tokens"] for line in record.read_text().splitlines()] == [1234]
    shutil.rmtree(doomed, ignore_errors=True)
    usage = result["usage"]  # the retry's two calls and the lost attempt's one
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (3, 1234 + 700 + 1234, 56 + 8 + 56)


def _podman(*args: str) -> list[str]:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=120)
    return done.stdout.split()


def _container_cgroups(ids: set[str]) -> list[Path]:
    """The cgroups podman (cgroupfs manager) made for these containers: `libpod-<id>` dirs and below."""
    return [
        Path(current) / name
        for root in Path("/sys/fs/cgroup").iterdir()
        for current, dirnames, _files in os.walk(root)
        for name in dirnames
        if any(i in name for i in ids)
    ]


@pytest.mark.podman
def test_ctrl_c_on_a_container_run_leaves_no_container_cgroup_or_process_on_the_nodes(
    two_nodes: dict[str, str], tmp_path: Path
) -> None:
    """Two container trials (30 s oracle sleeps) run on the cluster when the driver gets SIGINT: afterwards no
    container of the run exists on the machine (running or stopped), no cgroup podman made for them is left,
    nor a trial cgroup, sandbox, podman or conmon process started by a node."""
    tasks = _sleep_tasks(tmp_path / "tasks", 2, 30)
    for task in tasks.iterdir():
        (task / "environment" / "Dockerfile").write_text(
            "FROM debian:bookworm-slim\nWORKDIR /app\nCOPY input.txt /app/input.txt\n"
        )
    base = os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base")
    args = [str(tasks), "--env", "container", "--image-map", f"debian:bookworm-slim={base}", "--conditions", "none"]
    args += ["--concurrency", "2", "--out", str(tmp_path / "runs"), "--run-id", "cint"]
    args += ["--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "0.5"]
    label = "label=skillworks.run=cint"
    cgroups_before = _trial_cgroups()
    driver = _driver(args, two_nodes)
    deadline = time.monotonic() + 400
    running: list[str] = []
    while len(running) < 2 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(1.0)
        running = _podman("ps", "-q", "--no-trunc", "--filter", label, "--filter", "status=running")
    # two trials' containers at least (a third may be a trial's fresh verifier or a retried attempt's): each
    # one must be gone after Ctrl-C
    assert len(running) >= 2, "the trials' containers did not start"
    time.sleep(2.0)  # inside the oracle's sleep
    ids = set(running)
    assert _container_cgroups(ids), "podman made no cgroup for the containers: nothing to check"
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=240)
    assert driver.returncode == 130, err.decode()[-3000:]
    time.sleep(1.0)
    assert _podman("ps", "-a", "-q", "--filter", label) == []
    assert _container_cgroups(ids) == []
    assert _trial_leftovers(_node_dirs(two_nodes), cgroups_before) == []
    assert _session_dirs(two_nodes, "cint") == []


def registry_tags(address: str) -> list[str]:
    """The tags the registry holds for skillworks/env (its HTTP API)."""
    with urllib.request.urlopen(f"http://{address}/v2/skillworks/env/tags/list", timeout=10) as resp:
        return list(json.load(resp).get("tags") or [])


@pytest.mark.podman
def test_with_a_registry_each_image_is_built_once_on_one_node_and_no_trial_builds(
    two_nodes: dict[str, str], local_registry: str, tmp_path: Path
) -> None:
    """Three tasks, two of them with one environment, two trials each on the two nodes, with --image-registry
    (a real local registry): the image phase builds each of the two images once, as one Ray task on some node
    (recorded with that node), and pushes it; then no trial on either node builds an image. (Both nodes share
    this machine's container store, so a trial finds the image there rather than pulling it.)"""
    shared, own = secrets.token_hex(8), secrets.token_hex(8)
    for name, token in {"a": shared, "b": shared, "c": own}.items():
        task = tmp_path / "tasks" / name
        shutil.copytree(REPO / "examples" / "container" / "csv-column-total", task)
        (task / "environment" / "unique.txt").write_text(token)
    base = os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base")
    args = [str(tmp_path / "tasks"), "--env", "container", "--image-map", f"debian:bookworm-slim={base}"]
    args += ["--agent", "oracle", "--conditions", "none", "--trials", "2", "--concurrency", "4"]
    args += [
        "--image-registry",
        local_registry,
        "--no-image-registry-tls-verify",
        "--out",
        str(tmp_path),
        "--run-id",
        "p",
    ]
    done = _run(
        [*args, "--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "0.5"],
        env=_auth(two_nodes),
        timeout=900,
    )
    phase = (
        json.loads((tmp_path / "p" / "prebuild.json").read_text())
        if (tmp_path / "p" / "prebuild.json").is_file()
        else {}
    )
    tags = [i["tag"] for i in phase.get("images", [])]
    try:
        assert done.returncode == 0, done.stderr[-3000:]
        images = phase["images"]
        assert sorted(tuple(i["task_ids"]) for i in images) == [("a", "b"), ("c",)], images
        assert [(i["source"], i["pushed"]) for i in images] == [("built", True), ("built", True)], images
        assert all(i["node_id"] for i in images)  # built by a Ray task on a node, which the record names
        assert {t.split(":")[1] for t in tags} <= set(registry_tags(local_registry))
        results = _results(tmp_path / "p")
        assert len(results) == 6 and all(r["outcome"] == "solved" for r in results), [r["error"] for r in results]
        sources: dict[str, set[str]] = {}
        for r in results:
            node = json.loads((tmp_path / "p" / "trials" / r["trial_id"] / "ray-node.json").read_text())["node_id"]
            sources.setdefault(node, set()).add(r["image"]["source"])
            assert r["image"]["tag"] in tags
        assert all(found <= {"pulled", "cached"} for found in sources.values()), sources  # no node built again
        assert "prebuilt 2 image(s)" in done.stderr
    finally:
        for tag in tags:
            subprocess.run(["podman", "rmi", "-f", tag], capture_output=True)


@pytest.mark.podman
def test_concurrent_trials_of_a_new_image_build_it_once(two_nodes: dict[str, str], tmp_path: Path) -> None:
    """Four trials of a task whose image no one has built yet, at once, in four worker processes on the two
    nodes (one machine, one container store): one of them builds the image, the others find it built."""
    task = tmp_path / "fresh-image"
    shutil.copytree(REPO / "examples" / "container" / "csv-column-total", task)
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + f"LABEL skillworks.test={secrets.token_hex(8)}\n")
    base = os.environ.get("SKILLWORKS_TEST_BASE_IMAGE", "localhost/skillworks-base")
    args = [str(task), "--env", "container", "--image-map", f"debian:bookworm-slim={base}", "--conditions", "none"]
    args += ["--agent", "oracle", "--trials", "4", "--concurrency", "4", "--out", str(tmp_path), "--run-id", "b"]
    done = _run(
        [*args, "--executor", "ray", "--ray-address", two_nodes["address"], "--ray-cpus-per-trial", "0.5"],
        env=_auth(two_nodes),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = _results(tmp_path / "b")
    assert len(results) == 4 and all(r["outcome"] == "solved" for r in results), [r["error"] for r in results]
    assert sorted(r["image"]["source"] for r in results) == ["built", "cached", "cached", "cached"]
    assert len({r["image"]["tag"] for r in results}) == 1


def test_a_cluster_that_cannot_take_a_trial_is_a_one_line_error_not_a_hang(tmp_path: Path) -> None:
    """A Ray cluster (started in-process by the driver script) whose only node offers bubblewrap and 1 CPU:
    a container run finds no node with `skillworks_container`, and a task declaring 4 CPUs fits no node;
    both end at once with a one-line error (exit 2) instead of queueing trials nobody takes."""
    tasks = _sleep_tasks(tmp_path / "tasks", 1, 0)
    task_md = tasks / "sleep-0" / "task.md"
    task_md.write_text(task_md.read_text().replace("cpus: 1", "cpus: 4"))
    container = [str(REPO / "examples" / "container" / "csv-column-total"), "--env", "container"]
    harness = [
        str(REPO / "tests" / "fixtures" / "harness_tasks" / "greeting-card"),
        "--agent",
        "claude-code",
        "--model",
        f"scripted/{REPO / 'tests' / 'fixtures' / 'harness_scripts' / 'claude-code.yaml'}",
        "--conditions",
        "curated",
    ]
    runs = [
        [*container, "--out", str(tmp_path / "runs"), "--run-id", "c", "--executor", "ray"],
        [str(tasks), "--conditions", "none", "--out", str(tmp_path / "runs"), "--run-id", "l", "--executor", "ray"],
        [*harness, "--out", str(tmp_path / "runs"), "--run-id", "h", "--executor", "ray"],
    ]
    # the cluster's workers (not this driver) see an empty harness cache: no node has Claude Code
    no_harness = {"env_vars": {"SKILLWORKS_HARNESS_CACHE": str(tmp_path / "empty")}}
    script = textwrap.dedent(
        f"""
        import sys, ray
        ray.init(address="local", num_cpus=1, resources={{"skillworks_local": 10}}, include_dashboard=False,
                 log_to_driver=False, runtime_env={no_harness!r})
        from skillworks.cli.main import main
        for args in {runs!r}:
            sys.argv = ["skillworks", "run", *args]
            try:
                main()
            except SystemExit as exc:
                print("exit", exc.code, flush=True)
        ray.shutdown()
        """
    )
    env = {
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_agent_register_timeout_ms": "180000",
        "RAY_raylet_start_wait_time_s": "180",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, env={**os.environ, **env}, timeout=400
    )
    assert done.stdout.split("\n")[-4:] == ["exit 2", "exit 2", "exit 2", ""], done.stdout + done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 3, done.stderr[-3000:]
    assert "agent claude-code-claude-code cannot run on any node of the Ray cluster: node " in errors[2]
    assert "is not installed" in errors[2]
    assert not _results(tmp_path / "runs" / "h")
    assert "no node of the Ray cluster offers 'skillworks_container'" in errors[0]
    assert (
        "can take a trial of task sleep-0: it needs 4 CPU(s)" in errors[1] and "largest node has 1 CPU(s)" in errors[1]
    )
    assert not _results(tmp_path / "runs" / "l")  # no trial was recorded
