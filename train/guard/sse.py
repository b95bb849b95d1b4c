"""Server-sent events, incrementally: bytes in, whole events out, framing kept.

Upstream chunks split events anywhere; an event is complete at a blank line (`\\n\\n`,
`\\r\\n\\r\\n` or `\\r\\r`). Events are kept as their raw bytes too (comments and
field-only events go out as received); an event with data is forwarded as the guard
re-serialised it (`json_frame`), so no client reads it differently.
"""

from __future__ import annotations

import re

from train.guard.wire import dumpb

BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")
MAX_PENDING = 64 << 20


LINE = re.compile(rb"\r\n|\n|\r")
FIELDS = frozenset({b"event", b"id", b"retry"})


class Event:
    """One event: `raw` as received (the blank line that ends it included), its
    `event` name and its `data` lines joined. A plain slotted class: one is built per
    streamed token, and a frozen dataclass costs several times more to build."""

    __slots__ = ("data", "event", "raw")

    def __init__(self, raw: bytes, event: str | None, data: str | None) -> None:
        self.raw = raw
        self.event = event
        self.data = data

    def frame(self) -> bytes:
        return self.raw

    def comment_only(self) -> bool:
        """An event without data that a client ignores: comments (`: ping`) and the
        `event`/`id`/`retry` fields only. Anything else (a stray JSON line) is not
        forwarded: a lenient client might read it."""
        for line in LINE.split(self.raw):
            if line and not line.startswith(b":") and line.partition(b":")[0] not in FIELDS:
                return False
        return True


def _parse(raw: bytes, end: bytes) -> Event:
    if raw.startswith(b"data: ") and b"\n" not in raw and b"\r" not in raw:
        return Event(raw + end, None, raw[6:].decode("utf-8", errors="replace"))
    name: str | None = None
    data: list[str] = []
    for line in LINE.split(raw):
        if not line or line.startswith(b":"):
            continue
        key, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if key == b"event":
            name = value.decode("utf-8", errors="replace")
        elif key == b"data":
            data.append(value.decode("utf-8", errors="replace"))
    return Event(raw + end, name, "\n".join(data) if data else None)


class SSEParser:
    """Pieces of an event still open are kept in a list and joined only once a
    boundary may have arrived, so one large event costs linear time, not quadratic."""

    def __init__(self) -> None:
        self._buffer = b""
        self._pending: list[bytes] = []
        self._pending_size = 0

    def feed(self, chunk: bytes) -> list[Event]:
        if self._pending or self._buffer:
            tail = (self._pending[-1] if self._pending else self._buffer)[-3:]
            if b"\n" not in chunk and b"\r" not in chunk and not tail.endswith((b"\n", b"\r")):
                self._pending.append(chunk)
                self._pending_size += len(chunk)
                if self._pending_size + len(self._buffer) > MAX_PENDING:
                    raise ValueError("sse.event-too-large")
                return []
            chunk = b"".join([self._buffer, *self._pending, chunk])
            self._buffer, self._pending, self._pending_size = b"", [], 0
        return self._split(chunk)

    def _split(self, buffer: bytes) -> list[Event]:
        if b"\r" not in buffer:  # the usual framing: a split is cheaper than a regex
            *whole, self._buffer = buffer.split(b"\n\n")
            if len(self._buffer) > MAX_PENDING:
                raise ValueError("sse.event-too-large")
            return [_parse(raw, b"\n\n") for raw in whole if raw.strip()]
        events: list[Event] = []
        start = 0
        for match in BOUNDARY.finditer(buffer):
            raw = buffer[start : match.start()]
            if raw.strip():
                events.append(_parse(raw, match.group(0)))
            start = match.end()
        self._buffer = buffer[start:]
        if len(self._buffer) > MAX_PENDING:
            raise ValueError("sse.event-too-large")
        return events

    def close(self) -> list[Event]:
        """A final event the upstream did not end with a blank line."""
        rest = b"".join([self._buffer, *self._pending])
        self._buffer, self._pending, self._pending_size = b"", [], 0
        return [_parse(rest, b"\n\n")] if rest.strip() else []


def frame(data: str, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def json_frame(value: object, event: str | None = None) -> bytes:
    """An event of `value` serialised by the guard: what it forwards is what it read."""
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + dumpb(value) + b"\n\n"
