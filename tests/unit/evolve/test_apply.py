"""Safe apply of skill patches: every rejection reason leaves the library byte-identical; a crash mid-apply
leaves the previous version intact. Real files, real `skillworks check`."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from skillworks.evolve.apply import Limits, apply_patch, library_hash
from skillworks.evolve.patch import MalformedPatch, Patch, parse_patch

GOOD_MD = (
    "---\nname: csv-sums\ndescription: Sum a column of a delimited file. Use for totals of CSV columns.\n---\n"
    "# Sums\n\nRun `python3 scripts/sum.py FILE COLUMN` and write what it prints.\n"
)


def _lib(tmp_path: Path) -> Path:
    lib = tmp_path / "v0"
    (lib / "csv-sums" / "scripts").mkdir(parents=True)
    (lib / "csv-sums" / "SKILL.md").write_text(GOOD_MD)
    (lib / "csv-sums" / "scripts" / "sum.py").write_text("print(1)\n")
    (lib / "csv-sums" / "scripts" / "old.py").write_text("print(0)\n")
    (tmp_path / "outside").mkdir()
    (lib / "linked").symlink_to(tmp_path / "outside")
    return lib


def _snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = f"-> {os.readlink(p)}" if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return out


def _apply(prev: Path, patch: Patch, dest: Path, limits: Limits = Limits()):  # type: ignore[no-untyped-def]
    return asyncio.run(apply_patch(prev, patch, dest, limits))


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ({"upsert_files": [{"path": "/etc/evil/SKILL.md", "content": "x"}]}, "absolute path"),
        ({"upsert_files": [{"path": "csv-sums/../../escape.txt", "content": "x"}]}, "path with '..'"),
        ({"upsert_files": [{"path": "linked/SKILL.md", "content": GOOD_MD}]}, "path through a symlink"),
        ({"upsert_files": [{"path": "top.txt", "content": "x"}]}, "outside a skill directory"),
        ({"upsert_files": [{"path": "csv-sums/bad.txt", "content": "bad \udc80 byte"}]}, "non-UTF-8 content"),
        ({"upsert_files": [{"path": "csv-sums/big.txt", "content": "x" * 2000}]}, "file over the size limit"),
        (
            {"upsert_files": [{"path": f"csv-sums/f{i}.txt", "content": "x"} for i in range(7)]},
            "over the file-count limit",
        ),
        (
            {"upsert_files": [{"path": f"csv-sums/g{i}.txt", "content": "x" * 1000} for i in range(3)]},
            "library over the size limit",
        ),
        ({"upsert_files": [{"path": "csv-sums/SKILL.md", "content": "no frontmatter"}]}, "fails the spec"),
        ({"upsert_files": [{"path": "new-skill/scripts/a.py", "content": "print(1)"}]}, "fails the spec"),
        (
            {"upsert_files": [{"path": "Bad_Name/SKILL.md", "content": GOOD_MD.replace("csv-sums", "Bad_Name")}]},
            "fails the spec",
        ),
        ({"delete_paths": ["csv-sums/missing.py"]}, "does not exist"),
        # other ways out of the root, and paths that cannot be written as given
        ({"upsert_files": [{"path": "~/evil/SKILL.md", "content": "x"}]}, "absolute path"),
        ({"upsert_files": [{"path": "C:/evil/SKILL.md", "content": "x"}]}, "absolute path"),
        ({"upsert_files": [{"path": "csv-sums\\..\\..\\evil", "content": "x"}]}, "invalid path"),
        ({"upsert_files": [{"path": "linked", "content": "x"}]}, "path through a symlink"),
        ({"delete_paths": ["linked"]}, "path through a symlink"),
        ({"upsert_files": [{"path": "csv-sums/SKILL.md/evil", "content": "x"}]}, "the patch's paths conflict"),
        ({"upsert_files": [{"path": "csv-sums/scripts", "content": "x"}]}, "the patch's paths conflict"),
        ({"delete_paths": ["csv-sums/scripts", "csv-sums/scripts/sum.py"]}, "does not exist"),
        ({"upsert_files": [{"path": "csv-sums/" + "a" * 300, "content": "x"}]}, "longer than 255 bytes"),
        ({"upsert_files": [{"path": "csv-sums/.git/hooks/x", "content": "x"}]}, "directory skill packages ignore"),
        ({"delete_paths": ["csv-sums/SKILL.md"]}, "fails the spec"),
    ],
)
def test_malicious_patch_is_rejected_and_library_unchanged(tmp_path: Path, patch: dict, reason: str) -> None:
    prev = _lib(tmp_path)
    before = _snapshot(prev)
    limits = Limits(file_bytes=1500, files=6, library_bytes=3000)
    result = _apply(prev, Patch.model_validate(patch), tmp_path / "v1", limits)
    assert not result.accepted and result.reason is not None and reason in result.reason, result.reason
    assert _snapshot(prev) == before
    assert _snapshot(tmp_path / "v1") == before  # the new version is the old one, byte for byte
    assert result.library_hash == library_hash(prev)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "v0", "v1"]  # no temp dir left
    assert not (tmp_path / "escape.txt").exists() and not list((tmp_path / "outside").iterdir())


def test_good_patch_makes_a_new_version_and_keeps_the_old(tmp_path: Path) -> None:
    prev = _lib(tmp_path)
    before = _snapshot(prev)
    patch = Patch.model_validate(
        {
            "summary": "add a checker",
            "upsert_files": {"csv-sums/scripts/check.py": "print('ok')\n"},
            "delete_paths": ["csv-sums/scripts/old.py"],
        }
    )
    result = _apply(prev, patch, tmp_path / "v1")
    assert result.accepted and result.reason is None and result.skills == 1
    assert (tmp_path / "v1" / "csv-sums" / "scripts" / "check.py").read_text() == "print('ok')\n"
    assert not (tmp_path / "v1" / "csv-sums" / "scripts" / "old.py").exists()
    assert _snapshot(prev) == before and result.library_hash != library_hash(prev)


def test_a_whole_skill_is_deleted_by_its_directory_or_all_its_files(tmp_path: Path) -> None:
    prev = _lib(tmp_path)
    result = _apply(prev, Patch.model_validate({"delete_paths": ["csv-sums"]}), tmp_path / "v1")
    assert result.accepted and result.skills == 0 and not (tmp_path / "v1" / "csv-sums").exists()
    every_file = ["csv-sums/SKILL.md", "csv-sums/scripts"]
    result = _apply(prev, Patch.model_validate({"delete_paths": every_file}), tmp_path / "v2")
    assert result.accepted and not (tmp_path / "v2" / "csv-sums").exists()
    assert (prev / "csv-sums" / "SKILL.md").read_text() == GOOD_MD


def test_crash_mid_apply_leaves_previous_version_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillworks.evolve import apply as apply_mod

    prev = _lib(tmp_path)
    before = _snapshot(prev)
    real_write = Path.write_bytes
    calls = {"n": 0}

    def crash_on_second(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real_write(self, data)

    monkeypatch.setattr(apply_mod.Path, "write_bytes", crash_on_second)
    patch = Patch.model_validate({"upsert_files": {"csv-sums/a.txt": "a", "csv-sums/b.txt": "b"}})
    with pytest.raises(OSError, match="disk full"):
        _apply(prev, patch, tmp_path / "v1")
    assert _snapshot(prev) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "v0"]  # no v1, no half-written temp


@pytest.mark.parametrize(
    "answer",
    ["not json at all", "[1, 2]", '{"summary": "x", "upsert_files": "nope"}', '{"summary": "x", "extra": 1}'],
)
def test_malformed_answers(answer: str) -> None:
    with pytest.raises(MalformedPatch):
        parse_patch(answer)


def test_fenced_answer_parses() -> None:
    patch = parse_patch('```json\n{"summary": "s", "upsert_files": [{"path": "a/SKILL.md", "content": "c"}]}\n```')
    assert patch.summary == "s" and patch.upsert_files[0].path == "a/SKILL.md"
