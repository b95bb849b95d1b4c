"""One keep-alive connection to the upstream, and reading one answer off it.

The body comes out as it arrives, one piece per socket read, chunked framing removed
(`UpstreamResponse.chunks`); an answer read to its end hands the connection back to
its pool, one cut short closes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from train.guard.request import Headers

if TYPE_CHECKING:
    from train.guard.upstream import UpstreamPool

MAX_HEAD = 64 << 10
NO_BODY_STATUS = frozenset({204, 304})


class UpstreamError(OSError):
    """The upstream could not be reached, or broke off an answer."""


class Connection(asyncio.Protocol):
    def __init__(self, read_timeout_s: float) -> None:
        self.buffer = bytearray()
        self.eof = False
        self.transport: asyncio.Transport | None = None
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self._timeout = read_timeout_s

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def more(self) -> None:
        """Waits for more bytes (or the end); a read timeout is an UpstreamError."""
        if self.eof:
            raise UpstreamError("upstream closed the connection")
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        timer = loop.call_later(self._timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def close(self) -> None:
        self.eof = True
        if self.transport is not None:
            self.transport.close()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(UpstreamError("upstream read timed out"))


class UpstreamResponse:
    def __init__(self, pool: UpstreamPool, conn: Connection, head: bytes, bodyless: bool) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        try:
            self.status = int(parts[1])
        except (IndexError, ValueError):
            raise UpstreamError(f"bad status line {lines[0][:80]!r}") from None
        self.headers: Headers = []
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if colon:
                self.headers.append((name.strip(), value.strip()))
        self._index = {k.lower(): v for k, v in self.headers}
        self._pool = pool
        self._conn: Connection | None = conn
        self._done = False
        self._reusable = "close" not in self.header("connection", "").lower()
        self._left = -1  # bytes left in the current chunk, or of the body by length
        self._chunked = "chunked" in self.header("transfer-encoding", "").lower()
        if bodyless or self.status in NO_BODY_STATUS or 100 <= self.status < 200:
            self._left, self._chunked = 0, False
        elif not self._chunked:
            length = self._index.get("content-length")
            if length is None:
                self._reusable = False  # the body ends when the connection does
            else:
                self._left = int(length)

    def header(self, name: str, default: str = "") -> str:
        return self._index.get(name, default)

    @property
    def content_type(self) -> str:
        return self.header("content-type")

    @property
    def chunked(self) -> bool:
        return self._chunked

    async def read(self) -> bytes:
        return b"".join([piece async for piece in self.chunks()])

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, one piece per read from the socket; raises UpstreamError when the
        upstream breaks off before the body's end."""
        conn = self._conn
        if conn is None:
            return
        while not self._done:
            piece = self._take(conn)
            if piece:
                yield piece
            if self._done:
                break
            if conn.eof and not conn.buffer:
                if self._left < 0 and not self._chunked:
                    self._done = True  # body delimited by the connection's end
                    break
                self._release(reuse=False)
                raise UpstreamError("upstream ended the response early")
            if not piece or not conn.buffer:
                await conn.more()
        self._release(reuse=self._reusable)

    def _take(self, conn: Connection) -> bytes:
        buffer = conn.buffer
        if not self._chunked:
            if self._left < 0:
                piece = bytes(buffer)
                buffer.clear()
                return piece
            piece = bytes(buffer[: self._left])
            del buffer[: len(piece)]
            self._left -= len(piece)
            self._done = self._left == 0
            return piece
        pieces = []
        while buffer:
            if self._left > 0:
                piece = bytes(buffer[: self._left])
                del buffer[: len(piece)]
                pieces.append(piece)
                self._left -= len(piece)
                if self._left:
                    break
                self._left = -2  # the CRLF after the data
            if self._left == -2:
                if len(buffer) < 2:
                    break
                del buffer[:2]
                self._left = -1
            end = buffer.find(b"\r\n")
            if end < 0:
                break
            if self._left == 0:  # trailers after the last chunk, up to a blank line
                del buffer[: end + 2]
                if end == 0:
                    self._done = True
                    break
                continue
            try:
                self._left = int(bytes(buffer[:end]).split(b";")[0].strip(), 16)
            except ValueError:
                raise UpstreamError("bad chunk size from the upstream") from None
            del buffer[: end + 2]
        return b"".join(pieces)

    def _release(self, reuse: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool.give_back(conn, reuse and not conn.buffer)

    def close(self) -> None:
        """Done with the answer, read or not: an unread rest makes the connection unusable."""
        if self._conn is not None:
            self._release(reuse=self._done and self._reusable)
