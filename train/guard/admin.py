"""The guard's control plane: a session's settings in, its status and its close out.

It listens on its own loopback address (`GuardOptions.admin_host`/`admin_port`), apart
from the model port that rollout containers reach, and answers only requests that carry
the run's secret (`Authorization: Bearer <admin_token>`), which only the trainer holds.
`PUT|POST /guard/sessions/<id>` (a `SessionSettings` as JSON) registers, `GET` reports,
`DELETE` closes (after the session's requests and audits are done); `GET
/guard/health` counts sessions, requests, the connections opened upstream and the
after-response jobs that failed (`after_response_failures`, train.guard.relay).
"""

from __future__ import annotations

import hmac
import re
from typing import Any, Protocol

from pydantic import ValidationError

from train.guard import wire
from train.guard.checker import Guard
from train.guard.context import ContextError, SessionSettings, safe_session_id
from train.guard.options import GuardOptions
from train.guard.relay import error
from train.guard.server import Request, Responder


class ControlledServer(Protocol):
    """What the control plane reads and drives of the server (the proxy's GuardServer):
    named here so the proxy imports this module, never the other way round."""

    options: GuardOptions
    guard: Guard
    auditor: Any
    stats: dict[str, int]

    @property
    def upstream_connections(self) -> int: ...

    @property
    def http_errors(self) -> int: ...

    async def logged(self) -> None: ...

    async def close_when_idle(self, session_id: str) -> Any: ...


ADMIN = re.compile(r"/guard/sessions/([^/]+)")


def authorized(header: str | None, token: str) -> bool:
    """Constant-time comparison, so the secret cannot be guessed byte by byte."""
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode()
    )


async def admin(server: ControlledServer, request: Request, out: Responder, path: str) -> None:
    if not authorized(request.header("authorization"), server.options.admin_token):
        return error(out, 401, "guard.unauthorized", "the control plane needs the run's token")
    if path == "/guard/health":
        worker = server.auditor.worker
        return out.json(
            {
                "ok": True,
                "sessions": len(server.guard.sessions),
                "audit_worker": worker.alive,
                "audits_overflowed": worker.overflowed,
                "audits_reclaimed": worker.reclaimed,
                **(await worker.refresh_stats()),
                "upstream_connections": server.upstream_connections,
                "http_errors": server.http_errors,
                **server.stats,
            }
        )
    match = ADMIN.fullmatch(path)
    if not match or not safe_session_id(match.group(1)):
        return error(out, 404, "guard.not-found", path)
    session_id = match.group(1)
    if request.method in ("PUT", "POST"):
        existing = server.guard.sessions.get(session_id)
        if existing is not None and existing.decisions:
            return error(
                out,
                409,
                "guard.session-exists",
                f"session {session_id} has checked calls already; its settings are fixed",
            )
        try:
            payload = wire.loads(request.body)
            context = SessionSettings.model_validate(payload).context(session_id)
        except ContextError as exc:
            return error(out, 400, exc.reason, str(exc))
        except (ValueError, ValidationError, TypeError, RecursionError) as exc:
            return error(out, 400, "guard.bad-context", str(exc))
        session = server.guard.register(context)
        await server.logged()
        return out.json(server.guard.status_of(session))
    if request.method == "DELETE":
        status = await server.close_when_idle(session_id)
        if status is None:
            return error(out, 404, "guard.no-session", session_id)
        return out.json(status)
    session = server.guard.sessions.get(session_id)
    if session is None:
        return error(out, 404, "guard.no-session", session_id)
    await server.logged()
    out.json(server.guard.status_of(session))
