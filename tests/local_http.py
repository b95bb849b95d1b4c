"""A local aiohttp server on a thread, for tests that need a real HTTP peer (a git
remote that asks for credentials or never answers, a Hub that answers with its error
headers) on the loopback address only."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextmanager
def serving(answer: Handler, before_stop: Callable[[], None] | None = None) -> Iterator[str]:
    """`http://127.0.0.1:PORT` answering every path with `answer`; `before_stop` runs
    on the server's loop first at the end (to release requests it holds open)."""
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        if before_stop is not None:
            loop.call_soon_threadsafe(before_stop)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.run_until_complete(runner.cleanup())
        loop.close()
