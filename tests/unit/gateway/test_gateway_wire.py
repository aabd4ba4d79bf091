"""Wire-format conversion to and from the internal request/response, without HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillworks.gateway import wire_anthropic, wire_openai_chat, wire_openai_responses
from skillworks.gateway.internal import GatewayError, ModelResponse, TokenUsage, ToolCall


def test_anthropic_request() -> None:
    req = wire_anthropic.parse_request(
        {
            "model": "claude-x",
            "max_tokens": 64,
            "system": [{"type": "text", "text": "sys A", "cache_control": {"type": "ephemeral"}}],
            "thinking": {"type": "enabled", "budget_tokens": 20000},
            "tool_choice": {"type": "any"},
            "tools": [
                {"name": "Bash", "input_schema": {"type": "object"}},
                {"type": "web_search_20250305", "name": "web_search"},  # server tool: not a function
            ],
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "s"},
                        {"type": "text", "text": "ok"},
                        {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "a"}]},
                        {"type": "tool_result", "tool_use_id": "tu2", "content": "boom", "is_error": True},
                        {"type": "text", "text": "now continue"},
                    ],
                },
            ],
        }
    )
    assert [(m.role, m.content) for m in req.messages] == [
        ("system", "sys A"),
        ("user", "hi"),
        ("assistant", "ok"),
        ("tool", "a"),
        ("tool", "[tool error] boom"),
        ("user", "now continue"),
    ]
    assert req.messages[2].tool_calls[0].arguments_dict() == {"command": "ls"}
    assert req.tool_names() == ["Bash"] and req.tool_choice == "required"
    assert (req.max_tokens, req.reasoning_effort, req.client_model) == (64, "high", "claude-x")


def test_anthropic_request_as_claude_code_sends_it() -> None:
    """Claude Code 2.1.x: mid-conversation system messages, deferred tools, output_config.effort."""
    req = wire_anthropic.parse_request(
        {
            "model": "claude-opus-5-5",
            "max_tokens": 128000,
            "thinking": {"type": "adaptive", "display": "updates"},
            "output_config": {"effort": "medium"},
            "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
            "tools": [
                {"name": "Bash", "input_schema": {"type": "object"}},
                {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": True},
            ],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}]},
                {"role": "system", "content": [{"type": "text", "text": "# Environment"}]},
                {"role": "user", "content": "create out.txt"},
            ],
        }
    )
    assert [m.role for m in req.messages] == ["user", "system", "user"]
    assert req.tool_names() == ["Bash"] and req.reasoning_effort == "medium"


def test_anthropic_stream_events() -> None:
    resp = ModelResponse(
        text="hi",
        tool_calls=[ToolCall("c1", "Bash", '{"command": "ls"}')],
        finish_reason="tool_calls",
        usage=TokenUsage(100, 7, 60),
    )
    req = wire_anthropic.parse_request({"messages": [{"role": "user", "content": "x"}]})
    events = wire_anthropic.render_stream(resp, req, "claude-x", {})
    kinds = [e.event for e in events]
    assert kinds == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start: Any = events[0].data
    assert (
        start["message"]["usage"]["input_tokens"] == 40 and start["message"]["usage"]["cache_read_input_tokens"] == 60
    )
    delta: Any = events[6].data
    assert delta["delta"] == {"type": "input_json_delta", "partial_json": '{"command": "ls"}'}
    final: Any = events[8].data
    assert final["delta"]["stop_reason"] == "tool_use" and final["usage"]["output_tokens"] == 7
    assert events[0].encode().startswith(b"event: message_start\ndata: {")


def test_openai_chat_request() -> None:
    req = wire_openai_chat.parse_request(
        {
            "model": "gpt-x",
            "max_completion_tokens": 99,
            "reasoning_effort": "low",
            "tool_choice": {"type": "function", "function": {"name": "bash"}},
            "tools": [{"type": "function", "function": {"name": "bash"}}],
            "messages": [
                {"role": "developer", "content": [{"type": "text", "text": "dev"}]},
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "bash", "arguments": "{}"}}],
                },
                {"role": "tool", "tool_call_id": "c", "content": "out"},
            ],
        }
    )
    assert [m.role for m in req.messages] == ["system", "user", "assistant", "tool"]
    assert req.messages[3].tool_call_id == "c" and req.tools[0].parameters["type"] == "object"
    assert (req.max_tokens, req.reasoning_effort, req.tool_choice) == (99, "low", "bash")


@pytest.mark.parametrize(
    ("module", "body"),
    [
        (wire_openai_chat, {"messages": []}),
        (wire_openai_chat, {"messages": [{"role": "wizard", "content": "x"}]}),
        (wire_anthropic, {"messages": [{"role": "tool", "content": "x"}]}),
        (wire_openai_responses, {"input": 3}),
    ],
)
def test_bad_requests_are_bad_request(module: Any, body: dict[str, Any]) -> None:
    with pytest.raises(GatewayError) as info:
        module.parse_request(body)
    assert info.value.error_class == "bad_request" and info.value.status == 400


def test_responses_request_and_stream() -> None:
    body: dict[str, Any] = {
        "model": "codex",
        "instructions": "be codex",
        "reasoning": {"effort": "medium", "summary": "auto"},
        "max_output_tokens": 10,
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}}, {"type": "web_search"}],
        "input": [
            {"role": "user", "content": "plain role item"},
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"command": ["ls"]}'},
            {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
            {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "y"}]},
        ],
    }
    req = wire_openai_responses.parse_request(body)
    assert [m.role for m in req.messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [c.id for c in req.messages[2].tool_calls] == ["c1", "c2"]  # parallel calls share one turn
    assert req.messages[4].content == "y" and req.tool_names() == ["shell"] and req.reasoning_effort == "medium"
    resp = ModelResponse(tool_calls=[ToolCall("c3", "shell", '{"command": ["pwd"]}')], usage=TokenUsage(10, 2, 0))
    events = wire_openai_responses.render_stream(resp, req, "codex", body)
    datas: list[Any] = [e.data for e in events]
    assert [d["sequence_number"] for d in datas] == list(range(len(events)))
    assert [e.event for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    done = datas[-1]["response"]
    assert done["usage"]["total_tokens"] == 12 and done["output"][0]["call_id"] == "c3"
    assert json.loads(done["output"][0]["arguments"]) == {"command": ["pwd"]}


def test_chat_stream_has_usage_only_when_asked() -> None:
    req = wire_openai_chat.parse_request({"messages": [{"role": "user", "content": "x"}]})
    resp = ModelResponse(text="hello", usage=TokenUsage(3, 1, 0))
    plain = wire_openai_chat.render_stream(resp, req, "m", {})
    with_usage = wire_openai_chat.render_stream(resp, req, "m", {"stream_options": {"include_usage": True}})
    assert plain[-1].data == "[DONE]" and len(with_usage) == len(plain) + 1
    usage: Any = with_usage[-2].data
    assert usage["usage"]["prompt_tokens"] == 3 and usage["choices"] == []


def test_reasoning_round_trips_through_every_wire_format() -> None:
    """Issue 17: what the gateway renders as reasoning comes back, parsed from the client's next request,
    with its signature (Anthropic, Gemini) or encrypted content (Responses) intact."""
    from skillworks.gateway import wire_gemini
    from skillworks.gateway.internal import ModelRequest, ReasoningItem

    signed = ReasoningItem(text="think", signature="sig-1")
    resp = ModelResponse(
        tool_calls=[ToolCall("c1", "shell", "{}")], finish_reason="tool_calls", reasoning_items=[signed]
    )
    req = ModelRequest(messages=[])
    # Anthropic: thinking block first, sent back as the assistant's content
    content = wire_anthropic.render_response(resp, req, "m")["content"]
    back = wire_anthropic.parse_request({"messages": [{"role": "assistant", "content": content}]})
    assert back.messages[0].reasoning == [ReasoningItem(text="think", signature="sig-1")]
    # Responses: a reasoning item; another provider's signature rides in encrypted_content
    output = wire_openai_responses.render_response(resp, req, "m")["output"]
    back = wire_openai_responses.parse_request({"input": output})
    [item] = back.messages[0].reasoning
    assert (item.text, item.signature) == ("think", "sig-1") and back.messages[0].tool_calls[0].id == "c1"
    # Chat Completions: reasoning_content + thinking_blocks on the assistant message
    message = wire_openai_chat.render_response(resp, req, "m")["choices"][0]["message"]
    back = wire_openai_chat.parse_request({"messages": [message]})
    assert back.messages[0].reasoning == [ReasoningItem(text="think", signature="sig-1")]
    # Gemini: a thought part, and the signature on the first functionCall part, where Gemini puts it
    parts = wire_gemini.render_response(resp, req, "m")["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "think", "thought": True}
    assert next(p for p in parts if "functionCall" in p)["thoughtSignature"] == "sig-1"
    back = wire_gemini.parse_request({"contents": [{"role": "model", "parts": parts}]})
    assert back.messages[0].reasoning == [ReasoningItem(text="think", signature="sig-1")]
    assert back.messages[0].content == ""  # a thought is not the answer's text
    # a client that drops the thought summaries (Gemini CLI) still sends the signature back
    kept = [p for p in parts if not p.get("thought")]
    back = wire_gemini.parse_request({"contents": [{"role": "model", "parts": kept}]})
    assert back.messages[0].reasoning == [ReasoningItem(text="", signature="sig-1")]


def test_responses_namespace_tools_are_flattened_and_called_back_by_namespace() -> None:
    """Codex sends each MCP server's tools as a `namespace` group; a call goes back with namespace + bare name."""
    tool = {"type": "function", "name": "run_x", "description": "d", "parameters": {"type": "object"}}
    body: dict[str, Any] = {
        "tools": [{"type": "namespace", "name": "mcp__skillworks", "description": "s", "tools": [tool]}],
        "input": [
            {"role": "user", "content": "go"},
            {
                "type": "function_call",
                "call_id": "c1",
                "namespace": "mcp__skillworks",
                "name": "run_x",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
    }
    req = wire_openai_responses.parse_request(body)
    assert req.tool_names() == ["mcp__skillworks__run_x"]
    assert req.messages[1].tool_calls[0].name == "mcp__skillworks__run_x"
    resp = ModelResponse(tool_calls=[ToolCall("c2", "mcp__skillworks__run_x", "{}")], usage=TokenUsage(1, 1, 0))
    [item] = wire_openai_responses.render_response(resp, req, "codex", body)["output"]
    assert (item["type"], item["namespace"], item["name"]) == ("function_call", "mcp__skillworks", "run_x")
