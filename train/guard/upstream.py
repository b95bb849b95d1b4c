"""The guard's upstream side: HTTP/1.1 keep-alive connections on bare asyncio protocols.

`UpstreamPool.send` writes the request at once when a pooled connection is idle (one
write: head and body), so the model starts on it while the guard is still reading
the conversation; `Exchange.response()` then waits for the status and headers, and
`UpstreamResponse.chunks()` yields the body as it arrives (chunked framing removed),
one piece per read. A connection whose response was read to its end goes back to the
pool; a pooled connection the server closed meanwhile is noticed and, when that
costs the request nothing (no byte of an answer yet), the request is sent again on a
new one, once.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from train.guard.request import Headers
from train.guard.upstream_conn import (
    MAX_HEAD,
    NO_BODY_STATUS,
    Connection,
    UpstreamError,
    UpstreamResponse,
)

KEEPALIVE_S = 30.0
"""How long an idle upstream connection is kept for reuse (see `UpstreamPool`)."""

__all__ = [
    "KEEPALIVE_S",
    "NO_BODY_STATUS",
    "Exchange",
    "UpstreamError",
    "UpstreamPool",
    "UpstreamResponse",
]


class Exchange:
    """A request on its way; `response()` waits for the answer's head."""

    def __init__(self, pool: UpstreamPool, data: bytes, bodyless: bool) -> None:
        self._pool = pool
        self._data = data
        self._bodyless = bodyless
        self._stale = False
        """The connection ended before a byte of an answer: the request can be resent."""
        self._conn = pool.idle_connection()
        if self._conn is not None:
            self._write(self._conn)

    def _write(self, conn: Connection) -> None:
        assert conn.transport is not None
        conn.transport.write(self._data)

    async def response(self) -> UpstreamResponse:
        conn, reused = self._conn, self._conn is not None
        if conn is None:
            conn = await self._pool.connect()
            self._write(conn)
        try:
            return await self._head(conn)
        except UpstreamError:
            if not (reused and self._stale):
                raise
        conn = await self._pool.connect()  # a stale keep-alive connection: once more
        self._write(conn)
        return await self._head(conn)

    def cancel(self) -> None:
        """The answer will not be read: its connection cannot be reused."""
        if self._conn is not None:
            self._pool.give_back(self._conn, reuse=False)

    async def _head(self, conn: Connection) -> UpstreamResponse:
        try:
            return await self._read_head(conn)
        except asyncio.CancelledError:
            self._pool.give_back(conn, reuse=False)
            raise

    async def _read_head(self, conn: Connection) -> UpstreamResponse:
        while True:
            end = conn.buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = bytes(conn.buffer[:end])
                del conn.buffer[: end + 4]
                if head.startswith(b"HTTP/1.1 100") or head.startswith(b"HTTP/1.0 100"):
                    continue  # an interim answer
                try:
                    return UpstreamResponse(self._pool, conn, head, self._bodyless)
                except (UpstreamError, ValueError) as exc:
                    self._pool.give_back(conn, reuse=False)
                    raise UpstreamError(str(exc)) from None
            if len(conn.buffer) > MAX_HEAD:
                self._pool.give_back(conn, reuse=False)
                raise UpstreamError("upstream head too large")
            self._stale = conn.eof and not conn.buffer
            try:
                await conn.more()
            except UpstreamError:
                self._pool.give_back(conn, reuse=False)
                raise


class UpstreamPool:
    def __init__(
        self,
        base_url: str,
        max_idle: int = 512,
        connect_timeout_s: float = 30.0,
        read_timeout_s: float = 900.0,
        keepalive_s: float = KEEPALIVE_S,
    ) -> None:
        url = urlsplit(base_url)
        if url.scheme != "http" or not url.hostname:
            raise ValueError(f"the guard's upstream must be an http:// URL, got {base_url!r}")
        self.host = url.hostname
        self.port = url.port or 80
        self.prefix = url.path.rstrip("/")
        self.authority = url.netloc
        self._idle: list[Connection] = []
        self._max_idle = max_idle
        self._connect_timeout = connect_timeout_s
        self._read_timeout = read_timeout_s
        self._keepalive = keepalive_s
        """Idle connections older than this are closed, not reused. A server closes idle
        connections on its own clock (uvicorn after 5 s unless told otherwise; the
        trainer starts vLLM with 60 s): one it closed is seen (end of file) and skipped,
        and a request that meets the close in flight is sent again on a new connection
        (`Exchange.response`). So this bound is only for peers that vanish without a
        close, such as a middlebox dropping idle flows; opening a connection on a
        request's path costs it 0.5 ms or more."""
        self.connects = 0
        """Connections opened so far (a bench reads it through /guard/health)."""

    def send(self, method: str, target: str, headers: Headers, body: bytes) -> Exchange:
        """`target` is the path and query under the upstream's base URL; `headers` come
        without framing or connection headers (these are set here)."""
        lines = [f"{method} {self.prefix}{target} HTTP/1.1\r\nHost: {self.authority}\r\n"]
        lines += [f"{k}: {v}\r\n" for k, v in headers]
        if body or method not in ("GET", "HEAD", "DELETE", "OPTIONS"):
            lines.append(f"Content-Length: {len(body)}\r\n")
        lines.append("\r\n")
        data = "".join(lines).encode("latin-1", "replace") + body
        return Exchange(self, data, bodyless=method == "HEAD")

    def idle_connection(self) -> Connection | None:
        now = asyncio.get_running_loop().time()
        while self._idle:
            conn = self._idle.pop()
            if not conn.eof and now - conn.idle_since < self._keepalive:
                return conn
            conn.close()
        return None

    async def connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        timeout = self._read_timeout
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: Connection(timeout), self.host, self.port),
                self._connect_timeout,
            )
        except (TimeoutError, OSError) as exc:
            raise UpstreamError(
                f"cannot connect to {self.host}:{self.port}: {exc or 'timed out'}"
            ) from None
        self.connects += 1
        return conn

    def give_back(self, conn: Connection, reuse: bool) -> None:
        if reuse and not conn.eof and len(self._idle) < self._max_idle:
            conn.idle_since = asyncio.get_running_loop().time()
            self._idle.append(conn)
        else:
            conn.close()

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()
