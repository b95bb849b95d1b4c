"""The guard's server side: HTTP/1.1 on a bare asyncio protocol.

A general web framework spends, per request, more event-loop time on request and
response objects, routing and header containers than the guard spends checking the
calls; at 48 concurrent streams that time is what a response queues behind. This
side does only what a proxy in front of a model server needs: keep-alive,
`Content-Length` and chunked request bodies (`Expect: 100-continue` answered),
responses with a length or chunked, the head sent with the first bytes of the body
and the last chunk with the terminator (one write each, so the client wakes once).
Requests on one connection are served in order; a malformed one gets a 400 with a
reason code and the connection is closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from http import HTTPStatus
from typing import Any

from train.guard import fast
from train.guard.request import (
    DIGITS,
    MAX_HEAD,
    BadRequest,
    Headers,
    Request,
    dechunk,
    parse_head,
)

__all__ = ["Headers", "Request", "Responder", "ServerProtocol"]


def status_line(status: int) -> bytes:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Unknown"
    return f"HTTP/1.1 {status} {phrase}\r\n".encode()


class Responder:
    """One response. `start` only prepares the head; it leaves with the first bytes."""

    __slots__ = (
        "_chunked",
        "_head",
        "_protocol",
        "bodyless",
        "done",
        "http10",
        "keep_alive",
        "started",
    )

    def __init__(
        self, protocol: ServerProtocol, keep_alive: bool, bodyless: bool, http10: bool = False
    ) -> None:
        self._protocol = protocol
        self.http10 = http10
        """An HTTP/1.0 client knows no chunks: a body of unknown length ends with the
        connection."""
        self._head = b""
        self._chunked = False
        self.bodyless = bodyless
        self.started = False
        self.done = False
        self.keep_alive = keep_alive

    def start(self, status: int, headers: Iterable[tuple[str, str]], length: int | None) -> None:
        """`length` None: chunked. Framing and connection headers are the responder's."""
        lines = [status_line(status)]
        lines += [f"{k}: {v}\r\n".encode("latin-1", "replace") for k, v in headers]
        if length is not None:
            lines.append(b"Content-Length: %d\r\n" % length)
        elif self.http10:
            self.keep_alive = False
        elif not self.bodyless:
            self._chunked = True
            lines.append(b"Transfer-Encoding: chunked\r\n")
        if not self.keep_alive:
            lines.append(b"Connection: close\r\n")
        lines.append(b"\r\n")
        self._head = b"".join(lines)
        self.started = True

    def write(self, data: bytes) -> None:
        if self.bodyless:
            data = b""
        if self._chunked and data:
            data = b"%x\r\n%b\r\n" % (len(data), data)
        if self._head:
            data, self._head = self._head + data, b""
        if data:
            self._protocol.send(data)

    def flush_head(self) -> None:
        """Sends the head now if no body bytes have taken it along yet."""
        if self._head:
            self._protocol.send(self._head)
            self._head = b""

    def end(self, data: bytes = b"") -> None:
        if self.bodyless:
            data = b""
        if self._chunked:
            data = (b"%x\r\n%b\r\n0\r\n\r\n" % (len(data), data)) if data else b"0\r\n\r\n"
        if self._head:
            data, self._head = self._head + data, b""
        if data:
            self._protocol.send(data)
        self.done = True

    def reply(self, status: int, body: bytes, headers: Headers | None = None) -> None:
        self.start(status, headers or [("Content-Type", "application/json")], len(body))
        self.end(body)

    def json(self, value: Any, status: int = 200) -> None:
        self.reply(status, fast.dumps(value).encode())

    async def drain(self) -> None:
        await self._protocol.drain()


Handler = Callable[[Request, Responder], Awaitable[None]]


