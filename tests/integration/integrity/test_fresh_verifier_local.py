"""Issue 30 on the local (bubblewrap) backend: the verifier's bwrap view is built afresh (the host's
read-only system dirs plus a workspace seeded from the task's environment/, with the agent's outputs
copied in), not the agent's writable tree; no download follows a link onto the host (a /logs/agent that
the agent made a link to /etc copies nothing of the host's /etc); FIFOs and sparse files are skipped.
Each attack runs through `skillworks run` with scripted agent turns (the model provider `scripted` is the
one test double). The host's system dirs are read-only here, so the site-packages, PATH, /bin/sh and
pytest-at-/ attacks of the container suite cannot be planted at all; what the agent could write outside
the workspace ($HOME, /tmp) no longer reaches the verifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.results import TrialResult

from .attacks_fresh import (
    AGENT_LOG_LINKS_INSIDE,
    AGENT_LOGS_LINK,
    COPYING_VERIFIER,
    FIFO_SPARSE,
    SOLVE,
    VERIFIER_LOG_LINK,
    apparent_size,
    host_bytes_in,
)
from .conftest import Attack, assert_honest_failure, results_by_task, run_suite, write_suite

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

# a verifier that (carelessly) reads a helper from /tmp: the agent's /tmp is not the verifier's
TMP_PLANT = "echo 42 > /tmp/answer.txt && echo planted"
TMP_VERIFIER = """\
mkdir -p /logs/verifier
if grep -qx 42 /app/answer.txt 2>/dev/null || grep -qx 42 /tmp/answer.txt 2>/dev/null; then r=1.0; else r=0.0; fi
echo "$r" > /logs/verifier/reward.txt
"""
STRAY = "echo 42 > /app/answer.txt && echo x > ~/notes.txt && echo solved"

ATTACKS = [
    Attack("agent-logs-link", (AGENT_LOGS_LINK,)),
    Attack("agent-log-links", (AGENT_LOG_LINKS_INSIDE,)),
    Attack("verifier-log-link", (VERIFIER_LOG_LINK,), verifier=COPYING_VERIFIER),
    Attack("fifo-sparse", (FIFO_SPARSE,)),
    Attack("tmp-plant", (TMP_PLANT,), verifier=TMP_VERIFIER),
    Attack("honest", (SOLVE,)),
    Attack("honest-stray", (STRAY,)),
]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TrialResult]]:
    root = tmp_path_factory.mktemp("fresh-verifier-local")
    tasks, script = write_suite(root, ATTACKS, container=False)
    proc, run_dir = run_suite(root, tasks, script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, results_by_task(run_dir)


def test_no_download_follows_a_link_onto_the_host(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, results = attacked
    assert host_bytes_in(run_dir) == []
    for name in ("agent-logs-link", "agent-log-links", "verifier-log-link"):
        assert_honest_failure(results[name])
    trial = run_dir / "trials" / results["agent-logs-link"].trial_id
    assert not (trial / "agent" / "sandbox-logs" / "passwd").exists()
    assert "/logs/agent: is a link" in (trial / "agent" / "sandbox-logs.skipped.txt").read_text()
    logs = run_dir / "trials" / results["verifier-log-link"].trial_id / "verifier"
    assert "report.txt: symbolic link to '/etc/passwd'" in (logs / "logs.skipped.txt").read_text()


def test_fifos_and_sparse_files_are_skipped_not_inflated(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    run_dir, results = attacked
    result = results["fifo-sparse"]
    assert_honest_failure(result)
    trial = run_dir / "trials" / result.trial_id
    assert apparent_size(trial) < 16 << 20
    assert (trial / "agent" / "sandbox-logs" / "small.txt").read_text() == "small\n"
    skipped = (trial / "agent" / "sandbox-logs.skipped.txt").read_text()
    assert "huge.bin: 1073741824 bytes: over the cap" in skipped and "pipe: FIFO: not copied" in skipped
    assert any("huge.bin" in line for line in result.outputs_skipped)


def test_the_verifier_does_not_see_the_agents_tmp(attacked: tuple[Path, dict[str, TrialResult]]) -> None:
    result = attacked[1]["tmp-plant"]
    assert_honest_failure(result)
    assert result.verifier_isolation == "fresh"


def test_outputs_reach_the_fresh_verifier_and_strays_are_listed(
    attacked: tuple[Path, dict[str, TrialResult]],
) -> None:
    results = attacked[1]
    assert results["honest"].reward == 1.0 and results["honest"].outputs_not_copied == []
    stray = results["honest-stray"]
    assert stray.reward == 1.0 and stray.outputs_not_copied == ["/home/agent/notes.txt"], stray.outputs_not_copied
