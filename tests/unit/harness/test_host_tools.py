"""Host tools mounted into sandboxes (issue 17): the host's ripgrep, its libraries and the host's loader."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from skillworks.agents.harness.host_tools import LIB_MOUNT, TOOLS_MOUNT, host_tool
from skillworks.agents.harness.specs import OPENCODE
from skillworks.errors import UserError


def test_ripgrep_comes_with_every_library_it_links_and_a_wrapper_that_uses_the_hosts_loader(tmp_path: Path) -> None:
    tool = host_tool("rg", "opencode", tmp_path)
    targets = dict((dst, src) for src, dst in tool.binds)
    assert f"{TOOLS_MOUNT}/rg" in targets and f"{TOOLS_MOUNT}/.bin/rg" in targets
    libs = {dst.rsplit("/", 1)[1] for dst in targets if dst.startswith(LIB_MOUNT + "/")}
    assert any(name.startswith("ld-linux") for name in libs) and "libc.so.6" in libs  # runs on musl images too
    wrapper = (tmp_path / "rg").read_text()
    assert wrapper.startswith("#!/bin/sh\n") and f"--library-path {LIB_MOUNT} {TOOLS_MOUNT}/.bin/rg" in wrapper
    assert "LD_LIBRARY_PATH" not in wrapper  # nothing leaks into the agent's processes
    assert tool.probe_argv() == [f"{TOOLS_MOUNT}/rg", "--version"]
    assert OPENCODE.host_tools == ["rg"]


@pytest.mark.bwrap
def test_the_wrapper_runs_ripgrep_from_the_mounted_paths_alone(tmp_path: Path) -> None:
    """A bubblewrap root with nothing but /bin/sh (and the few files sh itself links) plus the tool's mounts:
    no libpcre2 anywhere outside /opt/skillworks/lib, and ripgrep still runs."""
    tool = host_tool("rg", "opencode", tmp_path / "wrappers")
    shell = Path("/bin/sh").resolve()
    argv = ["bwrap", "--tmpfs", "/", "--ro-bind", str(shell), "/bin/sh"]
    ldd = subprocess.run(["ldd", str(shell)], capture_output=True, text=True, check=True).stdout
    for path in re.findall(r"(/\S+) \(0x", ldd):  # the loader and libc that sh needs, at their own paths
        argv += ["--ro-bind", str(Path(path).resolve()), path]
    for src, dst in tool.binds:
        argv += ["--ro-bind", str(src), dst]
    done = subprocess.run([*argv, tool.path_in_sandbox, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ripgrep ")
    bare = subprocess.run([*argv, f"{TOOLS_MOUNT}/.bin/rg", "--version"], capture_output=True, text=True, timeout=60)
    assert bare.returncode != 0  # without the wrapper the same binary cannot find its libraries there


def test_a_missing_host_tool_is_a_clear_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"opencode needs `no-such-tool-xyz` .*apt-get install no-such-tool-xyz"):
        host_tool("no-such-tool-xyz", "opencode", tmp_path)
