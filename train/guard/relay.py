"""Moving one exchange between the client and the upstream, rewriters in the middle.

`whole` and `stream` send the (possibly rewritten) response first, then log the
exchange and hand the calls to the atif-scan audit (`audit`, which the server points
at its worker process), so neither sits on the response's critical path.
`passthrough` streams anything the guard does not inspect, both ways, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from train.guard import fast, openai_api
from train.guard.checker import Decision, Guard
from train.guard.exchange import anthropic_tokens, blocked_summary, openai_tokens
from train.guard.facts import ToolCall
from train.guard.session import Session
from train.guard.sse import SSEParser

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


@dataclass
class Turn:
    """One guarded request: what the rewriters and the exchange log need."""

    session: Session
    module: Any
    check: Callable[[list[ToolCall]], list[Decision]]
    meta: dict[str, Any]
    raw: bytes
    raw_is_json: bool


def error(status: int, code: str, message: str) -> web.Response:
    return web.json_response(
        {"error": {"type": code, "code": code, "message": message}}, status=status
    )


def forward_headers(headers: Any, identity: bool) -> dict[str, str]:
    out = {
        k: v
        for k, v in headers.items()
        if k.lower() not in HOP_BY_HOP and k.lower() != "x-guard-session"
    }
    if identity:
        out = {k: v for k, v in out.items() if k.lower() != "accept-encoding"}
        out["Accept-Encoding"] = "identity"
    return out


def response_headers(headers: Any, rewritten: bool) -> dict[str, str]:
    drop = HOP_BY_HOP | ({"content-encoding"} if rewritten else frozenset())
    return {k: v for k, v in headers.items() if k.lower() not in drop}


def parse_body(raw: bytes) -> dict[str, Any] | None:
    try:
        body = fast.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def query(request: web.Request) -> str:
    query = request.rel_url.raw_query_string
    return f"?{query}" if query else ""


Audit = Callable[[Session, list[Decision], str], object]


class Relay:
    def __init__(
        self, guard: Guard, record: bool, stats: dict[str, int], audit: Audit | None = None
    ) -> None:
        self.guard = guard
        self.record = record
        self.stats = stats
        self.audit: Audit = audit or guard.audit

    async def whole(
        self, request: web.Request, upstream: aiohttp.ClientResponse, turn: Turn
    ) -> web.StreamResponse:
        data = await upstream.read()
        headers = response_headers(upstream.headers, rewritten=True)
        if upstream.status != 200:
            return web.Response(body=data, status=upstream.status, headers=headers)
        try:
            body = fast.loads(data)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.stats["unparseable_responses"] += 1
            return error(
                502,
                "guard.upstream-unparseable",
                "the upstream answer is not JSON; it cannot be checked",
            )
        changed, decisions = turn.module.rewrite_response(body, turn.check)
        self.stats["checked_responses"] += bool(decisions)
        out = fast.dumps(body).encode() if changed else data
        headers["Content-Type"] = "application/json"
        headers["Content-Length"] = str(len(out))
        response = web.StreamResponse(status=200, headers=headers)
        await response.prepare(request)
        try:
            await response.write(out)
            await response.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        self.after(turn, fast.loads(data) if changed else body, changed, decisions, upstream.status)
        return response

    async def stream(
        self, request: web.Request, upstream: aiohttp.ClientResponse, turn: Turn
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200, headers=response_headers(upstream.headers, rewritten=True)
        )
        await response.prepare(request)
        parser = SSEParser()
        rewriter = turn.module.StreamRewriter(turn.check)
        try:
            async for chunk in upstream.content.iter_any():
                frames = [f for event in parser.feed(chunk) for f in rewriter.feed(event)]
                if frames:
                    await response.write(b"".join(frames))
        except (aiohttp.ClientPayloadError, ValueError):
            pass
        tail = [f for event in parser.close() for f in rewriter.feed(event)]
        tail += rewriter.close()
        self.stats["checked_responses"] += bool(rewriter.decisions)
        self.stats["bad_chunks"] += rewriter.bad_chunks
        try:
            if tail:
                await response.write(b"".join(tail))
            await response.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        self.after(turn, rewriter.record.response(), rewriter.changed, rewriter.decisions, 200)
        return response

    def after(
        self,
        turn: Turn,
        response: dict[str, Any],
        changed: bool,
        decisions: list[Decision],
        status: int,
    ) -> None:
        """Once the client has everything: the exchange log, then the atif-scan audit."""
        session = turn.session
        if self.record and session.log is not None:
            tokens = (
                openai_tokens(response) if turn.module is openai_api else anthropic_tokens(response)
            )
            session.log.exchange(
                {
                    **turn.meta,
                    "status": status,
                    "rewritten": changed,
                    "blocked_calls": blocked_summary(decisions),
                    **tokens,
                },
                turn.raw,
                response,
                turn.raw_is_json,
            )
        self.audit(session, decisions, turn.meta["request_id"])

    async def passthrough(
        self, client: aiohttp.ClientSession, request: web.Request, url: str
    ) -> web.StreamResponse:
        data = await request.read()
        try:
            upstream = await client.request(
                request.method,
                url,
                data=data or None,
                headers=forward_headers(request.headers, identity=False),
                allow_redirects=False,
            )
        except (aiohttp.ClientError, OSError) as exc:
            return error(502, "guard.upstream-unreachable", str(exc))
        async with upstream:
            response = web.StreamResponse(
                status=upstream.status, headers=response_headers(upstream.headers, rewritten=False)
            )
            await response.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            except (aiohttp.ClientPayloadError, ConnectionResetError):
                pass
            return response
