"""The guard's server side: aiohttp, with the limits a policy-facing port needs.

aiohttp parses the requests (its strict HTTP/1.1 parser refuses `Content-Length` with
`Transfer-Encoding`, non-hex or negative chunk sizes, over-long heads) and caps bodies
(`client_max_size`), and cancels a handler whose client has left (so its upstream
request is closed). What aiohttp does not bound is added around its protocol
(`_Limited`): a connection must deliver a whole request (head and body) within
`request_timeout_s` of opening or of its last response, and connections beyond
`max_connections` are closed at once. What aiohttp logs per refused request (a
traceback each) goes to a counted, rate-limited logger instead (`errlog`).

`Request` and `Responder` are the small surface the proxy, the relay and the control
plane use: the body read whole (the guard needs all of a conversation), and a response
that is started (status, headers, length or streamed), written, drained and ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from aiohttp import web

from repo2rlenv import ui
from train.guard import wire
from train.guard.errlog import ClientErrors

Headers = list[tuple[str, str]]
SET_BY_SERVER = frozenset({"date", "server", "content-length", "transfer-encoding"})


class Request:
    """A request read whole: method, raw target (percent escapes kept), headers, body."""

    __slots__ = ("_index", "body", "headers", "method", "target")

    def __init__(self, method: str, target: str, headers: Headers, body: bytes) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self._index = {k.lower(): v for k, v in headers}

    def header(self, name: str, default: str | None = None) -> str | None:
        """Lower-case `name`; the last value of a repeated header."""
        return self._index.get(name, default)

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]


class Responder:
    """One response. `start` only records the head; it leaves with the first drain or
    the end, together with what was written so far."""

    def __init__(self, request: web.BaseRequest) -> None:
        self._request = request
        self._response: web.StreamResponse | None = None
        self._status = 200
        self._headers: Headers = []
        self._length: int | None = None
        self._pending: list[bytes] = []
        self.started = False
        self.done = False
        self.keep_alive = True
        self.bodyless = False
        """Kept for the relay; aiohttp sends no body on HEAD, 204 and 304 itself."""

    def start(self, status: int, headers: Iterable[tuple[str, str]], length: int | None) -> None:
        """`length` None: streamed (chunked). Framing headers are the server's."""
        self._status = status
        self._headers = [(k, v) for k, v in headers if k.lower() not in SET_BY_SERVER]
        self._length = length
        self.started = True

    def write(self, data: bytes) -> None:
        if data:
            self._pending.append(data)

    def end(self, data: bytes = b"") -> None:
        self.write(data)
        self.done = True

    def reply(self, status: int, body: bytes, headers: Headers | None = None) -> None:
        self.start(status, headers or [("Content-Type", "application/json")], len(body))
        self.end(body)

    def json(self, value: Any, status: int = 200) -> None:
        self.reply(status, wire.dumps(value).encode())

    async def drain(self) -> None:
        """Sends the head (once started) and what was written so far."""
        if not self.started:
            return
        response = await self._prepare()
        data = self._take()
        if data:
            await response.write(data)

    async def _prepare(self) -> web.StreamResponse:
        if self._response is None:
            response = web.StreamResponse(status=self._status)
            for name, value in self._headers:
                response.headers.add(name, value)
            if self._length is not None:
                response.content_length = self._length
            if not self.keep_alive:
                response.force_close()
            await response.prepare(self._request)
            self._response = response
        return self._response

    def _take(self) -> bytes:
        """What was written and not sent yet; nothing on HEAD, 204 and 304 (a streamed
        response is written as given)."""
        data = b"".join(self._pending)
        self._pending.clear()
        return b"" if self._bodyless() else data

    def _bodyless(self) -> bool:
        return self._request.method == "HEAD" or self._status in (204, 304) or self._status < 200

    async def finish(self) -> web.StreamResponse:
        if not self.started:
            self.json({"error": {"type": "guard.internal", "message": "no answer"}}, 500)
        if self._response is not None and not self.keep_alive:
            self._response.force_close()
        response = await self._prepare()
        # The rest of the body and the end of a chunked body leave in one write: a
        # stream whose calls were held sends its events together with its end.
        await response.write_eof(self._take())
        return response


Handler = Callable[[Request, Responder], Awaitable[None]]


class _Limited(asyncio.Protocol):
    """aiohttp's protocol for one connection, with a request deadline and a cap on
    connections (see the module docstring)."""

    def __init__(self, inner: Any, listener: Listener) -> None:
        self._inner = inner
        self._listener = listener
        self._timer: asyncio.TimerHandle | None = None
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if len(self._listener.connections) >= self._listener.max_connections:
            self._inner = None
            transport.close()
            return
        self._transport = transport
        self._listener.connections[transport] = self
        self._inner.connection_made(transport)
        self.arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        if self._inner is not None:
            self._listener.connections.pop(self._transport, None)  # type: ignore[arg-type]
            self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def arm(self) -> None:
        self.disarm()
        self._timer = asyncio.get_running_loop().call_later(
            self._listener.request_timeout_s, self._expire
        )

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if self._transport is not None:
            self._transport.close()


class Listener:
    """One aiohttp server on (host, port) that hands each whole request to `handler`."""

    def __init__(
        self,
        handler: Handler,
        max_body: int,
        request_timeout_s: float = 60.0,
        max_connections: int = 512,
    ) -> None:
        self._handler = handler
        self.max_body = max_body
        self.request_timeout_s = request_timeout_s
        self.max_connections = max_connections
        self.connections: dict[asyncio.BaseTransport, _Limited] = {}
        self.errors = ClientErrors("train.guard.http")
        """What aiohttp would log with a traceback per malformed request: counted, one
        short line at a bounded rate (`errlog`)."""
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        app = web.Application(client_max_size=self.max_body)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, logger=self.errors.logger
        )
        await self._runner.setup()
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: _Limited(server(), self), host, port
        )
        self.port = self._server.sockets[0].getsockname()[1] if self._server.sockets else port
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._runner is not None:
            await self._runner.cleanup()
        for transport in list(self.connections):
            transport.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        connection = self.connections.get(request.transport)  # type: ignore[arg-type]
        out = Responder(request)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            code = "http.body-too-large"
            out.keep_alive = False
            out.json({"error": {"type": code, "code": code, "message": code}}, 413)
            return await out.finish()
        if connection is not None:
            connection.disarm()
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.raw_headers]
        try:
            await self._handler(Request(request.method, request.raw_path, headers, body), out)
        except Exception as exc:  # a bug in a handler must not take the server down
            # the client gets the code alone (an exception's text can quote upstream
            # bytes or the guard's internals); the operator gets the line
            ui.error(f"guard: a handler failed: {type(exc).__name__}: {exc}"[:300])
            if not out.started:
                out.json({"error": {"type": "guard.internal", "message": "guard.internal"}}, 500)
            out.keep_alive = False
        if not out.done:
            out.keep_alive = False
        response = await out.finish()
        if connection is not None:
            connection.arm()
        return response
