"""The local sandbox's allowlisted root, the model channel in public mode, and uploads that replace.

The "gateways" here are plain aiohttp apps on host unix sockets standing in for skillworks' gateway:
these tests are about the sandbox, not about models.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from skillworks.sandbox import LocalSandbox, ModelChannel, SandboxError
from skillworks.sandbox._view import ROOT_ALLOW
from skillworks.sandbox.local import SYSTEM_PYTHONS
from skillworks.tasks.model import Environment, NetworkPolicy, Task

pytestmark = pytest.mark.bwrap

REPO = Path(__file__).resolve().parents[3]
# what the root of a sandbox may hold: the allowlisted system dirs, what bubblewrap provides and the
# sandbox's own directories
SANDBOX_ROOT = set(ROOT_ALLOW) | {"proc", "dev", "tmp", "logs", "home", "app"}


@pytest.fixture
def task(tmp_path: Path) -> Task:
    env = tmp_path / "task" / "environment"
    env.mkdir(parents=True)
    (env / "data.csv").write_text("a,b\n")
    (tmp_path / "task" / "solution").mkdir()
    (tmp_path / "task" / "solution" / "solve.sh").write_text("echo SECRET-ANSWER\n")
    return Task(
        id="t",
        root=tmp_path / "task",
        source_format="task.md",
        instruction="-",
        environment=Environment(dir=env),
        content_hash="0" * 64,
    )


@pytest.fixture
async def sandbox(task: Task, tmp_path: Path) -> AsyncIterator[LocalSandbox]:
    sb = LocalSandbox(task, tmp_path / "runs" / "trial-1" / "scratch")
    await sb.start()
    yield sb
    await sb.stop()


async def test_the_root_holds_only_the_allowlist(sandbox: LocalSandbox) -> None:
    listing = await sandbox.exec("ls -A /")
    assert listing.ok, listing.stderr
    shown = set(listing.stdout.split())
    assert shown <= SANDBOX_ROOT, shown - SANDBOX_ROOT
    assert {"usr", "etc", "proc", "dev", "tmp", "app"} <= shown
    tools = await sandbox.exec("bash -c 'ls /bin/sh' && python3 -c 'print(1)' && git --version >/dev/null && echo ok")
    assert tools.stdout.split()[-1] == "ok", tools.stderr  # programs still run from the allowlisted dirs


@pytest.fixture
def repo_copy_control() -> Iterator[Path]:
    """The repository this test runs from: readable on the host (the control for the probes)."""
    assert (REPO / "pyproject.toml").is_file()
    yield REPO


async def test_the_repository_and_sibling_dirs_are_unreachable(
    sandbox: LocalSandbox, repo_copy_control: Path, task: Task, tmp_path: Path
) -> None:
    sibling = tmp_path / "runs" / "trial-2"
    sibling.mkdir(parents=True)
    (sibling / "result.json").write_text('{"reward": 1}')
    repo = repo_copy_control
    if (repo / ".git").exists():  # the same git probe works on the host
        host = subprocess.run(["git", "-C", str(repo), "show", "HEAD:pyproject.toml"], capture_output=True)
        assert host.returncode == 0
    probes = {
        "git": f"git -C {repo} show HEAD:pyproject.toml",
        "git-safe": f"cd {repo} && git -c safe.directory='*' log -1",
        "repo file": f"cat {repo}/pyproject.toml",
        "venv": f"ls {sys.prefix}",
        "sibling": f"cat {sibling}/result.json",
        "runs": f"ls {tmp_path / 'runs'}",
        "task": f"cat {task.root}/solution/solve.sh",
        "root home": "ls /root",
        "var": "ls /var",
        "host tmp": f"ls /tmp/{tmp_path.relative_to('/tmp')}" if tmp_path.is_relative_to("/tmp") else "false",
    }
    for name, cmd in probes.items():
        result = await sandbox.exec(cmd, timeout=30)
        assert result.exit_code != 0, (name, result.stdout)
        assert "SECRET" not in result.stdout and "reward" not in result.stdout, name
    # the repository's parent may be a dir the sandbox has a private one of (a clone under /tmp): the
    # repository must not be listed in it, whatever it is
    parent = await sandbox.exec(f"ls -a {repo.parent}", timeout=30)
    assert repo.name not in parent.stdout.split(), parent.stdout
    for path in (repo / "pyproject.toml", sibling / "result.json", Path(sys.prefix)):
        assert not await sandbox.path_exists(str(path))
        with pytest.raises(FileNotFoundError):
            await sandbox.download(str(path), tmp_path / "got")


def _gateway_factory(tmp_path: Path) -> Callable[[str], AbstractAsyncContextManager[Path]]:
    @asynccontextmanager
    async def gateway(name: str) -> AsyncIterator[Path]:
        async def reply(request: web.Request) -> web.Response:
            return web.Response(text=f"{name}:{request.path}")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", reply)
        runner = web.AppRunner(app)
        await runner.setup()
        sock = tmp_path / f"{name}.sock"
        await web.UnixSite(runner, str(sock)).start()
        try:
            yield sock
        finally:
            await runner.cleanup()

    return gateway


GET = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1] + '/v1/x', timeout=10).read().decode())"


async def test_no_network_channel_runs_on_the_system_python(sandbox: LocalSandbox, tmp_path: Path) -> None:
    async with _gateway_factory(tmp_path)("gw") as sock:
        await sandbox.open_model_channel(ModelChannel(sock, 4141))
        assert sandbox.model_channel_url == "http://127.0.0.1:4141"
        result = await sandbox.exec(
            [
                "bash",
                "-c",
                f'python3 -c "$0" {sandbox.model_channel_url}; tr "\\0" " " </proc/$PPID/cmdline; ls {sys.prefix}',
                GET,
            ]
        )
        await sandbox.close_model_channel()
    assert result.stdout.splitlines()[0] == "gw:/v1/x", result.stderr
    launcher = result.stdout.splitlines()[1].split()[:4]  # the command's parent: the forwarder
    assert launcher[0] in SYSTEM_PYTHONS and launcher[1:] == ["-I", "-S", "/run/skillworks/forwarder.py"]
    assert "No such file" in result.stderr  # the host's venv stays out of view
    assert sandbox.model_channel_url is None


async def test_public_channels_of_concurrent_sandboxes_do_not_collide(task: Task, tmp_path: Path) -> None:
    gateway = _gateway_factory(tmp_path)
    public = NetworkPolicy(mode="public")
    boxes = [LocalSandbox(task, tmp_path / f"s{i}", network=public) for i in range(2)]
    async with gateway("alpha") as sock_a, gateway("beta") as sock_b:
        for sb, sock in zip(boxes, (sock_a, sock_b), strict=True):
            await sb.start()
            await sb.open_model_channel(ModelChannel(sock, 4141))  # the same requested port for both
        urls = [sb.model_channel_url for sb in boxes]
        assert urls[0] != urls[1] and all(u and u.startswith("http://127.0.0.1:") for u in urls)
        results = await asyncio.gather(
            *(
                sb.exec(["python3", "-c", f"import time; time.sleep(0.5); {GET}", str(sb.model_channel_url)])
                for sb in boxes
            ),
            boxes[0].exec(["python3", "-c", GET, str(urls[0])]),  # two commands of one sandbox at once
        )
        assert [r.stdout.strip() for r in results] == ["alpha:/v1/x", "beta:/v1/x", "alpha:/v1/x"], [
            r.stderr for r in results
        ]
        for sb in boxes:
            await sb.close_model_channel()
        assert boxes[0].model_channel_url is None
        port = int(str(urls[0]).rsplit(":", 1)[1])
        with pytest.raises(OSError):  # closed with the channel: nothing listens any more
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
        for sb in boxes:
            await sb.stop()


async def test_an_upload_replaces_a_planted_dir(sandbox: LocalSandbox, tmp_path: Path) -> None:
    verifier = tmp_path / "verifier"
    (verifier / "sub").mkdir(parents=True)
    (verifier / "test.sh").write_text("echo verify\n")
    (verifier / "sub" / "helper.py").write_text("X = 1\n")
    planted = tmp_path / "conftest.py"
    planted.write_text("PLANTED = 1\n")
    await sandbox.upload(planted, "/verifier/conftest.py")  # as the builtin agent's write_file once did
    await sandbox.upload(verifier, "/verifier")  # used to fail: "symlink that leaves the sandbox"
    listing = await sandbox.exec("cd /verifier && find . -type f | sort")
    assert listing.stdout.split() == ["./sub/helper.py", "./test.sh"], listing.stderr

    # a file the agent writes inside an uploaded dir does not survive the next upload there
    assert (await sandbox.exec("echo PLANTED > /verifier/sub/conftest.py && ln -s /etc /verifier/sub/x")).ok
    await sandbox.upload(verifier / "sub", "/verifier/sub")
    assert (await sandbox.exec("ls -A /verifier/sub")).stdout.split() == ["helper.py"]
    await sandbox.upload(verifier / "test.sh", "/verifier/test.sh")
    assert (await sandbox.exec("cat /verifier/test.sh")).stdout == "echo verify\n"

    # a file mount replaced by a directory, and back
    await sandbox.upload(planted, "/tests")
    await sandbox.upload(verifier, "/tests")
    assert (await sandbox.exec("cat /tests/test.sh")).stdout == "echo verify\n"
    mounts = sorted(os.listdir(sandbox.root / "mounts"))
    assert len(mounts) == 2, mounts  # the replaced mounts' state is gone from the scratch dir


async def test_download_drops_links_or_keeps_them_as_links(sandbox: LocalSandbox, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "host-secret.txt").write_text("host\n")
    assert (await sandbox.exec(f"mkdir -p /app/out && echo r > /app/out/r.txt && ln -s {outside} /app/out/dir")).ok
    assert (await sandbox.exec("ln -s /etc/passwd /app/out/pw")).ok
    record = await sandbox.download("/app/out", tmp_path / "got")
    got = tmp_path / "got"
    assert (got / "r.txt").read_text() == "r\n"
    assert sorted(p.name for p in got.rglob("*")) == ["r.txt"]  # no link into the host in a download
    assert len(record.skipped) == 2 and all("symbolic link" in line for line in record.skipped)
    assert "symbolic link" in (tmp_path / "got.skipped.txt").read_text()
    await sandbox.download("/app/out", tmp_path / "kept", links="keep")  # the outputs copy: links as links
    kept = tmp_path / "kept"
    assert (kept / "dir").is_symlink() and (kept / "pw").is_symlink()
    assert sorted(p.name for p in kept.rglob("*") if not p.is_symlink()) == ["r.txt"]


async def test_extra_binds_show_and_hide_paths_cover(task: Task, tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.mkdir()
    (tool / "run.sh").write_text("echo tool\n")
    hidden = Path("/usr/share/doc")  # an allowlisted dir, standing in for a task kept under /opt
    assert any(hidden.iterdir())
    sb = LocalSandbox(
        task,
        tmp_path / "scratch",
        extra_ro_binds=[(tool, "/opt/skillworks-tool"), (tool, "/work/tool")],
        hide_paths=[hidden],
    )
    await sb.start()
    try:
        shown = await sb.exec("bash /opt/skillworks-tool/run.sh && bash /work/tool/run.sh && ls -A /work")
        assert shown.stdout.split() == ["tool", "tool", "tool"], shown.stderr
        assert (await sb.exec("touch /work/tool/x")).exit_code != 0  # read-only
        covered = await sb.exec(f"ls -A {hidden} | wc -l; ls -d /usr/share")
        assert covered.stdout.split() == ["0", "/usr/share"], covered.stderr
    finally:
        await sb.stop()


async def test_a_channel_without_a_system_python_is_a_clear_error(sandbox: LocalSandbox, tmp_path: Path) -> None:
    sandbox.view.root_allow = frozenset({"etc"})  # a host whose allowlisted dirs hold no python3
    async with _gateway_factory(tmp_path)("gw") as sock:
        with pytest.raises(SandboxError, match=r"model channel needs a system python3 \(one of /usr/bin/python3"):
            await sandbox.open_model_channel(ModelChannel(sock, 4141))
    assert sandbox.model_channel_url is None
