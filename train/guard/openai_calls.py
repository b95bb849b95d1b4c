"""A chat completion's tool calls read as the OpenAI SDK reads them (issue 27).

The SDK hands the harness a call's `custom.input` when the call is `custom`, whatever
`function` field rides along, and merges a JSON object's repeated key its own way:
so a call the guard reads as `function` must be one the SDK reads as `function`, and
arguments with a repeated key are refused. Used by `openai_api` for whole completions
and streams alike.
"""

from __future__ import annotations

from typing import Any

from train.guard.calls import parse_arguments
from train.guard.checker import Decision
from train.guard.facts import ToolCall
from train.guard.refusal import Unreadable, object_list
from train.guard.wire import has_duplicate_keys


def check_call_type(call: dict[str, Any]) -> None:
    """A call the guard reads as `function` must be one the SDK reads as `function`: a
    `custom` call (its `custom.input` is what the SDK hands the harness) is refused,
    decoy `function` field or not, and so is any other type."""
    if "custom" in call or call.get("type") not in (None, "function"):
        raise Unreadable(
            "guard.unknown-call-type", "a tool call of a type the guard does not check"
        )


def check_arguments(text: Any) -> None:
    if isinstance(text, str) and has_duplicate_keys(text):
        raise Unreadable("guard.duplicate-keys", "a tool call's arguments repeat a key")


def tool_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    check_arguments(function.get("arguments"))
    text, args = parse_arguments(function.get("arguments", ""))
    return ToolCall(str(raw.get("id") or ""), str(function.get("name") or ""), text, args, "openai")


def notices(decisions: list[Decision]) -> str:
    return "\n".join(d.notice() for d in decisions if not d.allowed)


def legacy_call(raw: dict[str, Any]) -> ToolCall:
    """The legacy `function_call` field, checked like any tool call."""
    check_arguments(raw.get("arguments"))
    text, args = parse_arguments(raw.get("arguments", ""))
    return ToolCall("", str(raw.get("name") or ""), text, args, "openai")


def calls_of(message: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    raw_calls = object_list(
        message.get("tool_calls"), "message.tool_calls is not a list of calls", optional=True
    )
    for call in raw_calls:
        check_call_type(call)
        function = call.get("function")
        if function is not None and not isinstance(function, dict):
            raise Unreadable("guard.upstream-unreadable", "a tool call's function is not an object")
    legacy = message.get("function_call")
    if legacy is not None and not isinstance(legacy, dict):
        raise Unreadable("guard.upstream-unreadable", "message.function_call is not an object")
    return raw_calls, legacy
