"""ContainerSandbox.end_agent_phase and reset_dirs, on a real container with the allowlist egress
forwarder running: every process the agent left is gone (a restart when orphans remain, files kept),
the egress path works again afterwards, and dirs the agent locked are reset. The verifier's files
come with the same round trip only once the agent phase ended cleanly (else the caller uploads them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.sandbox import ExecRequest
from skillworks.sandbox.container import ContainerOptions, ContainerRuntime, ContainerSandbox
from skillworks.tasks.model import NetworkPolicy, Task

from .conftest import RUN_ID

pytestmark = [pytest.mark.podman]

PROCS = 'for d in /proc/[0-9]*; do read -r c < "$d/comm" 2>/dev/null && echo "${d#/proc/} $c"; done'


async def test_end_agent_phase_leaves_nothing_of_the_agent(
    baked_task: Task, options: ContainerOptions, runtime: ContainerRuntime, tmp_path: Path
) -> None:
    policy = NetworkPolicy(mode="allowlist", allowed_hosts=("127.0.0.1",))
    sandbox = ContainerSandbox(
        baked_task,
        tmp_path,
        options.merged(strip_skills=True, run_id=RUN_ID, model_channel=False),
        runtime=runtime,
        network=policy,
    )
    async with sandbox:
        started = await sandbox.exec(
            "echo kept > /app/kept.txt; (setsid sleep 600 >/dev/null 2>&1 < /dev/null &); "
            "nohup setsid sh -c 'while :; do sleep 1; done' >/dev/null 2>&1 < /dev/null & echo ok"
        )
        assert started.ok, started.stderr
        before = await sandbox.exec(PROCS)
        assert " sleep" in before.stdout
        await sandbox.exec("mkdir -p /logs/verifier && touch /logs/verifier/x && chmod 000 /logs/verifier /logs")

        verifier_files = tmp_path / "tests"
        verifier_files.mkdir()
        (verifier_files / "test.sh").write_text("echo hi\n")
        then = ExecRequest("echo ran", "/tests", {}, "root")
        ended = await sandbox.end_agent_phase(["/tests"], upload=(verifier_files, "/tests"), then=then)
        # orphans forced a restart: the caller uploads the verifier's files and runs the verifier
        assert not ended.uploaded and ended.then_result is None
        assert (await sandbox.exec("ls -A /tests", user="root")).stdout == ""

        after = await sandbox.exec(PROCS)
        names = [line.split()[1] for line in after.stdout.splitlines() if not line.startswith("1 ")]
        assert "sleep" not in names and "sh" not in names, after.stdout
        assert (await sandbox.exec("cat /app/kept.txt")).stdout.strip() == "kept"  # files survive a restart
        # the egress forwarder is back: the proxy port answers (a 403 for a host not on the list)
        probe = await sandbox.exec(
            "exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT pypi.org:443 HTTP/1.1\\r\\n\\r\\n' >&3 && cat <&3",
            timeout=30,
        )
        assert "403" in probe.stdout, probe.stdout + probe.stderr

        await sandbox.reset_dirs(["/logs/verifier", "/logs/verifier-home"])
        listing = await sandbox.exec("stat -c '%U %a' /logs/verifier && ls -A /logs/verifier | wc -l", user="root")
        assert listing.stdout.split() == ["root", "755", "0"], listing.stdout


async def test_verifier_files_come_with_the_end_of_the_agent_phase(stripped: ContainerSandbox, tmp_path: Path) -> None:
    """When the agent left nothing running (a leftover process forces a restart: the test above), one
    round trip ends the phase, empties the verifier's dirs (what the agent planted and locked there
    included), extracts the verifier's files and runs the verifier; a destination that is not reset
    gets nothing and nothing runs."""
    planted = await stripped.exec(
        "mkdir -p /tests /logs/verifier && echo 'import os; os._exit(0)' > /tests/conftest.py && "
        "echo 1 > /logs/verifier/reward.txt && chmod 000 /tests /logs/verifier && echo ok"
    )
    assert planted.ok, planted.stderr
    source = tmp_path / "verifier"
    (source / "data").mkdir(parents=True)
    (source / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    (source / "data" / "expected.csv").write_text("a,b\n1,2\n")

    then = ExecRequest(
        'echo "$HOME $PWD $(id -u) $X ${SKILLWORKS_THEN_CMD:-unset}"; echo oops >&2; cat; exit 3',
        "/tests",
        {"HOME": "/logs/verifier-home", "X": "x1"},
        "root",
        timeout=60,
        stdout_path=tmp_path / "stdout.txt",
    )
    ended = await stripped.end_agent_phase(["/logs/verifier", "/tests"], upload=(source, "/tests"), then=then)

    assert ended.uploaded and ended.then_result is not None
    # the command ran as `exec` would run it (its dir, env, user, no stdin), its streams its own
    assert (tmp_path / "stdout.txt").read_text() == "/logs/verifier-home /tests 0 x1 unset\n"
    assert ended.then_result.exit_code == 3 and ended.then_result.stderr.strip() == "oops"
    listing = await stripped.exec(
        "cd /tests && find . | sort && stat -c %U /tests && ls -A /logs/verifier | wc -l && cat data/expected.csv",
        user="root",
    )
    expected = [".", "./data", "./data/expected.csv", "./test.sh", "root", "0", "a,b", "1,2"]
    assert listing.stdout.split() == expected, listing.stdout
    ended = await stripped.end_agent_phase(["/logs/verifier"], upload=(source, "/elsewhere"), then=then)
    assert not ended.uploaded and ended.then_result is None
    assert not await stripped.path_exists("/elsewhere")
