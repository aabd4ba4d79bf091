"""`--image-registry` references: what docker and podman accept as a registry (host[:port][/namespace])
is taken, anything else is a one-line error (exit 2) before a run directory exists."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.errors import UserError
from skillworks.sandbox.container.registry import parse_registry, registry_ref

EXAMPLE = Path(__file__).parents[3] / "examples" / "container" / "csv-column-total"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("localhost:5000", "localhost:5000"),
        ("127.0.0.1:5000/", "127.0.0.1:5000"),
        ("ghcr.io/acme", "ghcr.io/acme"),
        ("registry.example.com:443/team/sub_team", "registry.example.com:443/team/sub_team"),
    ],
)
def test_registry_references_docker_and_podman_accept(given: str, expected: str) -> None:
    assert parse_registry(given) == expected
    assert registry_ref(expected, "skillworks/env:0123456789abcdef") == f"{expected}/skillworks/env:0123456789abcdef"


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("", "empty"),
        ("https://ghcr.io/acme", "without a scheme"),
        ("myuser", "must be a registry host"),
        ("ghcr.io/Acme", "lowercase namespace"),
        ("localhost:5000/ns:tag", "not a registry reference"),
        ("ghcr.io/acme@sha256:00", "not a registry reference"),
        ("-bad.host:5000", "not a registry reference"),
    ],
)
def test_malformed_registry_reference_says_why(bad: str, why: str) -> None:
    with pytest.raises(UserError, match=why):
        parse_registry(bad)


def test_malformed_registry_is_a_one_line_error_before_any_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["skillworks", "run", str(EXAMPLE), "--env", "container", "--out", str(tmp_path), "--run-id", "r"]
    monkeypatch.setattr(sys, "argv", [*argv, "--image-registry", "http://127.0.0.1:5000"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --image-registry 'http://127.0.0.1:5000'"), lines
    assert not (tmp_path / "r").exists()
    # the TLS switch alone is a mistake too
    monkeypatch.setattr(sys, "argv", [*argv, "--no-image-registry-tls-verify"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    assert "need --image-registry" in capsys.readouterr().err
    # and the registry needs the container backend
    monkeypatch.setattr(sys, "argv", [*argv[:3], "--out", str(tmp_path), "--image-registry", "localhost:5000"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    assert "need --env container" in capsys.readouterr().err
