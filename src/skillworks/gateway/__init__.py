"""skillworks.gateway: a loopback model gateway (OpenAI Chat, OpenAI Responses and Anthropic
Messages wire formats) over LiteLLM or the scripted provider; records every call per trial."""

from skillworks.gateway.internal import GatewayError
from skillworks.gateway.limits import CallLimits, Clamp
from skillworks.gateway.records import GatewayCall, read_calls, trial_error_from_calls, usage_totals
from skillworks.gateway.retry import RetryPolicy
from skillworks.gateway.script_format import Script, ScriptTurn, load_script
from skillworks.gateway.server import Gateway, TrialChannel

__all__ = [
    "CallLimits",
    "Clamp",
    "Gateway",
    "GatewayCall",
    "GatewayError",
    "RetryPolicy",
    "Script",
    "ScriptTurn",
    "TrialChannel",
    "load_script",
    "read_calls",
    "trial_error_from_calls",
    "usage_totals",
]
