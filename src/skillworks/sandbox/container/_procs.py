"""Process and file plumbing of ContainerSandbox: killing an exec's process tree inside the
container, ending a forwarder, and the tar/copy helpers of upload and download (reading exec
output and the wait/kill steps are shared with the local sandbox: skillworks.sandbox._process)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from skillworks.sandbox._process import kill_process, wait_or_kill
from skillworks.sandbox.base import ExecResult
from skillworks.sandbox.safe_copy import CopyRecord, LinkPolicy, copy_from_tar

EXEC_MARK = "SKILLWORKS_EXEC_ID"
KILL_GRACE_SEC = 5.0
MISSING_EXE_RE = re.compile(
    r'exec(?:utable file)?:? "?([^"\s:]+)"?:? (?:executable file )?not found|executable file `?([^`\s]+)`? not found'
)
# Kill every process whose environment carries the exec's mark (the whole tree, even re-parented
# or setsid'd children): freeze them all first (twice, to catch forks in between), then SIGKILL,
# so no survivor runs another step of the command meanwhile.
KILL_SCRIPT = (
    'marked() { for d in /proc/[0-9]*; do p="${d#/proc/}"; [ "$p" = "$$" ] && continue; '
    'tr "\\000" "\\n" < "$d/environ" 2>/dev/null | grep -qxF "$1" && echo "$p"; done; }; '
    'a=$(marked "$1"); [ -n "$a" ] && kill -STOP $a 2>/dev/null; '
    'b=$(marked "$1"); [ -n "$b" ] && kill -STOP $b 2>/dev/null; '
    '[ -n "$a$b" ] && kill -KILL $a $b 2>/dev/null; exit 0'
)
# more zombies than this left by the agent: restart the container (pid 1 never reaps them, so they
# hold pids the verifier needs). There are none unless the agent left something running or orphaned.
ZOMBIE_LIMIT = 0
# What the container runs as its pid 1 (as the image's user): the agent phase's log dir and its start
# mark (kept across a restart), then sleep. Nothing of the agent runs before it, and staged skills keep
# their files' times, so a workspace file newer than the mark is the agent's.
# pid 1, started as root (args: agent log dir, start mark, the image's USER or ""): the log dir and the
# mark belong to the image's user, so a non-root USER can write its logs. `true >`, not `: >`: a failed
# redirection of a special built-in would end sh (and the container) at once
CONTAINER_INIT = (
    'mkdir -p "$1" 2>/dev/null; [ -e "$2" ] || true > "$2" 2>/dev/null; '
    '[ -z "$3" ] || chown "$3" "$1" "$2" 2>/dev/null || chown "${3%%:*}" "$1" "$2" 2>/dev/null; exec sleep infinity'
)
# After the agent phase, as root, with nothing of the agent running (args: workdir, start mark, agent
# log dir, dirs to reset): whether the agent changed a workspace file, whether it left logs, then the
# reset dirs emptied (rm -rf + mkdir, whatever the agent did to their permissions). Exit 4: no reset.
AFTER_AGENT_SCRIPT = (
    "w=$1 m=$2 l=$3; shift 3; changed=0; logs=0; "
    '[ -n "$(find "$w" -newer "$m" -type f -print -quit 2>/dev/null)" ] && changed=1; '
    'for f in "$l"/* "$l"/.[!.]* "$l"/..?*; do '
    '{ [ -e "$f" ] || [ -L "$f" ]; } && [ "$f" != "$m" ] && { logs=1; break; }; done; '
    'echo "changed $changed logs $logs"; [ $# -gt 0 ] || exit 0; '
    'rm -rf -- "$@" && mkdir -p -m 755 -- "$@" || exit 4; '
    'for d; do [ -z "$(ls -A -- "$d")" ] || exit 4; done; echo reset'
)
# End the agent phase: SIGKILL every process of the container but its pid 1 (kill(-1) is atomic
# against forks), then wait until none but zombies is left; print what survived and how many zombies
# (orphans re-parented to pid 1, which never reaps them, so they hold pids). No fork in the loop:
# /proc is read with shell built-ins only. When nothing survived and the zombies are few enough, the
# same round trip goes on with AFTER_AGENT_SCRIPT (same args).
END_AGENT_SCRIPT = (
    "kill -9 -1 2>/dev/null; n=0; "
    "while :; do alive=; zombies=0; "
    'for d in /proc/[0-9]*; do p="${d#/proc/}"; { [ "$p" = 1 ] || [ "$p" = "$$" ]; } && continue; '
    's=; while read -r k v _; do [ "$k" = State: ] && { s=$v; break; }; done 2>/dev/null < "$d/status"; '
    '[ -z "$s" ] && continue; if [ "$s" = Z ]; then zombies=$((zombies+1)); else alive="$alive $p"; fi; done; '
    '[ -z "$alive" ] && break; '
    'n=$((n+1)); [ "$n" -ge 20 ] && { echo "alive$alive"; exit 3; }; kill -9 $alive 2>/dev/null; sleep 0.1; done; '
    f'echo "zombies $zombies"; [ "$zombies" -le {ZOMBIE_LIMIT} ] || exit 0; ' + AFTER_AGENT_SCRIPT
)
# Appended to END_AGENT_SCRIPT when the verifier's files come in the same round trip (its tar stream
# on stdin): extracted at / once the reset dirs are empty, "uploaded" printed when it worked (else the
# caller uploads them as usual: an image without tar, a stream tar could not extract).
UPLOAD_AFTER_RESET = "; if command -v tar >/dev/null 2>&1 && tar -xf - -C /; then echo uploaded; fi; exit 0"
# With a `then` command as well (the verifier's): the whole script's stdout goes to stderr (fd 3 keeps
# the exec's stdout), the upload is extracted, and once the command's dir and bash are there a marker
# line ends skillworks' own lines on stderr and the command replaces the shell, with the exec's stdout
# and no stdin. Without the marker (a restart is needed, no tar, no bash) the command did not run.
THEN_MARKER = "skillworks-then"
THEN_CMD_VAR, THEN_CWD_VAR = "SKILLWORKS_THEN_CMD", "SKILLWORKS_THEN_CWD"
THEN_PREFIX = "exec 3>&1 1>&2; "
THEN_AFTER_RESET = (
    "; command -v tar >/dev/null 2>&1 && tar -xf - -C / || exit 0; echo uploaded; "
    f"c=${THEN_CMD_VAR} d=${THEN_CWD_VAR}; unset {THEN_CMD_VAR} {THEN_CWD_VAR}; "
    f'command -v bash >/dev/null 2>&1 && cd "$d" || exit 0; echo {THEN_MARKER}; '
    'exec 1>&3 3>&- </dev/null; exec bash -c "$c"'
)
# One upload that replaces what was at its destination (as root; args: the destination): the tar
# stream on stdin, extracted at /. Exit 97 when the image has no tar (then: rm, and `cp`).
REPLACE_UPLOAD_SCRIPT = 'command -v tar >/dev/null 2>&1 || exit 97; rm -rf -- "$1" && exec tar -xf - -C /'
NO_TAR_EXIT = 97
NOT_FOUND_RE = re.compile(r"could not be found|could not find|no such file|not found", re.IGNORECASE)


async def end_forwarder(proc: asyncio.subprocess.Process) -> None:
    """Close the forwarder's stdin (it exits at end-of-file); kill the exec if it lingers."""
    if proc.stdin is not None:
        proc.stdin.close()
    await wait_or_kill(proc, KILL_GRACE_SEC, lambda: kill_process(proc))


