"""Moving one exchange between the client and the upstream, rewriters in the middle.

`whole` and `stream` send the (possibly rewritten) response first; the exchange log
and the atif-scan audit (`audit`, which the server points at its worker process) run
after the last byte has gone: they are queued (`AfterResponse`) and run in order in the
next loop passes, once the handler has written the response's end.
`passthrough` streams anything the guard does not inspect, both ways, unchanged.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from repo2rlenv import ui
from train.guard import openai_api, wire
from train.guard.checker import Decision, Guard
from train.guard.exchange import anthropic_tokens, blocked_summary, openai_tokens
from train.guard.refusal import Unreadable, error_frame
from train.guard.server import Headers, Request, Responder
from train.guard.session import Session
from train.guard.sse import Event, SSEParser
from train.guard.turn import Turn, parse_body
from train.guard.upstream import NO_BODY_STATUS, UpstreamError, UpstreamPool, UpstreamResponse

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "expect",
    }
)


def error(out: Responder, status: int, code: str, message: str) -> None:
    out.json({"error": {"type": code, "code": code, "message": message}}, status)


def forward_headers(headers: Headers, identity: bool) -> Headers:
    drop = HOP_BY_HOP | {"x-guard-session"} | ({"accept-encoding"} if identity else set())
    out = [(k, v) for k, v in headers if k.lower() not in drop]
    if identity:
        out.append(("Accept-Encoding", "identity"))
    return out


def response_headers(headers: Headers, rewritten: bool) -> Headers:
    drop = HOP_BY_HOP | ({"content-encoding"} if rewritten else frozenset())
    return [(k, v) for k, v in headers if k.lower() not in drop]


Audit = Callable[[Session, list[Decision], str], object]


AFTER_RESPONSE_FAILURES = "after_response_failures"
"""The stats key (in `/guard/health`) and the session field (in its status, verdict and
each exchange line) that count after-response jobs that raised."""


class AfterResponse:
    """Work that must happen after a response, in order: each job runs in a later loop
    pass (`call_soon`), after the handler has written the response's end; `run_all`
    runs what is still queued (a close or a status needs it on disk).

    A job that raises (an exchange line that could not be written, an audit that broke)
    does not stop the ones after it, and is never silent: it is counted in `stats`
    (the server's, shown by `/guard/health`) and on its session (status, verdict and the
    session's next exchange line), so a gap in the audit trail is visible to whoever
    reads it."""

    def __init__(self, stats: dict[str, int] | None = None) -> None:
        self._jobs: deque[tuple[Callable[[], None], Session | None]] = deque()
        self.stats = stats if stats is not None else {}
        self.stats.setdefault(AFTER_RESPONSE_FAILURES, 0)

    def add(self, job: Callable[[], None], session: Session | None = None) -> None:
        self._jobs.append((job, session))
        asyncio.get_running_loop().call_soon(self._run_one)

    def _run_one(self) -> None:
        if self._jobs:
            self._run(*self._jobs.popleft())

    def run_all(self) -> None:
        while self._jobs:
            self._run(*self._jobs.popleft())

    def _run(self, job: Callable[[], None], session: Session | None) -> None:
        try:
            job()
        except Exception as exc:  # counted and shown; the jobs after it still run
            self.stats[AFTER_RESPONSE_FAILURES] += 1
            if session is not None:
                session.after_response_failures += 1
            where = f" (session {session.context.session_id})" if session is not None else ""
            ui.error(f"guard: after a response{where}: {type(exc).__name__}: {exc}")


class Relay:
    def __init__(
        self,
        guard: Guard,
        record: bool,
        stats: dict[str, int],
        audit: Audit | None = None,
    ) -> None:
        self.guard = guard
        self.record = record
        self.stats = stats
        self.audit: Audit = audit or guard.audit
        self.after_response = AfterResponse(stats)
        self._tasks: set[asyncio.Task[None]] = set()

    async def whole(self, out: Responder, upstream: UpstreamResponse, turn: Turn) -> None:
        """Any 2xx answer is read as the API's response and checked; one the guard
        cannot read is refused (502), never forwarded. Other statuses carry no completion
        a client would run and pass as they are."""
        try:
            data = await upstream.read()
        except UpstreamError:  # cut before its declared length: never a turn
            self.refuse(out, turn, Unreadable("guard.upstream-cut", "the upstream cut its answer"))
            return
        finally:
            upstream.close()
        headers = response_headers(upstream.headers, rewritten=True)
        if not 200 <= upstream.status < 300:
            out.start(upstream.status, headers, len(data))
            out.end(data)
            return
        body = parse_body(data)
        try:
            if body is None:
                raise Unreadable(
                    "guard.upstream-unparseable",
                    "the upstream answer is not JSON; it cannot be checked",
                )
            if turn.api != "openai" and wire.has_duplicate_keys(data):
                # a block or item typed as a call, then `text`: the chat body is only
                # re-serialised (it can be large; its calls' arguments are checked)
                raise Unreadable("guard.duplicate-keys", "the message repeats a key")
            changed, decisions = turn.module.rewrite_response(body, turn.check)
        except Unreadable as exc:
            self.refuse(out, turn, exc)
            return
        self.stats["checked_responses"] += bool(decisions)
        payload = wire.dumps(body).encode()  # what was judged: a repeated key is gone
        headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
        out.start(upstream.status, [*headers, ("Content-Type", "application/json")], len(payload))
        out.end(payload)
        self.after_response.add(
            lambda: self.after(
                turn, wire.loads(data) if changed else body, changed, decisions, upstream.status
            ),
            turn.session,
        )

    def refuse(self, out: Responder, turn: Turn, exc: Unreadable) -> None:
        """A 502 with the reason code and the guard's own words (no exception text), and
        the exchange logged with that status, so training never reads it as a turn."""
        if exc.code != "guard.upstream-unreachable":
            self.stats["unparseable_responses"] += 1
        error(out, 502, exc.code, f"[guard] response refused ({exc.code}): {exc}")
        refused = {"refused": exc.code}
        self.after_response.add(lambda: self.after(turn, refused, False, [], 502))

    async def stream(self, out: Responder, upstream: UpstreamResponse, turn: Turn) -> None:
        """The client's response ends with the stream's last event (`[DONE]`,
        `message_stop`), in the same write, without waiting for the upstream's end of
        body. The rest of that body is read in the background (to keep the upstream
        connection) while the client's connection takes its next request; whatever it
        holds is dropped and counted (`bytes_after_last_event`).

        A stream the guard cannot read, or one the upstream cuts before its last event,
        ends with an error event and a closed connection (the calls held so far are
        dropped), and is logged with status 502: training never reads it as a turn."""
        out.start(upstream.status, response_headers(upstream.headers, rewritten=True), None)
        parser = SSEParser()
        rewriter: Any = (
            openai_api.StreamRewriter(turn.check, turn.prepare)
            if turn.module is openai_api
            else turn.module.StreamRewriter(turn.check)
        )
        draining = False
        failure: Unreadable | None = None
        try:
            async for chunk in upstream.chunks():
                frames = self._feed(rewriter, parser.feed(chunk))
                if rewriter.finished:
                    self._end(out, parser, rewriter, frames)
                    draining = True
                    break
                if frames:
                    out.write(b"".join(frames))
                    await out.drain()
                else:
                    await out.drain()  # a held call must not hold back the status line
            if not draining:
                self._feed(rewriter, parser.close())
                if not rewriter.finished:
                    raise Unreadable("guard.upstream-cut", "the stream ended before its last event")
        except Unreadable as exc:
            failure = exc
        except UpstreamError:
            failure = Unreadable("guard.upstream-cut", "the upstream stream broke")
        except ValueError as exc:  # an event over the size limit
            failure = Unreadable("guard.upstream-unreadable", str(exc))
        finally:
            if draining:
                self._background(self._drain(upstream))
            else:
                upstream.close()
        status = upstream.status
        if failure is not None:
            status = 502
            self.stats["refused_streams"] = self.stats.get("refused_streams", 0) + 1
            out.keep_alive = False
            out.end(error_frame(turn.api, failure.code, str(failure)))
        elif not out.done:
            self._end(out, parser, rewriter, [])
        self.after_response.add(
            lambda: self.after(
                turn, rewriter.record.response(), rewriter.changed, rewriter.decisions, status
            ),
            turn.session,
        )

    def _feed(self, rewriter: Any, events: list[Event]) -> list[bytes]:
        frames: list[bytes] = []
        for event in events:
            if rewriter.finished:
                self.stats["bytes_after_last_event"] += len(event.raw)
            else:
                frames += rewriter.feed(event)
        return frames

    def _end(self, out: Responder, parser: SSEParser, rewriter: Any, frames: list[bytes]) -> None:
        frames += rewriter.close()
        self.stats["checked_responses"] += bool(rewriter.decisions)
        out.end(b"".join(frames))

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        """Ends the background reads of upstream bodies (the server is stopping)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _drain(self, upstream: UpstreamResponse) -> None:
        try:
            async for chunk in upstream.chunks():
                self.stats["bytes_after_last_event"] += len(chunk)
        except UpstreamError:
            pass
        finally:
            upstream.close()

    def after(
        self,
        turn: Turn,
        response: dict[str, Any],
        changed: bool,
        decisions: list[Decision],
        status: int,
    ) -> None:
        """Once the client has everything: the exchange log; the atif-scan audit then
        follows as a job of its own, so one loop pass does not hold both. The audit is
        queued even when the log line fails (that failure is counted by AfterResponse):
        a lost line must not also lose the audit. Each line carries the session's count
        of failed after-response jobs so far, so the trainer sees a gap before it."""
        session = turn.session
        try:
            if self.record and session.log is not None:
                tokens = (
                    openai_tokens(response)
                    if turn.module is openai_api
                    else anthropic_tokens(response)
                )
                session.log.exchange(
                    {
                        **turn.meta(),
                        "status": status,
                        "rewritten": changed,
                        "blocked_calls": blocked_summary(decisions),
                        AFTER_RESPONSE_FAILURES: session.after_response_failures,
                        **tokens,
                    },
                    turn.request.raw,
                    response,
                    turn.request.is_json,
                )
        finally:
            self.after_response.add(
                lambda: self.audit(session, decisions, turn.request_id), session
            )

    async def passthrough(
        self, pool: UpstreamPool, request: Request, out: Responder, target: str
    ) -> None:
        headers = forward_headers(request.headers, identity=False)
        exchange = pool.send(request.method, target, headers, request.body)
        try:
            upstream = await exchange.response()
        except UpstreamError:
            error(out, 502, "guard.upstream-unreachable", "[guard] the upstream did not answer")
            return
        try:
            length = upstream.header("content-length")
            out.bodyless |= upstream.status in NO_BODY_STATUS
            out.start(
                upstream.status,
                response_headers(upstream.headers, rewritten=False),
                int(length) if length.isdigit() and not upstream.chunked else None,
            )
            async for chunk in upstream.chunks():
                out.write(chunk)
                await out.drain()
        except UpstreamError:
            out.keep_alive = False  # the client cannot tell a cut answer from a whole one
            return
        finally:
            upstream.close()
        out.end()
