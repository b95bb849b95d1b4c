"""OpenAI Responses API output items: which ones run code in the client, and the
`ToolCall` each of those is judged as (issue 27, point 3).

The Responses API puts a response's calls in `output` items, each with its own type.
The client executes three kinds, and they are checked by the same rules as a chat
completion's calls (the one call model, checker and shell analyser):

- `function_call`: `name` and `arguments` (JSON text), as a chat `function` call;
- `custom_tool_call`: `name` and free-form `input` (codex's `apply_patch`), judged
  as `{"input": ...}` (a shell-family tool's input is also its `command`);
- `local_shell_call` / `shell_call`: `action.command` (an argv list) or
  `action.commands` (shell lines), judged as the `local_shell` / `shell` tool.

Items the client only shows (`message`, `reasoning`) pass. Items that run code the
guard does not judge are refused by design (docs/guard.md): the ones the client runs
but the guard has no reading for (`computer_call`, `apply_patch_call`), and the
hosted tools the upstream runs itself (`web_search_call`, `code_interpreter_call`,
`mcp_call`, ...), which ran outside the sandbox. Any other type is refused too.
"""

from __future__ import annotations

from typing import Any

import orjson

from train.guard import wire
from train.guard.calls import family, parse_arguments
from train.guard.checker import Decision
from train.guard.facts import ToolCall
from train.guard.refusal import Unreadable
from train.guard.wire import has_duplicate_keys

CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "shell_call"})
SHOWN_ITEMS = frozenset({"message", "reasoning"})
UNCHECKED_ITEMS = frozenset(
    {
        "computer_call",
        "apply_patch_call",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
    }
)
"""Refused by design (`guard.unchecked-item`): see the module docstring."""
SHELL_NAMES = {"local_shell_call": "local_shell", "shell_call": "shell"}
TOOL_NAMES = {"local_shell": "local_shell", "shell": "shell"}
"""Request tool types the client runs under a fixed name (no `name` field)."""


def kind(item: Any) -> str:
    """`call`, `shown`, or raises Unreadable: the item's type decides, nothing else."""
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        raise Unreadable("guard.upstream-unreadable", "an output item is not a typed object")
    kind = item["type"]
    if kind in CALL_ITEMS:
        return "call"
    if kind in SHOWN_ITEMS:
        return "shown"
    if kind in UNCHECKED_ITEMS:
        raise Unreadable("guard.unchecked-item", f"a `{kind}` item: the guard does not judge it")
    raise Unreadable("guard.unknown-item-type", f"an output item of type {kind[:40]!r}")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise Unreadable("guard.upstream-unreadable", f"an item's {what} is not a string")
    return value


def tool_call(item: dict[str, Any]) -> ToolCall:
    """The call as the client would run it; raises Unreadable on a malformed one."""
    kind_ = item["type"]
    call_id = str(item.get("call_id") or item.get("id") or "")
    if kind_ == "function_call":
        arguments = _text(item.get("arguments", ""), "arguments")
        if has_duplicate_keys(arguments):
            raise Unreadable("guard.duplicate-keys", "a call's arguments repeat a key")
        name = _text(item.get("name", ""), "name")
        return ToolCall(call_id, name, *parse_arguments(arguments), "openai")
    if kind_ == "custom_tool_call":
        name = _text(item.get("name", ""), "name")
        text = _text(item.get("input", ""), "input")
        args = {"input": text, **({"command": text} if family(name) == "shell" else {})}
        return ToolCall(call_id, name, wire.dumps(args), args, "openai")
    action = item.get("action")
    if not isinstance(action, dict):
        raise Unreadable("guard.upstream-unreadable", "a shell call without an action")
    if kind_ == "local_shell_call":
        command = action.get("command")
        if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
            raise Unreadable("guard.upstream-unreadable", "a local shell command is not argv")
        if action.get("env") or action.get("user"):
            # the client sets them for the command (`BASH_ENV`, `LD_PRELOAD`, `PATH`,
            # another user): no rule reads them, so such a call is not run
            raise Unreadable("guard.unchecked-item", "a local shell call sets env or user")
    else:
        lines = action.get("commands")
        if not isinstance(lines, list) or not all(isinstance(a, str) for a in lines):
            raise Unreadable("guard.upstream-unreadable", "shell commands are not strings")
        command = "\n".join(lines)
    args = {"command": command}
    workdir = action.get("working_directory")
    if isinstance(workdir, str) and workdir:
        args["workdir"] = workdir
    return ToolCall(call_id, SHELL_NAMES[kind_], wire.dumps(args), args, "openai")


def notice_item(decision: Decision, index: int) -> dict[str, Any]:
    """What replaces a blocked call: an assistant message with the notice."""
    return {
        "id": f"msg_guard_{index}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": decision.notice(), "annotations": []}],
    }


def judged_key(item: dict[str, Any]) -> str:
    """A call item's identity for matching a later copy of it (a lifecycle event's
    `response.output`): the whole item, canonically serialised, but its `status`."""
    body = {k: v for k, v in item.items() if k != "status"}
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode()
