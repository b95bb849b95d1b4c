"""One guarded request and what the guard learns from its body.

The body (the whole conversation, resent every turn) is read lazily: the proxy forwards
the request first and reads it in the next loop pass, while the model is generating. A
check that comes first reads it on the spot, so no call is ever checked against a
conversation not yet seen. A body that cannot be read fails closed: no tool is declared,
no host is seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from repo2rlenv import ui
from train.guard import wire
from train.guard.checker import Decision, Guard
from train.guard.facts import ToolCall
from train.guard.session import Session


def parse_body(raw: bytes) -> dict[str, Any] | None:
    try:
        body = wire.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


class RequestView:
    """What the checks and the exchange log need from a request body, read once."""

    def __init__(
        self,
        raw: bytes,
        module: Any,
        session: Session,
        body: dict[str, Any] | None = None,
        requested_model: Any = None,
    ) -> None:
        """`body` is the request already parsed (and maybe rewritten) by the proxy;
        `requested_model` then is the model the client asked for."""
        self.raw = raw
        self._module = module
        self._session = session
        self._body = body
        self.requested_model = requested_model
        self.read_done = False
        self.is_json = False
        self.stream = False
        self.upstream_model: Any = None
        self.declared: set[str] = set()

    def read(self) -> None:
        if self.read_done:
            return
        self.read_done = True
        body, self._body = self._body, None
        parsed_here = body is None
        if parsed_here:
            body = parse_body(self.raw)
        if body is None:
            return
        self.is_json = True
        self.stream = body.get("stream") is True
        self.upstream_model = body.get("model")
        if parsed_here:
            self.requested_model = self.upstream_model
        try:
            self._session.observe(self._module.conversation_texts(body))
            self.declared = self._module.declared_tools(body)
        except Exception as exc:  # a guard bug: fail closed (no tool declared)
            self.declared = set()
            ui.error(f"guard: reading a request body: {type(exc).__name__}: {exc}")


@dataclass
class Turn:
    """One guarded request: what the rewriters and the exchange log need."""

    session: Session
    module: Any
    request: RequestView
    request_id: str
    api: str
    guard: Guard

    def check(self, calls: list[ToolCall]) -> list[Decision]:
        self.request.read()
        return self.guard.check(self.session, self.request.declared, calls, self.request_id)

    def prepare(self, call: ToolCall) -> None:
        self.guard.prepare(self.session, call)

    def meta(self) -> dict[str, Any]:
        request = self.request
        request.read()
        return {
            "request_id": self.request_id,
            "api": self.api,
            "stream": request.stream,
            "model": request.requested_model,
            "upstream_model": request.upstream_model,
        }
