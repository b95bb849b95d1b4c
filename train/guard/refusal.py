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
from train.guard.sse import frame


class Unreadable(ValueError):
    """`code` is a stable reason (`guard.upstream-unreadable`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def is_int(value: Any) -> bool:
    """An index the guard accepts: an integer, never a float (`0.0`) nor a bool."""
    return type(value) is int


def error_frame(api: str, code: str, message: str) -> bytes:
    text = f"[guard] response refused ({code}): {message}"
    if api == "anthropic":
        body = {"type": "error", "error": {"type": "api_error", "message": text}}
        return frame(wire.dumps(body), "error")
    return frame(wire.dumps({"error": {"type": code, "code": code, "message": text}}))
