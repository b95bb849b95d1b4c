"""An HTTP/1.1 request as the guard's server reads it: the head, then the whole body.

Bodies are read whole before the handler runs (a chat request is a few kilobytes to a
few megabytes, and the guard needs all of it to check the conversation); chunked
request bodies are decoded here.
"""

from __future__ import annotations

import re

MAX_HEAD = 64 << 10
HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
DIGITS = re.compile(r"[0-9]{1,18}")
Headers = list[tuple[str, str]]


class BadRequest(Exception):
    def __init__(self, status: int, code: str) -> None:
        super().__init__(code)
        self.status = status
        self.code = code


class Request:
    __slots__ = ("_index", "body", "headers", "method", "target", "version")

    def __init__(self, method: str, target: str, version: str, headers: Headers) -> None:
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = b""
        self._index = {k.lower(): v for k, v in headers}

    def header(self, name: str, default: str | None = None) -> str | None:
        """Lower-case `name`; the last value of a repeated header."""
        return self._index.get(name, default)

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        """`?...` as received, or empty."""
        _, mark, rest = self.target.partition("?")
        return mark + rest

    @property
    def keep_alive(self) -> bool:
        connection = (self.header("connection") or "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


def parse_head(head: bytes) -> Request:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "http.bad-request-line")
    headers: Headers = []
    if len(head) > MAX_HEAD:
        raise BadRequest(431, "http.head-too-large")
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise BadRequest(400, "http.bad-header")
        headers.append((name, value.strip()))
    return Request(parts[0], parts[1], parts[2], headers)


def dechunk(buffer: bytearray | bytes, start: int, pieces: list[bytes]) -> tuple[int, int | None]:
    """Walks the whole chunks of a chunked body from `start`, adding their data to
    `pieces`: (where the next chunk starts, the body's end or None while incomplete).
    The caller resumes from the first value, so a large body is walked once."""
    at = start
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return at, None
        digits = bytes(buffer[at:line_end]).split(b";")[0].strip()
        if not HEX.fullmatch(digits):  # int(..., 16) would take "-6", "+6", "0x6", "6_0"
            raise BadRequest(400, "http.bad-chunk")
        size = int(digits, 16)
        if size == 0:
            end = buffer.find(b"\r\n\r\n", line_end)
            return at, (end + 4 if end >= 0 else None)
        if len(buffer) < line_end + 2 + size + 2:
            return at, None
        pieces.append(bytes(buffer[line_end + 2 : line_end + 2 + size]))
        at = line_end + 2 + size + 2