def missing_executable(result: ExecResult, program: str) -> bool:
    """Whether the runtime (not the command) failed because `program` is not in the image."""
    if result.exit_code not in (126, 127) or result.stdout:
        return False
    return any(program in (m.group(1) or m.group(2) or "") for m in MISSING_EXE_RE.finditer(result.stderr))


def write_tar(archive: IO[bytes], src: Path, arcname: str) -> None:
    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(src, arcname=arcname, recursive=True, filter=as_root)


def stream_copy(
    argv: Sequence[str], staging: Path, root_name: str, links: LinkPolicy, shown_as: str
) -> tuple[CopyRecord | None, int, str]:
    """Run `<runtime> cp <ctr>:<path> -` and write its tar stream to `staging` through the safe copy.
    (record, exit code, last stderr line); record None when the stream held nothing (e.g. no such path)."""
    with tempfile.TemporaryFile(prefix="skillworks-cp-err-") as err_file:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err_file)
        assert proc.stdout is not None
        record: CopyRecord | None = None
        try:
            record = copy_from_tar(proc.stdout, staging, root_name=root_name, links=links, shown_as=shown_as)
        except FileNotFoundError:
            record = None
        finally:
            if proc.poll() is None:
                proc.kill()  # a stream stopped early (over the cap): the rest is not read
            proc.stdout.close()
            code = proc.wait()
        err_file.seek(0)
        lines = err_file.read().decode(errors="replace").strip().splitlines()
    return record, code, (lines[-1] if lines else "")
