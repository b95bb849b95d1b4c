"""The guard as an HTTP reverse proxy (aiohttp), in front of an OpenAI-compatible server.

Routes (each also under `/s/<session>/...`; otherwise the session is the
`x-guard-session` header, else `default`):

- `POST /v1/chat/completions`, `POST /v1/messages`: forwarded, tool calls checked and
  the response rewritten (streaming or not);
- `PUT|POST /guard/sessions/<id>` (a `GuardContext` as JSON), `GET` (status),
  `DELETE` (close, final status); `GET /guard/health`;
- anything else: passed through unchanged, streamed both ways.

One pooled upstream client; the checks are synchronous pure functions on the event
loop (they cost well under a millisecond), so there is no thread hand-off per call.
Everything else leaves the loop: file work goes to the log writer thread (fed without
a wake-up per line, `writer.py`), atif-scan audits to a worker process that the loop
reads itself (`audit_worker.py`). Both count as work in flight for their session, so
a status query waits for the log and a close waits for the log and the audits.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import threading
from typing import Any

import aiohttp
from aiohttp import web
from pydantic import ValidationError

from train.guard import anthropic_api, fast, openai_api
from train.guard.audit_worker import Auditor, AuditWorker
from train.guard.checker import Decision, Guard
from train.guard.context import SESSION_ID, GuardContext
from train.guard.facts import ToolCall
from train.guard.options import GuardOptions
from train.guard.relay import Relay, Turn, error, forward_headers, parse_body, query
from train.guard.session import Session

PREFIX = re.compile(r"^/s/([^/]+)(/.*)$")
GUARDED = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
}
APIS = {"openai": openai_api, "anthropic": anthropic_api}


class GuardServer:
    def __init__(self, options: GuardOptions, guard: Guard | None = None) -> None:
        self.options = options
        self.guard = guard or Guard(
            options.log_dir, atif_scan=options.atif_scan, default_context=options.default_context
        )
        self.upstream = options.upstream.rstrip("/")
        self.port = options.port
        self.stats = {
            "requests": 0,
            "checked_responses": 0,
            "bad_chunks": 0,
            "unparseable_responses": 0,
        }
        self._worker = AuditWorker()
        self._worker_start: asyncio.Future[bool] | None = None
        self.auditor = Auditor(self.guard, self._worker, self._hold, self._release)
        self.relay = Relay(self.guard, options.record, self.stats, self.auditor)
        self._runner: web.AppRunner | None = None
        self._client: aiohttp.ClientSession | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)
        self._inflight: dict[str, int] = {}

    @property
    def base_url(self) -> str:
        return f"http://{self.options.host}:{self.port}"

    # -- lifecycle -----------------------------------------------------------------
    async def start(self) -> str:
        connector = aiohttp.TCPConnector(limit=self.options.max_connections, keepalive_timeout=60)
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=30, sock_read=self.options.upstream_timeout_s
        )
        self._client = aiohttp.ClientSession(
            connector=connector, timeout=timeout, auto_decompress=False
        )
        app = web.Application(client_max_size=self.options.max_body_mb << 20)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.options.host, self.options.port)
        await site.start()
        self.guard.writer.start()
        if self.options.audit_worker and self.guard.atif_scan == "audit":
            self._worker_start = asyncio.ensure_future(self._worker.start())
        sockets = site._server.sockets if site._server else []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._client is not None:
            await self._client.close()
        for session_id in list(self.guard.sessions):
            await self._close_when_idle(session_id, timeout_s=5.0)
        if self._worker_start is not None:
            await self._worker_start
        self._worker.stop()
        await self._logged()
        self.guard.writer.stop()

    def start_background(self) -> str:
        """Run the server on its own event loop in a daemon thread (for a sync trainer)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            self._loop = fast.new_event_loop()
            try:
                self._loop.run_until_complete(self.start())
            except BaseException as exc:  # handed to the calling thread
                failure.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="guard-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self.base_url

    def stop_background(self) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
        self._loop = self._thread = None

    def register(self, context: GuardContext) -> Session:
        return self.guard.register(context)

    # -- routing -------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self.stats["requests"] += 1
        path = request.rel_url.raw_path
        session_id = request.headers.get("x-guard-session", "default")
        match = PREFIX.match(path)
        if match:
            session_id, path = match.group(1), match.group(2)
        if not re.fullmatch(SESSION_ID, session_id):
            return error(400, "guard.bad-session-id", f"invalid session id {session_id!r}")
        if path.startswith("/guard/"):
            return await self._admin(request, path)
        api = GUARDED.get(path)
        if api is not None and request.method == "POST":
            return await self._guarded(request, path, api, session_id)
        assert self._client is not None
        return await self.relay.passthrough(
            self._client, request, self.upstream + path + query(request)
        )

    async def _admin(self, request: web.Request, path: str) -> web.StreamResponse:
        if path == "/guard/health":
            return web.json_response(
                {"ok": True, "sessions": len(self.guard.sessions), **self.stats}
            )
        match = re.fullmatch(r"/guard/sessions/([^/]+)", path)
        if not match or not re.fullmatch(SESSION_ID, match.group(1)):
            return error(404, "guard.not-found", path)
        session_id = match.group(1)
        if request.method in ("PUT", "POST"):
            try:
                payload = await request.json()
                context = GuardContext.model_validate({**payload, "session_id": session_id})
            except (ValueError, ValidationError, TypeError) as exc:
                return error(400, "guard.bad-context", str(exc))
            session = self.guard.register(context)
            await self._logged()
            return web.json_response(self.guard.status_of(session))
        if request.method == "DELETE":
            status = await self._close_when_idle(session_id)
            return (
                web.json_response(status) if status else error(404, "guard.no-session", session_id)
            )
        session = self.guard.sessions.get(session_id)
        if session is None:
            return error(404, "guard.no-session", session_id)
        await self._logged()
        return web.json_response(self.guard.status_of(session))

    # -- guarded routes ------------------------------------------------------------
    async def _guarded(
        self, request: web.Request, path: str, api: str, session_id: str
    ) -> web.StreamResponse:
        self._hold(session_id)
        try:
            return await self._guarded_request(request, path, api, session_id)
        finally:
            self._release(session_id)

    def _hold(self, session_id: str) -> None:
        """Counts a request or an audit still running for the session (close waits)."""
        self._inflight[session_id] = self._inflight.get(session_id, 0) + 1

    def _release(self, session_id: str) -> None:
        self._inflight[session_id] -= 1
        if not self._inflight[session_id]:
            del self._inflight[session_id]

    async def _close_when_idle(self, session_id: str, timeout_s: float = 30.0) -> Any:
        """Closes a session once its requests are done and their exchanges logged (they
        are logged after the response's last byte, off the client's critical path)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self._inflight.get(session_id) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)
        status = self.guard.close(session_id, wait=False)
        await self._logged()
        return status

    async def _logged(self) -> None:
        """Waits until the log writer has done everything asked of it so far, so what a
        status or close reports is also on disk."""
        await asyncio.wrap_future(self.guard.writer.barrier())

    def close_session(self, session_id: str) -> dict[str, object] | None:
        """Thread-safe close for a trainer running the server with `start_background`:
        waits for the session's in-flight requests, writes the final verdict."""
        if self._loop is None:
            return self.guard.close(session_id)
        future = asyncio.run_coroutine_threadsafe(self._close_when_idle(session_id), self._loop)
        return future.result(timeout=60)

    async def _guarded_request(
        self, request: web.Request, path: str, api: str, session_id: str
    ) -> web.StreamResponse:
        """The request goes upstream first; the conversation is read (JSON, hosts) while
        the model generates, so that work is off the response's critical path. Only a
        request the guard must change (model map, token options) is parsed before."""
        raw = await request.read()
        session = self.guard.session(session_id)
        module = APIS[api]
        parsed: list[dict[str, Any] | None] = []
        forward = raw
        requested_model = None
        if self._rewrites_requests(session, api):
            parsed.append(parse_body(raw))
            body = parsed[0]
            if body is not None:
                requested_model = body.get("model")
                if self._adjust(body, session, api):
                    forward = fast.dumps(body).encode()
        request_id = f"{session_id}-{next(self._ids)}"
        assert self._client is not None
        sending = asyncio.ensure_future(
            self._client.request(
                "POST",
                self.upstream + path + query(request),
                data=forward,
                headers=forward_headers(request.headers, identity=True),
            )
        )
        await asyncio.sleep(0)
        body = parsed[0] if parsed else parse_body(raw)
        if not parsed and body is not None:
            requested_model = body.get("model")
        declared: set[str] = set()
        if body is not None:
            session.observe(module.conversation_texts(body))
            declared = module.declared_tools(body)
        try:
            upstream = await sending
        except (aiohttp.ClientError, OSError) as exc:
            return error(502, "guard.upstream-unreachable", str(exc))

        def check(calls: list[ToolCall]) -> list[Decision]:
            return self.guard.check(session, declared, calls, request_id)

        stream = bool(body and body.get("stream") is True)
        meta = {
            "request_id": request_id,
            "api": api,
            "stream": stream,
            "model": requested_model,
            "upstream_model": body.get("model") if body else None,
        }
        turn = Turn(session, module, check, meta, raw, body is not None)
        async with upstream:
            content_type = upstream.headers.get("content-type", "")
            if upstream.status == 200 and "text/event-stream" in content_type:
                return await self.relay.stream(request, upstream, turn)
            return await self.relay.whole(request, upstream, turn)

    def _rewrites_requests(self, session: Session, api: str) -> bool:
        return bool(
            session.context.adapter
            or self.options.model_map
            or (self.options.request_tokens and api == "openai")
        )

    def _adjust(self, body: dict[str, Any], session: Session, api: str) -> bool:
        changed = False
        model = session.context.adapter or self.options.model_map.get(str(body.get("model")))
        if model and model != body.get("model"):
            body["model"] = model
            changed = True
        if self.options.request_tokens and api == "openai":
            for key in ("logprobs", "return_token_ids"):
                if body.get(key) is not True:
                    body[key] = True
                    changed = True
        return changed
