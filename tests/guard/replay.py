"""A recorded upstream: serves the real vLLM responses in `fixtures/recorded/`.

The response is chosen by the `x-replay` request header (a fixture name) and streamed
in small pieces (`x-replay-chunk` bytes, default 7) so SSE events arrive split across
reads, as they do from a real server; `x-replay-command` swaps the recorded call's
command for another. Every request body it receives is kept, so tests
can see what the guard forwarded.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.guard.upstream import SCRIPTED_COMMAND

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((RECORDED / f"{name}.json").read_text())


class ReplayUpstream:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.received.append(
            {
                "path": request.path,
                "method": request.method,
                "headers": dict(request.headers),
                "body": body,
            }
        )
        name = request.headers.get("x-replay")
        if request.path == "/v1/models":
            return web.json_response({"object": "list", "data": [{"id": "tiny"}]})
        if name == "not-json":
            return web.Response(text="upstream exploded", content_type="application/json")
        if name is None:
            return web.json_response({"error": "no fixture"}, status=404)
        recorded = fixture(name)
        step = int(request.headers.get("x-replay-chunk", "7"))
        data = recorded["body"].encode()
        command = request.headers.get("x-replay-command")
        if command:  # the same real response, with another (quote-free) command in it
            data = data.replace(SCRIPTED_COMMAND.encode(), command.encode())
        response = web.StreamResponse(
            status=recorded["status"], headers={"Content-Type": recorded["content_type"]}
        )
        await response.prepare(request)
        for start in range(0, len(data), step):
            await response.write(data[start : start + step])
        await response.write_eof()
        return response

    def start(self) -> str:
        ready = threading.Event()

        async def boot() -> None:
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(boot())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(timeout=30)
        return self.base_url

    def stop(self) -> None:
        if self._loop is None or self._runner is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