class ServerProtocol(asyncio.Protocol):
    """`request_timeout_s`: a connection gets this long to deliver a whole request (head
    and body) after it opens or after its last response, so a slow or idle client
    cannot hold it; `max_connections`: connections beyond it are closed at once."""

    def __init__(
        self,
        handler: Handler,
        max_body: int,
        connections: set[ServerProtocol],
        request_timeout_s: float = 60.0,
        max_connections: int = 512,
    ) -> None:
        self._handler = handler
        self._request_timeout_s = request_timeout_s
        self._max_connections = max_connections
        self._timer: asyncio.TimerHandle | None = None
        self._max_body = max_body
        self._connections = connections
        self._buffer = bytearray()
        self._pending: Request | None = None
        self._need = 0
        self._chunks: list[bytes] = []
        self._chunk_at = 0
        self._continued = False
        self._task: asyncio.Task[None] | None = None
        self._transport: asyncio.Transport | None = None
        self._paused: asyncio.Future[None] | None = None
        self.closed = False

    @property
    def busy(self) -> bool:
        return self._task is not None

    # -- asyncio callbacks ----------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        if len(self._connections) >= self._max_connections:
            transport.close()
            return
        self._connections.add(self)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._connections.discard(self)
        self._disarm()
        self._wake()
        if self._task is not None:  # the client left: its upstream request is cancelled
            self._task.cancel()

    def _arm(self) -> None:
        self._disarm()
        self._timer = asyncio.get_running_loop().call_later(self._request_timeout_s, self.close)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._task is None:
            self._next()

    def pause_writing(self) -> None:
        if self._paused is None:
            self._paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._wake()

    # -- sending ----------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        if not self.closed and self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    async def drain(self) -> None:
        if self._paused is not None and not self.closed:
            await self._paused

    def _wake(self) -> None:
        paused, self._paused = self._paused, None
        if paused is not None and not paused.done():
            paused.set_result(None)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    # -- requests ---------------------------------------------------------------------
    def _next(self) -> None:
        try:
            request = self._parse()
        except BadRequest as exc:
            self._refuse(exc)
            return
        if request is not None:
            self._disarm()
            self._task = asyncio.get_running_loop().create_task(self._serve(request))

    def _parse(self) -> Request | None:
        buffer = self._buffer
        if self._pending is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise BadRequest(431, "http.head-too-large")
                return None
            request = parse_head(bytes(buffer[:end]))
            del buffer[: end + 4]
            self._pending, self._continued = request, False
            self._chunks, self._chunk_at = [], 0
            encodings = [v for k, v in request.headers if k.lower() == "transfer-encoding"]
            lengths = [v for k, v in request.headers if k.lower() == "content-length"]
            if encodings and lengths:  # the classic smuggling pair: refuse, never pick one
                raise BadRequest(400, "http.length-and-chunked")
            if len(encodings) > 1 or len(lengths) > 1:
                raise BadRequest(400, "http.repeated-framing-header")
            if encodings and encodings[0].strip().lower() != "chunked":
                raise BadRequest(501, "http.unsupported-transfer-encoding")
            chunked = bool(encodings)
            length = lengths[0].strip() if lengths else "0"
            if not chunked and not DIGITS.fullmatch(length):  # not "²", "-1", "+4"
                raise BadRequest(400, "http.bad-content-length")
            self._need = -1 if chunked else int(length)
            if self._need > self._max_body:
                raise BadRequest(413, "http.body-too-large")
        request = self._pending
        if self._need >= 0:
            if len(buffer) < self._need:
                return self._waiting(request)
            request.body = bytes(buffer[: self._need])
            del buffer[: self._need]
        else:
            self._chunk_at, end = dechunk(buffer, self._chunk_at, self._chunks)
            if end is None:
                if len(buffer) > self._max_body:
                    raise BadRequest(413, "http.body-too-large")
                return self._waiting(request)
            request.body = b"".join(self._chunks)
            self._chunks = []
            del buffer[:end]
        self._pending = None
        return request

    def _waiting(self, request: Request) -> None:
        expect = (request.header("expect") or "").lower()
        if expect == "100-continue" and not self._continued:
            self._continued = True
            self.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        return None

    def _refuse(self, exc: BadRequest) -> None:
        out = Responder(self, keep_alive=False, bodyless=False)
        code = exc.code
        out.json({"error": {"type": code, "code": code, "message": code}}, status=exc.status)
        self.close()

    async def _serve(self, request: Request) -> None:
        http10 = request.version == "HTTP/1.0"
        out = Responder(self, request.keep_alive, request.method == "HEAD", http10)
        try:
            await self._handler(request, out)
        except Exception as exc:  # a bug in a handler must not take the server down
            if not out.started:
                message = f"{type(exc).__name__}: {exc}"
                out.json({"error": {"type": "guard.internal", "message": message}}, 500)
            out.keep_alive = False
        if not out.done:
            out.keep_alive = False
        self._task = None
        if not out.keep_alive:
            self.close()
            return
        self._arm()
        if self._buffer and not self.closed:
            self._next()
