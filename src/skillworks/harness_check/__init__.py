"""Real loadability per harness (`skillworks check SKILL --harness …`): each installed CLI started offline with
the skill staged as a user installs it; listed / loaded / not listed, the description shown, what the CLI said."""

from skillworks.harness_check.probe import (
    HarnessVerdict,
    check_harnesses,
    harness_names,
    probe_harness,
    render_verdicts,
    verdicts_json,
)

__all__ = ["HarnessVerdict", "check_harnesses", "harness_names", "probe_harness", "render_verdicts", "verdicts_json"]
