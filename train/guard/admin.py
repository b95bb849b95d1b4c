"""The guard's own routes: a session's context in, its status and its close out.

`PUT|POST /guard/sessions/<id>` (a `GuardContext` as JSON) registers, `GET` reports,
`DELETE` closes (after the session's requests and audits are done); `GET
/guard/health` counts sessions, requests and the connections opened upstream.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import ValidationError

from train.guard import fast
from train.guard.context import SESSION_ID, GuardContext
from train.guard.http1 import Request, Responder
from train.guard.relay import error

if TYPE_CHECKING:
    from train.guard.proxy import GuardServer

SESSION = re.compile(SESSION_ID)
ADMIN = re.compile(r"/guard/sessions/([^/]+)")


async def admin(server: GuardServer, request: Request, out: Responder, path: str) -> None:
    if path == "/guard/health":
        return out.json(
            {
                "ok": True,
                "sessions": len(server.guard.sessions),
                "audit_worker": server.auditor.worker.alive,
                "upstream_connections": server.upstream_connections,
                **server.stats,
            }
        )
    match = ADMIN.fullmatch(path)
    if not match or not SESSION.fullmatch(match.group(1)):
        return error(out, 404, "guard.not-found", path)
    session_id = match.group(1)
    if request.method in ("PUT", "POST"):
        try:
            payload = fast.loads(request.body)
            context = GuardContext.model_validate({**payload, "session_id": session_id})
        except (ValueError, ValidationError, TypeError) as exc:
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
