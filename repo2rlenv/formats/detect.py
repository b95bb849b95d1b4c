"""Which reader a record needs, from its shape alone (never from a file name).

A dict is a whole document (ATIF, opencode export, Hermes session log, dataset row); a
list is the parsed lines of a session file. Only the first lines are inspected, so
detection costs the same for a 10-line and a 100,000-line session.
"""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats.claude_export import is_claude_export
from repo2rlenv.formats.codex_export import is_codex_export
from repo2rlenv.formats.mini_swe_agent import is_mini_swe_agent
from repo2rlenv.formats.openhands import is_openhands
from repo2rlenv.formats.swe_agent import is_swe_agent
from repo2rlenv.formats.text import as_dict, as_list

_SCAN = 200
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_LEGACY = frozenset(
    {
        "function_call",
        "function_call_output",
        "reasoning",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
    }
)
_CLAUDE_ONLY = frozenset(
    {
        "file-history-snapshot",
        "queue-operation",
        "permission-mode",
        "last-prompt",
        "ai-title",
        "summary",
        "attachment",
        "progress",
    }
)
_PI_ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    }
)
_CHAT_ROLES = frozenset({"system", "user", "assistant", "tool", "function", "developer"})
_TOOL_EVENTS = frozenset({"tool_use", "tool_result", "tool_call", "tool_output"})
"""Line types of streamed logs (Gemini CLI's stream-json, Hermes' raw_stream) that carry
tool calls outside any chat message. A chat file holding them is another harness's
log: reading only its `message` lines would drop every tool call without a word."""
_HERMES_KEYS = frozenset(
    {"session_id", "platform", "system_prompt", "session_start", "message_count", "base_url"}
)


def detect_format(record: Any) -> str | None:
    """The name of the reader the record needs (a key of `repo2rlenv.formats.READERS`),
    or None when no reader recognises it."""
    if isinstance(record, dict):
        return _document(record)
    if isinstance(record, list):
        return _lines(record)
    return None


def _name(value: Any) -> str:
    """A type/role tag, or "" for anything that is not a string (even unhashable)."""
    return value if isinstance(value, str) else ""


def _has_role(items: list[Any]) -> bool:
    return any(isinstance(i, dict) and isinstance(i.get("role"), str) for i in items[:_SCAN])


def _document(record: dict[str, Any]) -> str | None:
    steps = record.get("steps")
    version = record.get("schema_version")
    if isinstance(steps, list) and (
        (isinstance(version, str) and version.startswith("ATIF"))
        or any(isinstance(s, dict) and "step_id" in s and "source" in s for s in steps[:_SCAN])
    ):
        return "atif"
    messages = record.get("messages")
    if record.get("format") == "openai-chat" and isinstance(messages, list):
        return "openai-messages"
    if _hermes_request_dump(record):
        return "hermes"
    if is_codex_export(record):  # same blocks as a Claude export, Codex's tools
        return "codex"
    if is_claude_export(record, _SCAN):
        return "claude-code"
    if (
        isinstance(record.get("info"), dict)
        and isinstance(messages, list)
        and all(isinstance(m, dict) and "parts" in m for m in messages[:_SCAN])
    ):
        return "opencode"
    swe = _swe_run(record)
    if swe is not None:
        return swe
    if (
        isinstance(messages, list)
        and (_HERMES_KEYS & record.keys())
        and ("instance_id" not in record)
    ):
        return "hermes"
    if isinstance(messages, list) and _has_role(messages):
        return "openai-messages"
    trajectory = record.get("trajectory")
    if isinstance(trajectory, list) and _has_role(trajectory):
        return "openai-messages"
    return None


def _hermes_request_dump(record: dict[str, Any]) -> bool:
    """Hermes' `request_dump_*.json`: the API request it was about to send, kept when the
    call failed; the conversation is the request body's `messages`."""
    body = as_dict(as_dict(record.get("request")).get("body"))
    return "session_id" in record and isinstance(body.get("messages"), list)


def _swe_run(record: Any) -> str | None:
    """SWE-bench-style harnesses, checked before the generic chat shapes: a
    mini-swe-agent run is also a list of chat messages, but its user messages after
    the first are command outputs, not requests."""
    if is_mini_swe_agent(record):
        return "mini-swe-agent"
    if is_swe_agent(record):
        return "swe-agent"
    if is_openhands(record):
        return "openhands"
    return None


def _lines(items: list[Any]) -> str | None:
    swe = _swe_run(items)
    if swe is not None:
        return swe
    chat = False
    hermes = False
    events = False
    for item in items[:_SCAN]:
        if not isinstance(item, dict):
            continue
        kind, role = _name(item.get("type")), _name(item.get("role"))
        message = item.get("message")
        if kind == "session" and ("cwd" in item or "version" in item or "id" in item):
            return "pi"
        if kind == "message" and _name(as_dict(message).get("role")) in _PI_ROLES:
            return "pi"
        if kind in _CODEX_TYPES and "payload" in item:
            return "codex"
        if kind in _CODEX_LEGACY or (kind == "message" and isinstance(item.get("content"), list)):
            return "codex"
        if kind in _CLAUDE_ONLY or (
            kind in ("user", "assistant", "system") and ("uuid" in item or "sessionId" in item)
        ):
            return "claude-code"
        if role == "session_meta":
            return "hermes"
        events = events or (kind in _TOOL_EVENTS and not role)
        if role in _CHAT_ROLES:
            chat = True
            hermes = (
                hermes
                or "finish_reason" in item
                or "codex_reasoning_items" in item
                or any("response_item_id" in as_dict(c) for c in as_list(item.get("tool_calls")))
            )
    if chat and not events:
        return "hermes" if hermes else "openai-messages"
    return None
