"""Where a harness's own log and the gateway's record of a trial disagree, the gateway's record wins in the
trajectory (the harness's figure is kept beside it under a name that says whose it is).

- cost: Claude Code's `total_cost_usd` is the CLI's own estimate from its price table; the gateway priced
  the calls the trial actually made. `final_metrics.total_cost_usd` becomes the gateway's sum, and the CLI's
  figure stays in `final_metrics.extra.cli_reported_total_cost_usd`.
- tool names: Codex's event log names tool items by event type (`command_execution`, `file_change`); the
  gateway recorded the tools the model called. When the trajectory's tool calls and the gateway's recorded
  tool calls pair up one to one (same count), each call takes the recorded name; the converter's name stays
  in the call's `extra.logged_name`.
"""

from __future__ import annotations

from pathlib import Path

from skillworks.gateway.records import GatewayCall
from skillworks.trajectory.models import Trajectory


def _model_calls(gateway_log: Path) -> list[GatewayCall]:
    from skillworks.gateway import read_calls

    if not gateway_log.is_file():
        return []
    return [c for c in read_calls(gateway_log) if c.is_model_call and c.status == "ok"]


def cost_from_gateway(trajectory: Trajectory, gateway_log: Path) -> Trajectory:
    """final_metrics.total_cost_usd from the gateway's record (see the module docstring)."""
    calls = _model_calls(gateway_log)
    fm = trajectory.final_metrics
    if not calls or fm is None:
        return trajectory
    extra = dict(fm.extra or {})
    if fm.total_cost_usd is not None:
        extra["cli_reported_total_cost_usd"] = fm.total_cost_usd
    extra["total_cost_usd_source"] = "gateway"
    total = round(sum(c.cost_usd for c in calls), 10)
    return trajectory.model_copy(
        update={"final_metrics": fm.model_copy(update={"total_cost_usd": total, "extra": extra})}
    )


def tool_names_from_gateway(trajectory: Trajectory, gateway_log: Path) -> Trajectory:
    """Each agent tool call named as the model called it, when the calls pair up with the gateway's record."""
    names = [n for c in _model_calls(gateway_log) for n in c.tool_names]
    slots = [
        (i, j) for i, s in enumerate(trajectory.steps) if s.source == "agent" for j in range(len(s.tool_calls or ()))
    ]
    if not names or len(names) != len(slots):
        return trajectory
    steps = list(trajectory.steps)
    for (i, j), name in zip(slots, names, strict=True):
        calls = list(steps[i].tool_calls or ())
        call = calls[j]
        if call.function_name != name:
            calls[j] = call.model_copy(
                update={"function_name": name, "extra": {**(call.extra or {}), "logged_name": call.function_name}}
            )
            steps[i] = steps[i].model_copy(update={"tool_calls": calls})
    return trajectory.model_copy(update={"steps": steps})
