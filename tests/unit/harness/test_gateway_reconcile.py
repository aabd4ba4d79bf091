"""The gateway's record wins in a harness trajectory: Claude Code's cost estimate is kept apart, Codex's
calls take the tool names the model called (gateway.jsonl written here as the gateway writes it)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from skillworks.agents.harness.gateway_reconcile import cost_from_gateway, tool_names_from_gateway
from skillworks.gateway.records import GatewayCall, append_call
from skillworks.trajectory import TrajectoryBuilder, convert_claude_code, convert_codex, validate_trajectory

LOGS = Path(__file__).parents[2] / "fixtures" / "native_logs"


def _log(tmp_path: Path, *calls: tuple[float, list[str]], failed: int = 0) -> Path:
    path = tmp_path / "gateway.jsonl"
    for cost, names in calls:
        append_call(
            path,
            GatewayCall(
                ts=datetime.now(UTC),
                trial_id="t",
                route="/v1/responses",
                wire="openai_responses",
                model="gpt-5",
                provider="openai",
                cost_usd=cost,
                cost_source="provider",
                tool_calls=len(names),
                tool_names=names,
            ),
        )
    for _ in range(failed):
        append_call(
            path,
            GatewayCall(
                ts=datetime.now(UTC),
                trial_id="t",
                route="/v1/responses",
                wire="openai_responses",
                model="gpt-5",
                provider="openai",
                status="error",
                tool_names=["ignored"],
            ),
        )
    return path


def test_claude_code_cost_is_the_gateways_and_the_cli_estimate_is_kept_apart(tmp_path: Path) -> None:
    traj = convert_claude_code(LOGS / "claude_code.stream.jsonl", instruction="x").trajectory
    assert traj.final_metrics is not None and traj.final_metrics.total_cost_usd is not None
    cli = traj.final_metrics.total_cost_usd
    out = cost_from_gateway(traj, _log(tmp_path, (0.0125, []), (0.0031, ["Bash"]), failed=1))
    fm = out.final_metrics
    assert fm is not None and fm.total_cost_usd == 0.0156
    assert fm.extra is not None and fm.extra["cli_reported_total_cost_usd"] == cli
    assert fm.extra["total_cost_usd_source"] == "gateway"
    validate_trajectory(out.to_json_dict())
    assert cost_from_gateway(traj, tmp_path / "none.jsonl") == traj  # no record: unchanged


def test_codex_calls_take_the_tool_names_the_model_called(tmp_path: Path) -> None:
    traj = convert_codex(LOGS / "codex.exec.jsonl", instruction="x").trajectory
    names = [c.function_name for s in traj.steps for c in s.tool_calls or ()]
    assert names == ["exec_command", "exec_command", "apply_patch"]
    out = tool_names_from_gateway(traj, _log(tmp_path, (0.0, ["shell"]), (0.0, ["shell", "apply_patch"]), (0.0, [])))
    calls = [c for s in out.steps for c in s.tool_calls or ()]
    assert [c.function_name for c in calls] == ["shell", "shell", "apply_patch"]
    assert calls[0].extra == {"codex_item_type": "command_execution", "logged_name": "exec_command"}
    assert calls[2].extra == {"codex_item_type": "file_change"}  # same name: nothing to note


def test_tool_names_are_left_alone_when_the_calls_do_not_pair_up(tmp_path: Path) -> None:
    b = TrajectoryBuilder("codex", "1", "m")
    b.add_user("go")
    b.add_agent("", tool_calls=[{"tool_call_id": "a", "function_name": "exec_command", "arguments": {}}])
    traj = b.finish()
    assert tool_names_from_gateway(traj, _log(tmp_path, (0.0, ["shell", "shell"]))) == traj
