"""The guard as an HTTP reverse proxy in front of an OpenAI-compatible server.

Two listeners. The model port (routes also under `/s/<session>/...`; otherwise the
session is the `x-guard-session` header, else `default`) serves only the allowlist of
`routes` on the normalised path:

- `POST /v1/chat/completions`, `POST /v1/messages`: forwarded, tool calls checked and
  the response rewritten (streaming or not);
- `GET /v1/models`, `/health`: passed through unchanged;
- anything else: refused (404), never forwarded.

The control plane (`admin`: sessions in, status and close out) listens on its own
loopback port and needs the run's token; the model port does not serve it.

Both sides are aiohttp (`server`, `upstream`): a well-kept HTTP implementation,
which a policy-facing port needs more than the millisecond a hand-written one saved.
The checks are synchronous pure functions on the event loop (well under a
millisecond), so there is no thread hand-off per call. The rest runs on the loop too,
in order, just after what the response needs: the conversation is read
(`turn.RequestView`) in the loop pass after the request went upstream (or at once when
a check needs it first), the exchange log is written in the pass after the response's
last byte (`relay.AfterResponse`), to plain files (`log.py`); atif-scan audits run in a
worker process fed through an asyncio stream the loop never waits on (`audit_worker.py`).
Audits count as work in flight for their session, so a close waits for them (a bounded
time, then it runs those the worker has not done itself). (Earlier versions delayed this
work by a timer and wrote files on a thread to win the last millisecond; what the
simple design costs is measured in docs/guard.md, "Speed, as measured".)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import threading
from typing import Any

from train.guard import anthropic_api, openai_api, responses_api, wire
from train.guard.admin import admin
from train.guard.audit_worker import Auditor, AuditWorker
from train.guard.checker import Guard
from train.guard.context import GuardContext, safe_session_id
from train.guard.options import GuardOptions
from train.guard.refusal import Unreadable
from train.guard.relay import Relay, error, forward_headers
from train.guard.routes import RouteRefused, normalize, route
from train.guard.server import Listener, Request, Responder
from train.guard.session import Session
from train.guard.turn import RequestView, Turn, parse_body
from train.guard.upstream import UpstreamError, UpstreamPool

PREFIX = re.compile(r"^/s/([^/]+)(/.*)$")
ADMIN_MAX_BODY = 1 << 20
APIS = {"openai": openai_api, "anthropic": anthropic_api, "responses": responses_api}


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
            "refused_streams": 0,
            "refused_requests": 0,
            "sessions_expired": 0,
            "unparseable_responses": 0,
            "bytes_after_last_event": 0,
        }
        self._worker = AuditWorker()
        self._worker_start: asyncio.Future[bool] | None = None
        self.auditor = Auditor(self.guard, self._worker, self._hold, self._release)
        self.relay = Relay(self.guard, options.record, self.stats, self.auditor)
        self._pool: UpstreamPool | None = None
        self._server: Listener | None = None
        self._admin_server: Listener | None = None
        self.admin_port = options.admin_port
        self._sweeper: asyncio.TimerHandle | None = None
        self._last_used: dict[str, float] = {}
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)
        self._inflight: dict[str, int] = {}

    @property
    def http_errors(self) -> int:
        """Requests aiohttp refused (malformed) or failed on, both listeners."""
        servers = (self._server, self._admin_server)
        return sum(server.errors.count for server in servers if server is not None)

    @property
    def upstream_connections(self) -> int:
        """Connections to the upstream opened so far (most requests reuse one)."""
        return self._pool.connects if self._pool is not None else 0

    @property
    def base_url(self) -> str:
        return f"http://{self.options.host}:{self.port}"

    @property
    def admin_url(self) -> str:
        return f"http://{self.options.admin_host}:{self.admin_port}"

    # -- lifecycle -----------------------------------------------------------------
    async def start(self) -> str:
        self._pool = UpstreamPool(
            self.upstream,
            max_idle=self.options.max_connections,
            read_timeout_s=self.options.upstream_timeout_s,
        )
        self._server = Listener(
            self._dispatch,
            self.options.max_body_mb << 20,
            self.options.client_timeout_s,
            self.options.max_connections,
        )
        self.port = await self._server.start(self.options.host, self.options.port)
        self._admin_server = Listener(
            self._admin_dispatch, ADMIN_MAX_BODY, self.options.client_timeout_s
        )
        self.admin_port = await self._admin_server.start(
            self.options.admin_host, self.options.admin_port
        )
        self._schedule_sweep()
        if self.options.audit_worker and self.guard.atif_scan == "audit":
            self._worker_start = asyncio.ensure_future(self._worker.start())
        return self.base_url

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._admin_server is not None:
            await self._admin_server.stop()
        if self._server is not None:
            await self._server.stop()  # lets the requests in flight finish (aiohttp)
        await self.relay.stop()
        if self._pool is not None:
            await self._pool.close()
        for session_id in list(self.guard.sessions):
            await self.close_when_idle(session_id, timeout_s=5.0)
        if self._worker_start is not None:
            await self._worker_start
        self._worker.stop()
        await self.logged()

    def start_background(self) -> str:
        """Run the server on its own event loop in a daemon thread (for a sync trainer)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            self._loop = wire.new_event_loop()
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

    # -- session expiry --------------------------------------------------------------
    def _schedule_sweep(self) -> None:
        every = min(60.0, self.options.session_idle_s / 4)
        self._sweeper = asyncio.get_running_loop().call_later(every, self._sweep)

    def _sweep(self) -> None:
        """Closes sessions idle for `session_idle_s` (no request, nothing in flight):
        their verdict is written and their log files closed."""
        now = asyncio.get_running_loop().time()
        for session_id in list(self.guard.sessions):
            last = self._last_used.setdefault(session_id, now)
            if now - last >= self.options.session_idle_s and not self._inflight.get(session_id):
                self._last_used.pop(session_id, None)
                self.relay.after_response.run_all()
                self.guard.close(session_id)
                self.stats["sessions_expired"] = self.stats.get("sessions_expired", 0) + 1
        for session_id in [s for s in self._last_used if s not in self.guard.sessions]:
            del self._last_used[session_id]
        self._schedule_sweep()

    # -- routing -------------------------------------------------------------------
    async def _admin_dispatch(self, request: Request, out: Responder) -> None:
        try:
            path = normalize(request.path)
        except RouteRefused as exc:
            return error(out, exc.status, exc.code, str(exc))
        await admin(self, request, out, path)

    async def _dispatch(self, request: Request, out: Responder) -> None:
        self.stats["requests"] += 1
        try:
            path = normalize(request.path)
            session_id = request.header("x-guard-session", "default") or "default"
            match = PREFIX.match(path)
            if match:
                session_id, path = match.group(1), match.group(2)
            if not safe_session_id(session_id):
                raise RouteRefused(
                    400, "guard.bad-session-id", f"invalid session id {session_id[:200]!r}"
                )
            api = route(request.method, path)
        except RouteRefused as exc:
            self.stats["refused_requests"] = self.stats.get("refused_requests", 0) + 1
            return error(out, exc.status, exc.code, str(exc))
        if api is not None:
            if self.options.require_registered and session_id not in self.guard.sessions:
                return error(
                    out,
                    403,
                    "guard.unknown-session",
                    f"session {session_id} is not registered with the guard",
                )
            self._last_used[session_id] = asyncio.get_running_loop().time()
            return await self._guarded(request, out, path, api, session_id)
        assert self._pool is not None
        await self.relay.passthrough(self._pool, request, out, path)

    # -- guarded routes ------------------------------------------------------------
    async def _guarded(
        self, request: Request, out: Responder, target: str, api: str, session_id: str
    ) -> None:
        self._hold(session_id)
        try:
            await self._guarded_request(request, out, target, api, session_id)
        finally:
            self._release(session_id)

    def _hold(self, session_id: str) -> None:
        """Counts a request or an audit still running for the session (close waits)."""
        self._inflight[session_id] = self._inflight.get(session_id, 0) + 1

    def _release(self, session_id: str) -> None:
        self._inflight[session_id] -= 1
        if not self._inflight[session_id]:
            del self._inflight[session_id]

    async def close_when_idle(self, session_id: str, timeout_s: float = 30.0) -> Any:
        """Closes a session once its requests are done and their exchanges logged (they
        are logged after the response's last byte, off the client's critical path).
        Its audits get `audit_wait_s` in the worker; those still not done are taken
        back and run here, so the verdict is whole even when the worker is stalled."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        audit_deadline = min(deadline, loop.time() + self.options.audit_wait_s)
        while True:
            self.relay.after_response.run_all()  # may start audits, which hold the session
            if self._inflight.get(session_id):  # audits that found nothing settle here
                left = audit_deadline - loop.time()
                if left > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._worker.sync(), left)
                else:  # the worker is stalled: its audits of this session run here
                    self._worker.reclaim(session_id)
            if not self._inflight.get(session_id) or loop.time() >= deadline:
                break
            await asyncio.sleep(0.005)
        status = self.guard.close(session_id)
        await self.logged()
        return status

    async def logged(self) -> None:
        """Writes the exchanges of finished responses not yet logged, so what a status
        or close reports is also on disk."""
        self.relay.after_response.run_all()

    def close_session(self, session_id: str) -> dict[str, object] | None:
        """Thread-safe close for a trainer running the server with `start_background`:
        waits for the session's in-flight requests, writes the final verdict."""
        if self._loop is None:
            return self.guard.close(session_id)
        future = asyncio.run_coroutine_threadsafe(self.close_when_idle(session_id), self._loop)
        return future.result(timeout=60)

    async def _guarded_request(
        self, request: Request, out: Responder, target: str, api: str, session_id: str
    ) -> None:
        """The body is parsed first (one that is not a JSON object is refused with 400,
        never forwarded); the conversation is read (hosts, declared tools) while the
        model generates: in the loop pass after the request went upstream."""
        raw = request.body
        body = parse_body(raw)
        if body is None:  # not a JSON object (or deeper than 1,024): not a model request
            return error(out, 400, "guard.bad-request-json", "the body is not a JSON object")
        hosted = responses_api.hosted_tools(body) if api == "responses" else []
        if hosted:  # the upstream would run them before any answer reaches the guard
            message = f"hosted tools the guard cannot check: {', '.join(hosted)[:200]}"
            return error(out, 400, "guard.hosted-tool", message)
        session = self.guard.session(session_id)
        module = APIS[api]
        view = RequestView(raw, module, session, body, body.get("model"))
        forward = raw
        if self._rewrites_requests(session, api) and self._adjust(body, session, api):
            forward = wire.dumps(body).encode()
        # The parsed conversation is the view's alone, which drops it once read: held
        # by this frame, it would live as long as the response does, and the collector
        # would scan every in-flight conversation on each pass.
        del body
        request_id = f"{session_id}-{next(self._ids)}"
        assert self._pool is not None
        headers = forward_headers(request.headers, identity=True)
        sending = self._pool.send("POST", target, headers, forward)
        reading = asyncio.get_running_loop().call_soon(view.read)
        try:
            upstream = await sending.response()
        except UpstreamError:
            reading.cancel()
            turn = Turn(session, module, view, request_id, api, self.guard)
            failure = Unreadable("guard.upstream-unreachable", "the upstream did not answer")
            return self.relay.refuse(out, turn, failure)
        turn = Turn(session, module, view, request_id, api, self.guard)
        if 200 <= upstream.status < 300 and "text/event-stream" in upstream.content_type:
            await self.relay.stream(out, upstream, turn)
        else:
            await self.relay.whole(out, upstream, turn)

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
