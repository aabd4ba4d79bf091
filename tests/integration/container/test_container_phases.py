"""ContainerSandbox.end_agent_phase and reset_dirs, on a real container with the allowlist egress
forwarder running: every process the agent left is gone (a restart when orphans remain, files kept),
the egress path works again afterwards, and dirs the agent locked are reset."""

from __future__ import annotations

from pathlib import Path

import pytest

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

        await sandbox.end_agent_phase()

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
