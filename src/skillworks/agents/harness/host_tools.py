"""Host tools a harness needs inside any sandbox image (e.g. OpenCode's `skill` tool runs ripgrep).

A task image may lack them and a sandbox has no network to fetch them, so the host's own executable is
mounted read-only, with every shared library it links (C library and dynamic loader included):

  /opt/skillworks/tools/<tool>        a /bin/sh wrapper, first on the harness's PATH
  /opt/skillworks/tools/.bin/<tool>   the host executable
  /opt/skillworks/lib/<soname>        its libraries and the host's dynamic loader

The wrapper starts the executable through the host's loader with `--library-path`, so the tool runs on
images with another C library (musl) or without its libraries, and nothing leaks into the environment
of the processes the agent starts (no LD_LIBRARY_PATH). `probe_argv` is run inside each sandbox before
the harness starts: a tool that still cannot run there (no /bin/sh, another CPU architecture) fails the
trial with a message that names the tool and the image, instead of a skill load that quietly fails.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from skillworks.errors import UserError

TOOLS_MOUNT = "/opt/skillworks/tools"
LIB_MOUNT = "/opt/skillworks/lib"
_INSTALL_HINT = {"rg": "ripgrep"}
_LDD_LINE = re.compile(r"^\s*(?:(\S+)\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)", re.MULTILINE)


@dataclass(frozen=True)
class HostTool:
    name: str
    binds: tuple[tuple[Path, str], ...]  # (host path, sandbox path), read-only

    @property
    def path_in_sandbox(self) -> str:
        return f"{TOOLS_MOUNT}/{self.name}"

    def probe_argv(self) -> list[str]:
        return [self.path_in_sandbox, "--version"]


def _libraries(executable: Path) -> tuple[list[tuple[Path, str]], str]:
    """(library host path, soname) of everything `executable` links, and the loader's soname."""
    done = subprocess.run(["ldd", str(executable)], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise UserError(f"cannot list the libraries of {executable}: {(done.stderr or done.stdout).strip()}")
    libs: list[tuple[Path, str]] = []
    loader = ""
    for soname, path in _LDD_LINE.findall(done.stdout):
        name = soname or Path(path).name
        if not soname:  # the interpreter line: /lib64/ld-linux-x86-64.so.2 (0x...)
            loader = name
        libs.append((Path(path).resolve(), name))
    if not loader:
        raise UserError(f"{executable}: no dynamic loader found in `ldd` output (a static binary needs no help)")
    return libs, loader


def host_tool(name: str, harness: str, wrapper_dir: Path) -> HostTool:
    """The host's `name` with its libraries and wrapper; UserError naming the package when it is missing."""
    found = shutil.which(name)
    if found is None:
        package = _INSTALL_HINT.get(name, name)
        raise UserError(
            f"{harness} needs `{name}` inside its sandbox: install it on the host (e.g. apt-get install {package})"
        )
    executable = Path(found).resolve()
    libs, loader = _libraries(executable)
    wrapper = wrapper_dir / name
    text = (
        "#!/bin/sh\n"
        f"# skillworks: the host's {name}, run by the host's loader with the host's libraries\n"
        f'exec {LIB_MOUNT}/{loader} --library-path {LIB_MOUNT} {TOOLS_MOUNT}/.bin/{name} "$@"\n'
    )
    wrapper_dir.mkdir(parents=True, exist_ok=True)
    if not wrapper.is_file() or wrapper.read_text() != text:
        tmp = wrapper.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(wrapper)
    binds = [(wrapper, f"{TOOLS_MOUNT}/{name}"), (executable, f"{TOOLS_MOUNT}/.bin/{name}")]
    binds += [(path, f"{LIB_MOUNT}/{soname}") for path, soname in libs]
    return HostTool(name, tuple(binds))
