"""Helpers every reader shares: tolerant field access, text normalisation, JSON-string
arguments, timestamps, line-number gutters and exit-code trailers.

Records come from strangers, so nothing here trusts a type: each helper returns a safe
default instead of raising, and readers stay free of isinstance noise.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from repo2rlenv.formats.jsondecode import NOT_JSON, decode

_MAX_DEPTH = 32


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def first_str(mapping: dict[str, Any], *keys: str) -> str | None:
    """The first key whose value is a string (harnesses spell the same argument
    `path`, `file_path`, `filePath`...)."""
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str):
            return value
    return None


def as_int(value: Any) -> int | None:
    """An int from an int or a decimal string; bools and everything else give None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,9}\s*", value):
        return int(value)
    return None


def text_of(value: Any, _depth: int = 0) -> str:
    """Plain text of a message or content field, whatever the harness put there: a
    string, content parts ({type: text|input_text|output_text, text}), chat messages
    ({role, content}), or nested lists of those. Images and other non-text parts are
    dropped; parts are joined with newlines."""
    if _depth > _MAX_DEPTH or value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        parts = (text_of(item, _depth + 1) for item in value)
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"]
        if "content" in value:
            return text_of(value["content"], _depth + 1)
        if isinstance(value.get("output"), str):
            return value["output"]
    return ""


def chat_message_text(messages: list[Any]) -> str:
    """Text of a step whose message is a list of chat messages (an exporter that re-sends
    the whole prompt): only the trailing user messages are new, the rest is history."""
    tail: list[str] = []
    for item in reversed(messages):
        if not isinstance(item, dict) or item.get("role") not in ("user", "human"):
            break
        tail.append(text_of(item.get("content")))
    return "\n".join(reversed([t for t in tail if t]))


def parse_args(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: OpenAI-style JSON strings are decoded; anything
    that is not an object is kept under a single key so nothing is lost."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    if isinstance(value, str):
        decoded = loads_or_none(value)
        if isinstance(decoded, dict):
            return decoded
        return {"input": value}
    return {"value": value}


def loads_or_none(text: str) -> Any:
    """json.loads that answers None for anything unparseable (including nesting deep
    enough to exhaust the recursion limit)."""
    value = decode(text)
    return None if value is NOT_JSON else value


def iso_time(value: Any) -> str | None:
    """An ISO 8601 string ATIF accepts, from an ISO string or epoch seconds/milliseconds."""
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC).isoformat().replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):
            return None
    return None


def strip_gutter(text: str, pattern: re.Pattern[str]) -> tuple[str, int] | None:
    """Remove a line-number gutter. `pattern` must match at the start of every line and
    capture the number in group 1. Returns (text, first line number), or None when a
    line lacks the gutter or numbers are not consecutive, so the caller never mistakes
    half-decorated text for file content."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the newline that ends the last shown line
    out: list[str] = []
    first: int | None = None
    expected: int | None = None
    for line in lines:
        match = pattern.match(line)
        if match is None:
            return None
        number = int(match.group(1))
        if expected is not None and number != expected:
            return None
        first = number if first is None else first
        expected = number + 1
        out.append(line[match.end() :])
    if first is None:
        return None
    return "\n".join(out), first


_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL)


def remove_reminders(text: str) -> tuple[str, bool]:
    """Drop Claude Code's `<system-reminder>` banners; report whether any was present."""
    cleaned, count = _REMINDER.subn("\n", text)
    return (cleaned.strip("\n") if count else text), count > 0


def cap(text: str, limit: int = 200) -> str:
    """Short excerpt for error messages (never whole records in a reason detail)."""
    flat = text.replace("\n", " ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
