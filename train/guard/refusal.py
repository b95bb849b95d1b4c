"""A response the guard cannot understand is refused, never forwarded unchecked.

The rewriters raise `Unreadable` on any shape they cannot vouch for (not JSON, a
choice or block index that is not an integer, an unknown Anthropic event type, a tool
call where none may be, ...). Before the status line has gone the client gets a 502
with the code; inside a stream it gets an error event (`error_frame`), in the shape its
SDK raises on, and the connection is closed: the calls held so far are dropped.
"""

from __future__ import annotations

from typing import Any

from train.guard import wire
from train.guard.sse import Event, frame


class Unreadable(ValueError):
    """`code` is a stable reason (`guard.upstream-unreadable`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def is_int(value: Any) -> bool:
    """An index the guard accepts: an integer, never a float (`0.0`) nor a bool."""
    return type(value) is int


def object_list(value: Any, message: str, *, optional: bool = False) -> list[dict[str, Any]]:
    """`value` when it is a list of JSON objects (choices, tool calls, content blocks);
    `optional`: a missing list (None) is an empty one. Anything else is Unreadable
    with `message`: one item of another type could hide a call from the check."""
    if value is None and optional:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise Unreadable("guard.upstream-unreadable", message)
    return value


def event_object(event: Event, noun: str = "an event") -> dict[str, Any] | None:
    """A streamed event's data as the JSON object every API streams; None for an event
    a client ignores (a comment, fields only: forwarded as received). Anything else is
    Unreadable: data that is not JSON, or JSON that is not an object."""
    if event.data is None:
        if not event.comment_only():
            raise Unreadable("guard.sse-unreadable", "an event without data")
        return None
    try:
        payload = wire.loads(event.data)
    except ValueError as exc:
        raise Unreadable("guard.upstream-unreadable", f"{noun} is not JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise Unreadable("guard.upstream-unreadable", f"{noun} is not a JSON object")
    return payload


def error_frame(api: str, code: str, message: str) -> bytes:
    text = f"[guard] response refused ({code}): {message}"
    if api == "anthropic":
        body = {"type": "error", "error": {"type": "api_error", "message": text}}
        return frame(wire.dumps(body), "error")
    return frame(wire.dumps({"error": {"type": code, "code": code, "message": text}}))
