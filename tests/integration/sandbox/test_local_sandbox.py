"""The local (bubblewrap) sandbox, for real: isolation, timeouts, files, network and the model channel.

The "gateway" here is a plain aiohttp app on a host unix socket standing in for skillworks' gateway:
the test is about the channel, not about models.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skillworks.sandbox import LocalSandbox, ModelChannel, SandboxError, create_sandbox
from skillworks.tasks.model import Environment, NetworkPolicy, Task

pytestmark = pytest.mark.bwrap


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A host dir outside /tmp (which the sandbox replaces by its own) and outside the allowlist:
    the sandbox does not show it, except where a test binds it."""
    path = Path(tempfile.mkdtemp(prefix="skillworks-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def task(visible_dir: Path) -> Task:
    root = visible_dir / "task"
    env = root / "environment"
    (env / "skills" / "units").mkdir(parents=True)
    (env / "skills" / "units" / "SKILL.md").write_text("---\nname: units\n---\n")
    (env / "data").mkdir()
    (env / "data" / "labs.csv").write_text("analyte,value\nglucose,5.1\n")
    (env / "data" / "Dockerfile").write_text("not at the top: part of the data\n")
    for name in ("Dockerfile", "docker-compose.yaml", ".dockerignore"):
        (env / name).write_text("x\n")
    (root / "tests").mkdir()
    (root / "tests" / "secret.txt").write_text("the answer is 42\n")
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text("echo 42\n")
    return Task(
        id="labs",
        root=root,
        source_format="task.md",
        instruction="fix units",
        environment=Environment(dir=env),
        content_hash="0" * 64,
    )


@pytest.fixture
async def sandbox(task: Task, tmp_path: Path) -> AsyncIterator[LocalSandbox]:
    sb = LocalSandbox(task, tmp_path / "scratch")
    await sb.start()
    yield sb
    await sb.stop()


async def test_workspace_is_seeded_without_skills_or_docker_files(sandbox: LocalSandbox) -> None:
    result = await sandbox.exec("pwd; find . | sort")
    assert result.ok, result.stderr
    lines = result.stdout.split()
    assert lines[0] == "/app"
    assert lines[1:] == [".", "./data", "./data/Dockerfile", "./data/labs.csv"]


async def test_state_persists_between_commands_and_host_root_is_read_only(sandbox: LocalSandbox) -> None:
    assert (await sandbox.exec("echo hi > /app/out.txt && echo t > /tmp/t && echo h > ~/h")).ok
    again = await sandbox.exec("cat /app/out.txt /tmp/t /home/agent/h")
    assert again.stdout == "hi\nt\nh\n"
    for path in ("/usr/skillworks-probe", "/etc/skillworks-probe", "/skillworks-probe"):
        denied = await sandbox.exec(f"touch {path}")
        assert denied.exit_code != 0 and "Read-only file system" in denied.stderr, path
    assert not Path("/usr/skillworks-probe").exists()


async def test_env_cwd_and_user(sandbox: LocalSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLWORKS_HOST_SECRET", "leak")
    result = await sandbox.exec(
        ["bash", "-c", 'pwd; echo "$FOO|$HOME|$SKILLWORKS_HOST_SECRET|$(id -un)"'], cwd="/logs", env={"FOO": "bar"}
    )
    assert result.stdout == "/logs\nbar|/home/agent||agent\n"
    assert (await sandbox.exec("id -u", user="root")).stdout == "0\n"
    with pytest.raises(SandboxError, match="not 'nobody'"):
        await sandbox.exec("true", user="nobody")


def _alive_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                pids.append(int(entry))
    return pids


async def test_timeout_kills_a_tree_that_ignores_sigterm(sandbox: LocalSandbox) -> None:
    marker = "313.37"
    cmd = f"trap '' TERM; (trap '' TERM; sleep {marker}) & (setsid sleep {marker} &); sleep {marker}"
    started = time.monotonic()
    result = await sandbox.exec(cmd, timeout=1)
    assert result.timed_out and not result.ok
    assert time.monotonic() - started < 5
    await asyncio.sleep(0.2)
    assert _alive_with(marker) == []


async def test_output_is_captured_or_streamed_to_a_file(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = await sandbox.exec("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    log = tmp_path / "agent.log"
    streamed = await sandbox.exec("echo line1; echo line2", stdout_path=log)
    assert streamed.ok and streamed.stdout == "" and log.read_text() == "line1\nline2\n"


async def test_task_dirs_are_hidden_until_uploaded(sandbox: LocalSandbox, task: Task, visible_dir: Path) -> None:
    (visible_dir / "public.txt").write_text("visible\n")
    control = await sandbox.exec(f"head -c0 /etc/passwd /usr/bin/env && cat {visible_dir}/public.txt")
    assert control.exit_code != 0 and "No such file" in control.stderr  # allowlisted dirs only
    assert f"{visible_dir}/public.txt" in control.stderr  # ...the system dirs before it were readable
    for path in (task.root / "tests" / "secret.txt", task.root / "solution" / "solve.sh"):
        denied = await sandbox.exec(f"cat {path}")
        assert denied.exit_code != 0 and "No such file" in denied.stderr
        assert not await sandbox.path_exists(str(path))
        with pytest.raises(FileNotFoundError):
            await sandbox.download(str(path), visible_dir / "got")
    # not even uid 0 of the sandbox can lift the cover: no capabilities, no nested user namespaces
    escape = await sandbox.exec(
        f"umount {task.root}; unshare -Urm sh -c 'umount {task.root}'; cat {task.root}/tests/secret.txt", user="root"
    )
    assert "the answer" not in escape.stdout and "No such file" in escape.stderr
    pid1 = await sandbox.exec("tr '\\0' ' ' < /proc/1/cmdline")  # bwrap's mount plan is not on view
    assert str(task.root) not in pid1.stdout and "--bind" not in pid1.stdout
    await sandbox.upload(task.root / "tests", "/tests")
    await sandbox.upload(task.root / "solution" / "solve.sh", "/solution/solve.sh")
    shown = await sandbox.exec("cat /tests/secret.txt /solution/solve.sh")
    assert shown.stdout == "the answer is 42\necho 42\n"


async def test_upload_anywhere_and_download(sandbox: LocalSandbox, tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: x\n---\n")
    await sandbox.upload(skill, "/home/agent/.claude/skills/x")
    await sandbox.upload(skill, "/opt/skillworks-extra/x")  # a new dir inside a read-only host dir
    await sandbox.upload(skill / "SKILL.md", "/etc/skillworks-test.conf")
    result = await sandbox.exec(
        "cat ~/.claude/skills/x/SKILL.md /opt/skillworks-extra/x/SKILL.md /etc/skillworks-test.conf | wc -l;"
        " ls /etc/passwd /usr/bin/env"
    )
    assert result.ok, result.stderr
    assert result.stdout.split()[0] == "9"
    assert not Path("/opt/skillworks-extra").exists() and not Path("/etc/skillworks-test.conf").exists()
    assert await sandbox.path_exists("/opt/skillworks-extra/x/SKILL.md")
    with pytest.raises(SandboxError, match="read-only host root"):
        await sandbox.upload(skill, "/usr/bin")

    await sandbox.exec("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && ln -s /etc/hostname /app/h")
    await sandbox.download("/logs/verifier", tmp_path / "verifier")
    assert (tmp_path / "verifier" / "reward.txt").read_text() == "1\n"
    record = await sandbox.download("/app/h", tmp_path / "h")  # a link is never followed (issue 30)
    assert not (tmp_path / "h").exists() and not (tmp_path / "h").is_symlink()
    assert record.skipped == ["/app/h: is a link, or lies below one (not followed)"]
    with pytest.raises(FileNotFoundError):
        await sandbox.download("/app/missing", tmp_path / "m")
    assert await sandbox.path_exists("/app/data/labs.csv") and not await sandbox.path_exists("/app/nope")


async def _host_tcp_server() -> tuple[asyncio.Server, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nhost")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


PROBE = """
import socket, sys, urllib.request
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close(); return "open"
    except OSError:
        return "blocked"
def http(url):
    try:
        return urllib.request.urlopen(url, timeout=5).read().decode()
    except OSError:
        return "blocked"
print(tcp("1.1.1.1", 53), http("http://127.0.0.1:" + sys.argv[1] + "/"), http(sys.argv[2]))
"""


async def test_no_network_under_no_network_mode(sandbox: LocalSandbox) -> None:
    server, port = await _host_tcp_server()
    async with server:
        result = await sandbox.exec(["python3", "-c", PROBE, str(port), "http://127.0.0.1:1/"])
    assert result.stdout.split() == ["blocked", "blocked", "blocked"], result.stderr


async def test_public_mode_shares_the_host_network(task: Task, tmp_path: Path) -> None:
    sb = LocalSandbox(task, tmp_path / "s", network=NetworkPolicy(mode="public"))
    await sb.start()
    server, port = await _host_tcp_server()
    async with server:
        result = await sb.exec(["python3", "-c", PROBE, str(port), "http://127.0.0.1:1/"])
    await sb.stop()
    assert result.stdout.split()[1] == "host"  # the same probe does see the host when allowed


@pytest.fixture
async def unix_gateway(tmp_path: Path) -> AsyncIterator[Path]:
    async def reply(request: web.Request) -> web.Response:
        return web.json_response({"path": request.path, "body": await request.text()})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", reply)
    runner = web.AppRunner(app)
    await runner.setup()
    sock = tmp_path / "gateway.sock"
    await web.UnixSite(runner, str(sock)).start()
    yield sock
    await runner.cleanup()


async def test_model_channel_reaches_the_gateway_and_nothing_else(sandbox: LocalSandbox, unix_gateway: Path) -> None:
    channel = ModelChannel(socket_path=unix_gateway, port=4141)
    server, port = await _host_tcp_server()
    async with server:
        await sandbox.open_model_channel(channel)
        opened = await sandbox.exec(["python3", "-c", PROBE, str(port), channel.base_url + "/v1/messages"])
        await sandbox.close_model_channel()
        closed = await sandbox.exec(["python3", "-c", PROBE, str(port), channel.base_url + "/v1/messages"])
    assert opened.ok, opened.stderr
    internet, host_loopback, gateway = opened.stdout.split(maxsplit=2)
    assert (internet, host_loopback) == ("blocked", "blocked")
    assert '"path": "/v1/messages"' in gateway
    assert closed.stdout.split() == ["blocked", "blocked", "blocked"]


async def test_model_channel_keeps_exit_codes_and_timeouts(sandbox: LocalSandbox, unix_gateway: Path) -> None:
    await sandbox.open_model_channel(ModelChannel(socket_path=unix_gateway, port=4242))
    assert (await sandbox.exec("exit 7")).exit_code == 7
    started = time.monotonic()
    assert (await sandbox.exec("trap '' TERM; sleep 30", timeout=1)).timed_out
    assert time.monotonic() - started < 5


async def test_stop_is_idempotent_and_removes_only_sandbox_state(task: Task, tmp_path: Path, visible_dir: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "staged-skills").mkdir()  # someone else's file in the scratch dir
    owned = visible_dir / "user-file.txt"
    owned.write_text("mine\n")
    sb: Any = create_sandbox("local", task, scratch)
    await sb.start()
    await sb.exec(f"ln -s {owned} /app/link; ln -s {visible_dir} /app/dirlink; mkdir -p /app/ro/x; chmod 500 /app/ro")
    running = asyncio.ensure_future(sb.exec("sleep 30"))
    await asyncio.sleep(0.3)
    await sb.stop()
    await sb.stop()
    result = await asyncio.wait_for(running, 5)  # stop() killed the running command
    assert not result.ok
    assert owned.read_text() == "mine\n" and (task.root / "environment" / "data" / "labs.csv").exists()
    assert not (scratch / "sandbox").exists() and (scratch / "staged-skills").is_dir()


async def test_workdir_may_be_any_path(task: Task, tmp_path: Path) -> None:
    for workdir in ("/usr/src/app", "/home/agent", "/workspace"):
        sb = LocalSandbox(
            task.model_copy(update={"environment": Environment(dir=task.environment.dir, workdir=workdir)}),
            tmp_path / workdir.replace("/", "_"),
        )
        await sb.start()
        result = await sb.exec("pwd; ls data/labs.csv; touch new && ls /usr/src | head -1 >/dev/null && echo ok")
        await sb.stop()
        assert result.stdout.split() == [workdir, "data/labs.csv", "ok"], (workdir, result.stderr)


async def test_uploads_never_follow_symlinks_the_agent_planted(
    sandbox: LocalSandbox, tmp_path: Path, visible_dir: Path
) -> None:
    victim = visible_dir / "victim"
    victim.mkdir()
    src = tmp_path / "payload"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "f.txt").write_text("payload\n")
    assert (await sandbox.exec(f"ln -s {victim} /app/evil; mkdir -p /app/dst; ln -s {victim} /app/dst/sub")).ok
    with pytest.raises(SandboxError, match="symlink that leaves the sandbox"):
        await sandbox.upload(src / "sub" / "f.txt", "/app/evil/f.txt")
    await sandbox.upload(src, "/app/dst")  # the planted dst/sub link is replaced, not written through
    assert list(victim.iterdir()) == []
    assert (await sandbox.exec("cat /app/dst/sub/f.txt")).stdout == "payload\n"


async def test_scratch_inside_a_hidden_runs_dir(task: Task, visible_dir: Path) -> None:
    runs = visible_dir / "runs"
    (runs / "other-trial").mkdir(parents=True)
    (runs / "other-trial" / "results.txt").write_text("someone else's reward\n")
    sb = LocalSandbox(task, runs / "t1" / "scratch", hide_paths=[runs])
    await sb.start()
    result = await sb.exec(f"echo ok > out.txt; ls {runs} | wc -l; cat {runs}/other-trial/results.txt")
    assert (runs / "t1" / "scratch" / "sandbox" / "workspace" / "out.txt").read_text() == "ok\n"
    await sb.stop()
    assert result.stdout.split()[0] == "0" and "No such file" in result.stderr
    assert (runs / "t1" / "scratch").is_dir()  # the caller's scratch dir stays; only our state is gone
    assert not (runs / "t1" / "scratch" / "sandbox").exists()
