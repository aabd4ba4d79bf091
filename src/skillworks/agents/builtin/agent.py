"""`builtin`: skillworks' own terminal agent. A ReAct loop on the host whose tools run in the trial's
sandbox and whose model calls go through the trial's gateway channel (OpenAI Chat Completions wire), so
it needs nothing installed in the sandbox. It writes ATIF directly."""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from typing import Any

import httpx

from skillworks.agents.base import AgentContext, AgentOutcome
from skillworks.agents.builtin.mcp_tools import open_mcp_tools
from skillworks.agents.builtin.prompt import system_prompt
from skillworks.agents.builtin.tools import ToolBox
from skillworks.results import SkillUse, TrialError, Usage
from skillworks.trajectory.builder import TrajectoryBuilder
from skillworks.trajectory.validate import write_trajectory

VERSION = "1.0"
SKILLS_SUBDIR = ".agents/skills"


class BuiltinAgent:
    name = "builtin"
    needs_model = True

    def __init__(
        self,
        model: str | None = None,
        max_turns: int = 40,
        max_tokens: int = 4096,
        temperature: float | None = None,
        reasoning_effort: str | None = None,
    ) -> None:
        self.model = model
        self.max_turns = int(max_turns)
        self.max_tokens = int(max_tokens)
        self.temperature = None if temperature is None else float(temperature)
        self.reasoning_effort = reasoning_effort

    @property
    def version(self) -> str:
        return VERSION

    def skills_dir(self, home: str, workdir: str) -> str | None:
        return f"{home}/{SKILLS_SUBDIR}"

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model or "default",
            "messages": messages,
            "tools": tools,
            "max_tokens": self.max_tokens,
            "seed": seed,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.reasoning_effort:
            body["reasoning_effort"] = self.reasoning_effort
        return body

    async def run(self, ctx: AgentContext) -> AgentOutcome:
        if ctx.gateway_socket is None:
            return AgentOutcome(
                error=TrialError(category="config", message="builtin agent has no gateway", phase="agent")
            )
        async with AsyncExitStack() as stack:
            # runtimes from the condition's skill source (compiled skills over MCP) become tools
            try:
                mcp = await open_mcp_tools(ctx.tools, ctx.sandbox, stack, ctx.agent_log_dir)
            except Exception as exc:
                message = f"could not start the skill runtime: {exc}"
                return AgentOutcome(error=TrialError(category="skill_runtime_error", message=message, phase="agent"))
            return await self._run(ctx, ToolBox(ctx.sandbox, ctx.skills, ctx.skills_dir, mcp))

    async def _run(self, ctx: AgentContext, tools: ToolBox) -> AgentOutcome:
        system = system_prompt(ctx.sandbox.workdir, ctx.skills, ctx.skills_dir, tools.mcp is not None)
        builder = TrajectoryBuilder(
            self.name, VERSION, self.model, tools.definitions, agent_extra={"condition": ctx.condition}
        )
        builder.add_system(system)
        builder.add_user(ctx.task.instruction)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": ctx.task.instruction},
        ]
        deadline = time.monotonic() + ctx.timeout_sec
        max_turns_hit = False
        usage = Usage(source="harness")
        outcome = AgentOutcome(exit_code=0)
        transport = httpx.AsyncHTTPTransport(uds=str(ctx.gateway_socket))
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            for turn in range(self.max_turns):
                time_left = deadline - time.monotonic()
                if time_left <= 0:
                    outcome.timed_out = True
                    break
                try:
                    response = await client.post(
                        "/v1/chat/completions",
                        json=self._request(messages, tools.definitions, ctx.seed + turn),
                        timeout=time_left,
                    )
                except httpx.TimeoutException:
                    outcome.timed_out = True
                    break
                except httpx.HTTPError as exc:
                    outcome.error = TrialError(category="gateway_unreachable", message=str(exc), phase="agent")
                    break
                if response.status_code >= 400:
                    outcome.error = _gateway_error(response)
                    break
                data = response.json()
                message = data["choices"][0]["message"]
                call_usage = data.get("usage") or {}
                usage.input_tokens += int(call_usage.get("prompt_tokens") or 0)
                usage.output_tokens += int(call_usage.get("completion_tokens") or 0)
                usage.cached_tokens += int((call_usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
                usage.calls += 1
                calls = message.get("tool_calls") or []
                builder.add_agent(
                    message.get("content") or "",
                    tool_calls=[
                        {
                            "tool_call_id": c["id"],
                            "function_name": c["function"]["name"],
                            "arguments": _args_or_raw(c["function"].get("arguments")),
                        }
                        for c in calls
                    ],
                    reasoning=message.get("reasoning_content"),
                    metrics={
                        "prompt_tokens": int(call_usage.get("prompt_tokens") or 0),
                        "completion_tokens": int(call_usage.get("completion_tokens") or 0),
                    },
                    model_name=data.get("model"),
                )
                messages.append(
                    {
                        "role": "assistant",
                        "content": message.get("content") or "",
                        **({"tool_calls": calls} if calls else {}),
                    }
                )
                if not calls:
                    outcome.final_message = message.get("content") or ""
                    break
                for call in calls:
                    _, observation = await tools.call(
                        call["function"]["name"], call["function"].get("arguments") or "{}", deadline - time.monotonic()
                    )
                    failed = {"is_error": True} if observation.startswith("error: ") else None
                    builder.add_observation([{"source_call_id": call["id"], "content": observation, "extra": failed}])
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": observation})
            else:  # out of turns: like running out of time, the agent's budget ended the attempt
                outcome.timed_out = max_turns_hit = True
                (ctx.agent_log_dir / "builtin.log").write_text(f"stopped after max_turns={self.max_turns}\n")
        stop = "max_turns" if max_turns_hit else _stop_reason(outcome)
        trajectory = builder.finish(extra={"stop": stop})
        outcome.trajectory_path = write_trajectory(trajectory, ctx.trial_dir / "trajectory.json")
        outcome.usage = usage
        outcome.skill_use = SkillUse(listed=[s.name for s in ctx.skills])
        return outcome


def _args_or_raw(raw: Any) -> dict[str, Any]:
    import json

    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def _gateway_error(response: httpx.Response) -> TrialError:
    try:
        error = response.json().get("error") or {}
    except ValueError:
        error = {}
    category = str(error.get("type") or f"http_{response.status_code}")
    message = str(error.get("message") or response.text[:300])
    return TrialError(category=category, message=message, phase="agent")


def _stop_reason(outcome: AgentOutcome) -> str:
    if outcome.error is not None:
        return f"error: {outcome.error.category}"
    if outcome.timed_out:
        return "timeout"
    return "final_answer"
