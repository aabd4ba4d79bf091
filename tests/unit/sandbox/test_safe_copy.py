"""The safe copy every download and the outputs copy go through (issue 30): real tar streams, real files."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from skillworks.sandbox.safe_copy import CopyLimits, copy_from_tar, write_host_tar


def _tree(root: Path) -> Path:
    src = root / "out"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("a\n")
    (src / "sub" / "b.txt").write_text("b\n")
    os.symlink("/etc/passwd", src / "pw")
    os.symlink("/etc", src / "sub" / "etc")
    os.mkfifo(src / "fifo")
    with open(src / "sparse.bin", "wb") as fh:
        fh.truncate(3 << 30)  # 3 GB apparent, nothing on disk
    return src


def _copy(src: Path, dst: Path, links: str = "drop", limits: CopyLimits | None = None):  # type: ignore[no-untyped-def]
    stream = io.BytesIO()
    limits = limits or CopyLimits(max_file_bytes=1 << 20, max_total_bytes=4 << 20)
    record = write_host_tar(src, stream, arcname=src.name, limits=limits)
    stream.seek(0)
    record.merge(copy_from_tar(stream, dst, root_name=src.name, links=links, limits=limits, shown_as="/app/out"))  # type: ignore[arg-type]
    return record


def test_download_drops_links_and_special_files_and_caps_sparse_files(tmp_path: Path) -> None:
    record = _copy(_tree(tmp_path), tmp_path / "got")
    got = tmp_path / "got"
    assert sorted(str(p.relative_to(got)) for p in got.rglob("*")) == ["a.txt", "sub", "sub/b.txt"]
    assert not any(p.is_symlink() for p in got.rglob("*"))
    text = "\n".join(record.lines())
    assert "sparse.bin: 3221225472 bytes: over the cap" in text
    assert "/app/out/fifo: FIFO: not copied" in text
    assert "/app/out/pw: symbolic link to '/etc/passwd': not copied" in text
    assert record.bytes == 4


def test_outputs_copy_keeps_links_as_links_never_followed(tmp_path: Path) -> None:
    _copy(_tree(tmp_path), tmp_path / "kept", links="keep")
    kept = tmp_path / "kept"
    assert os.readlink(kept / "pw") == "/etc/passwd" and os.readlink(kept / "sub" / "etc") == "/etc"


def _tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> io.BytesIO:
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    stream.seek(0)
    return stream


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


def test_a_stream_cannot_write_through_a_link_it_made_or_climb_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    stream = _tar(
        (_info("out", tarfile.DIRTYPE), None),
        (_info("out/l", tarfile.SYMTYPE, str(outside)), None),
        (_info("out/l/planted.txt"), b"x"),
        (_info("out/../escape.txt"), b"x"),
        (_info("out/ok.txt"), b"ok"),
    )
    record = copy_from_tar(stream, tmp_path / "dst", root_name="out", links="keep")
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
    assert (tmp_path / "dst" / "ok.txt").read_bytes() == b"ok"
    assert any("parent is a link" in line for line in record.skipped)
    assert any("unsafe name" in line for line in record.skipped)


def test_a_source_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    # `<runtime> cp ctr:/logs/agent -` of a /logs/agent that is a link to /etc streams the target as "etc"
    stream = _tar((_info("etc", tarfile.DIRTYPE), None), (_info("etc/passwd"), b"root:x:0:0"))
    record = copy_from_tar(stream, tmp_path / "agent", root_name="agent", shown_as="/logs/agent")
    assert not (tmp_path / "agent").exists()
    assert record.skipped == ["/logs/agent: is a link (not followed)"]


def test_an_empty_stream_is_a_missing_source(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        copy_from_tar(io.BytesIO(b""), tmp_path / "x", root_name="x")


def test_a_stream_past_the_budget_is_stopped(tmp_path: Path) -> None:
    limits = CopyLimits(max_file_bytes=1 << 10, max_total_bytes=1 << 10, stream_slack=1 << 16)
    big = b"y" * (limits.stream_budget + 1)
    record = copy_from_tar(
        _tar((_info("out", tarfile.DIRTYPE), None), (_info("out/big"), big)),
        tmp_path / "d",
        root_name="out",
        limits=limits,
    )
    assert any("the copy stopped" in line for line in record.skipped)
    assert not (tmp_path / "d" / "big").exists()
