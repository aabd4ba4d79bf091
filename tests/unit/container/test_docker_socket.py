"""Telling that docker's default daemon is down without running `docker version` (a real unix socket:
missing, bound but not listening, listening), and leaving it to the probe when docker is configured
to go elsewhere."""

from __future__ import annotations

import socket
from pathlib import Path

from skillworks.sandbox.container.runtime import docker_socket_down


def test_a_missing_or_refusing_socket_is_down_a_listening_one_is_left_to_the_probe(tmp_path: Path) -> None:
    path = tmp_path / "docker.sock"
    assert "Cannot connect to the Docker daemon at unix://" in (docker_socket_down({}, tmp_path, path) or "")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))  # bound, not listening: connections are refused
        assert docker_socket_down({}, tmp_path, path) is not None
        server.listen(1)
        assert docker_socket_down({}, tmp_path, path) is None


def test_docker_configured_elsewhere_is_left_to_the_probe(tmp_path: Path) -> None:
    missing = tmp_path / "docker.sock"
    assert docker_socket_down({"DOCKER_HOST": "tcp://10.0.0.1:2375"}, tmp_path, missing) is None
    assert docker_socket_down({"DOCKER_CONTEXT": "remote"}, tmp_path, missing) is None
    (tmp_path / ".docker").mkdir()
    (tmp_path / ".docker" / "config.json").write_text('{"currentContext": "rootless"}')
    assert docker_socket_down({}, tmp_path, missing) is None
    assert docker_socket_down({"DOCKER_CONFIG": str(tmp_path / "none")}, tmp_path, missing) is not None
