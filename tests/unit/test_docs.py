"""The documentation: the README stays a newcomer's page (at most 250 lines, no stale claim), names every
command `skillworks --help` lists and no command that does not exist, links the docs pages that exist, and
the MkDocs site builds with --strict (every page in the nav, every link resolving)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from skillworks.cli.main import command

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _commands() -> set[str]:
    return {name for name, cmd in command().commands.items() if not getattr(cmd, "hidden", False)}


def test_readme_is_short_and_names_exactly_the_commands_that_exist() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert "not in this release" not in text and "planned" not in text.lower()
    listed = set(re.findall(r"^\| `skillworks ([a-z-]+)", text, re.M))
    assert listed == _commands(), (sorted(_commands() - listed), sorted(listed - _commands()))
    # every command line in the README's code names a real command
    code = "\n".join(re.findall(r"```[a-z]*\n(.*?)```", text, re.S) + re.findall(r"^    (.*)$", text, re.M))
    used = set(re.findall(r"^\s*(?:\$ )?skillworks ([a-z][a-z-]*)", code, re.M))
    assert used <= _commands(), sorted(used - _commands())
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), link


def test_every_docs_page_is_in_the_nav_and_the_site_builds_strictly(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [p for item in nav for p in pages(item)]
        if isinstance(nav, dict):
            return [p for v in nav.values() for p in pages(v)]
        return []

    in_nav = set(pages(config["nav"]))
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert in_nav == on_disk, (sorted(on_disk - in_nav), sorted(in_nav - on_disk))
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is missing: pip install -e '.[dev]' installs it"
    done = subprocess.run(
        [mkdocs, "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner about its successor
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "security" / "index.html").is_file()
