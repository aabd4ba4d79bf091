"""Issue 30: the container flags a host needs are probed, not taken from the Makefile."""

from __future__ import annotations

import resource

from skillworks.sandbox.container.host_flags import explain_oci_error, merge_host_flags, ulimit_flags
from skillworks.sandbox.container.runtime import CommandResult

RUNC_RLIMIT = (
    "Error: runc: runc create failed: unable to start container process: error during container init: "
    "error setting rlimit type 7: operation not permitted: OCI permission denied"
)


def test_ulimits_are_the_callers_hard_limits() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    flags = ulimit_flags()
    if hard != resource.RLIM_INFINITY and hard < 1048576:
        assert f"nofile={hard}:{hard}" in flags
    else:
        assert not any(f.startswith("nofile=") for f in flags)


def test_flags_the_user_gave_win_over_probed_ones() -> None:
    _, run, _ = merge_host_flags("podman", (), ("--ulimit", "nofile=512:512"), ())
    assert [f for f in run if f.startswith("nofile=")] == ["nofile=512:512"]
    g, _, _ = merge_host_flags("podman", ("--cgroup-manager=systemd",), (), ())
    assert g == ("--cgroup-manager=systemd",)


def test_rlimit_start_error_is_one_line_naming_cause_and_flag() -> None:
    line = CommandResult(("podman", "run"), 126, "", "some noise\n" + RUNC_RLIMIT + "\n").error_line()
    assert "\n" not in line
    assert "nofile" in line and "--ulimit nofile=" in line and "--container-run-flag" in line


def test_an_unknown_error_stays_the_runtimes_own_line() -> None:
    assert explain_oci_error("Error: image not known") is None
    assert CommandResult(("podman",), 125, "", "Error: image not known\n").error_line() == "Error: image not known"
