"""Host-side pieces of the container backend: the static forwarder (run on the host, on loopback),
the unix relay, driver liveness for `clean`, and how downloads are put in place."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import subprocess
import tempfile
from pathlib import Path

from skillworks.sandbox.container.cleanup import (
    LABEL_HOST,
    LABEL_PID,
    LABEL_PID_START,
    _driver_alive,
    container_labels,
    process_start_time,
)
from skillworks.sandbox.container.helper import forwarder_binary
from skillworks.sandbox.container.relay import UnixRelay
from skillworks.sandbox.safe_copy import place


async def _echo_server(path: Path) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read()  # until the client half-closes
        writer.write(b"echo:" + data)
        await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(handle, path=str(path))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _roundtrip(port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(payload)
    writer.write_eof()
    reply = await reader.read()
    writer.close()
    return reply


def _has_interpreter(path: Path) -> bool:
    """Whether a 64-bit little-endian ELF file has a PT_INTERP program header (is dynamic)."""
    data = path.read_bytes()[:8192]
    assert data[:4] == b"\x7fELF"
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return any(struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 3 for i in range(phnum))


async def test_static_forwarder_relays_and_exits_at_stdin_eof() -> None:
    binary = forwarder_binary()
    assert binary == forwarder_binary()  # cached
    assert not _has_interpreter(binary), "the forwarder must be static (no ELF interpreter)"
    with tempfile.TemporaryDirectory(prefix="sw-t-") as tmp:
        sock = Path(tmp) / "s.sock"
        server = await _echo_server(sock)
        port = _free_port()
        proc = await asyncio.create_subprocess_exec(
            str(binary), f"127.0.0.1:{port}", str(sock), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stdin is not None
        assert (await proc.stdout.readline()).startswith(b"ready ")
        big = os.urandom(300_000)  # several buffers, both ways, with a half-close
        replies = await asyncio.gather(*(_roundtrip(port, big + bytes([i])) for i in range(5)))
        assert replies == [b"echo:" + big + bytes([i]) for i in range(5)]
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), 5) == 0
        server.close()


async def test_forwarder_bad_arguments() -> None:
    binary = forwarder_binary()
    done = subprocess.run([str(binary), "nonsense", "/x"], capture_output=True, text=True)
    assert done.returncode == 2 and "expected HOST:PORT" in done.stderr


async def test_unix_relay() -> None:
    with tempfile.TemporaryDirectory(prefix="sw-t-") as tmp:
        target = Path(tmp) / "target.sock"
        server = await _echo_server(target)
        relay = UnixRelay(Path(tmp) / "relay.sock", target)
        await relay.start()
        reader, writer = await asyncio.open_unix_connection(str(relay.listen_path))
        writer.write(b"hi")
        writer.write_eof()
        assert await reader.read() == b"echo:hi"
        writer.close()
        await relay.stop()
        assert not relay.listen_path.exists()
        server.close()


def test_driver_liveness() -> None:
    labels = container_labels("run-1", "task-1")
    assert labels[LABEL_PID] == str(os.getpid())
    assert _driver_alive(labels)
    assert not _driver_alive({**labels, LABEL_PID_START: "1"})  # pid reused by another process
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert process_start_time(dead.pid) is None
    assert not _driver_alive({**labels, LABEL_PID: str(dead.pid)})
    assert not _driver_alive({**labels, LABEL_PID: "not-a-pid"})
    assert _driver_alive({**labels, LABEL_HOST: "some-other-host", LABEL_PID: str(dead.pid)})  # cannot tell


def test_place_semantics(tmp_path: Path) -> None:
    def staged(name: str, files: dict[str, str]) -> Path:
        root = tmp_path / name
        root.mkdir()
        for rel, text in files.items():
            (root / rel).write_text(text)
        return root

    dst = tmp_path / "dst"
    place(staged("s1", {"a": "1"}), dst)  # new
    place(staged("s2", {"b": "2"}), dst)  # directory merges
    assert sorted(p.name for p in dst.iterdir()) == ["a", "b"]
    file_dst = tmp_path / "f"
    file_dst.write_text("old")
    single = tmp_path / "single"
    single.write_text("new")
    place(single, file_dst)  # a file replaces
    assert file_dst.read_text() == "new"
