"""The guard's upstream side: an aiohttp client session.

aiohttp keeps the pool of keep-alive connections and parses the upstream's answers
(strict framing: a body cut before its declared length or its last chunk raises, and
is reported here as `UpstreamError`, so the relay refuses it instead of passing a cut
answer on as a whole one). `UpstreamPool.send` starts the request at once, so the
model starts on it while the guard is still reading the conversation;
`Exchange.response()` waits for the status and headers, and `UpstreamResponse.chunks()`
yields the body as it arrives. A response closed before its end closes its connection
(the upstream request is cancelled); one read to its end gives it back to the pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import aiohttp

KEEPALIVE_S = 55.0
"""How long an idle upstream connection is kept for reuse: just under the 60 s the
trainer starts vLLM with (`train.serving.server.KEEP_ALIVE_ENV`), so the guard, not the
server, closes an idle connection, and a request does not meet one the server is
closing (if one does, it is sent once more). Not lower: a harness's tool run, or the
trainer's step between two rounds of rollouts, leaves a session's connection idle for
tens of seconds, and at 30 s the guard reopened most of its connections after each
such pause (opening one on a request's path costs it 0.5 ms or more)."""
NO_BODY_STATUS = frozenset({204, 304})
Headers = list[tuple[str, str]]

__all__ = [
    "KEEPALIVE_S",
    "NO_BODY_STATUS",
    "Exchange",
    "UpstreamError",
    "UpstreamPool",
    "UpstreamResponse",
]


class UpstreamError(OSError):
    """The upstream could not be reached, or broke off an answer."""


class UpstreamResponse:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers: Headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers
        ]

    def header(self, name: str, default: str = "") -> str:
        return self._response.headers.get(name, default)

    @property
    def content_type(self) -> str:
        return self.header("content-type").lower()

    @property
    def chunked(self) -> bool:
        return "chunked" in self.header("transfer-encoding").lower()

    async def read(self) -> bytes:
        try:
            return await self._response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamError(f"the upstream broke off its answer: {exc!r}") from None

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives, one piece per read."""
        try:
            async for piece in self._response.content.iter_any():
                yield piece
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamError(f"the upstream broke off its answer: {exc!r}") from None

    def close(self) -> None:
        """Read to its end: the connection goes back to the pool; otherwise it closes,
        which ends the upstream's request."""
        self._response.release()


class Exchange:
    """A request on its way; `response()` waits for the answer's head."""

    def __init__(self, pool: UpstreamPool, request: Callable[[], Any]) -> None:
        self._pool = pool
        self._request = request
        self._task: asyncio.Future[aiohttp.ClientResponse] = asyncio.ensure_future(request())

    async def response(self) -> UpstreamResponse:
        """A pooled connection the server closed as the request went out (no byte of
        an answer came) is not an answer: the request is sent once more, on a new one."""
        for last in (False, True):
            try:
                return UpstreamResponse(await asyncio.shield(self._task))
            except asyncio.CancelledError:
                self.cancel()
                raise
            except aiohttp.ServerDisconnectedError as exc:
                if last:
                    raise UpstreamError(f"upstream {self._pool.base_url}: {exc!r}") from None
                self._task = asyncio.ensure_future(self._request())
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                raise UpstreamError(f"upstream {self._pool.base_url}: {exc!r}") from None
        raise AssertionError("unreachable")

    def cancel(self) -> None:
        """The answer will not be read: the request is cancelled, its connection closed."""
        if not self._task.done():
            self._task.cancel()
        elif not self._task.cancelled() and self._task.exception() is None:
            self._task.result().close()


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
        self.base_url = base_url.rstrip("/")
        self._limit = max_idle
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=connect_timeout_s, sock_read=read_timeout_s
        )
        self._keepalive = keepalive_s
        self._session: aiohttp.ClientSession | None = None
        self.connects = 0
        """Connections opened so far (a bench reads it through /guard/health)."""

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            trace = aiohttp.TraceConfig()
            trace.on_connection_create_end.append(self._opened)
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self._limit, keepalive_timeout=self._keepalive
                ),
                timeout=self._timeout,
                auto_decompress=False,  # bodies are checked as sent, or passed unchanged
                skip_auto_headers=("User-Agent", "Accept-Encoding"),
                trace_configs=[trace],
            )
        return self._session

    async def _opened(self, *_: Any) -> None:
        self.connects += 1

    def send(self, method: str, target: str, headers: Headers, body: bytes) -> Exchange:
        """`target` is the path under the upstream's base URL; `headers` come without
        framing or connection headers (aiohttp sets these)."""
        client = self._client()
        return Exchange(
            self,
            lambda: client.request(
                method,
                self.base_url + target,
                headers=headers,
                data=body if body or method not in ("GET", "HEAD") else None,
                allow_redirects=False,
                trace_request_ctx=SimpleNamespace(),
            ),
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
