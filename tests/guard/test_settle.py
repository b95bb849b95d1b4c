"""Work off the response's path: the client's stream ends with its last event, the
conversation is read after the request went upstream (or on the spot by a check), and
call facts are worked out as the arguments close."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.guard.replay import ReplayUpstream, fixture
from tests.guard.upstream import ANTHROPIC_TOOLS, NOT_SHOWN, OPENAI_TOOLS, SHOWN
from train.guard import GuardOptions, GuardServer, checker
from train.guard.checker import MAX_PREPARED, Guard
from train.guard.facts import ToolCall
from train.guard.openai_api import StreamRewriter
from train.guard.session import Session
from train.guard.sse import Event, SSEParser

LATE = b"data: late\n\n"
ROUTES = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
STREAMS = {"openai": "openai_single_stream", "anthropic": "anthropic_single_stream"}
LAST_EVENT = {
    "openai": b"data: [DONE]\n\n",
    "anthropic": b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
}


class HoldingUpstream(ReplayUpstream):
    """A replay upstream whose `x-hold` answers send the recorded stream, then keep the
    response open until `release` (at most `x-hold` seconds), send `LATE` and end it;
    `x-same-write` sends `LATE` with the stream, `x-cut-last` drops its last event."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.ended = threading.Event()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        hold = request.headers.get("x-hold")
        if hold is None:
            return await super()._handle(request)
        await request.read()
        data = fixture(request.headers["x-replay"])["body"].encode()
        if request.headers.get("x-cut-last"):
            data = _cut(data)
        same = bool(request.headers.get("x-same-write"))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(data + LATE if same else data)
        await asyncio.get_running_loop().run_in_executor(None, self.release.wait, float(hold))
        if not same:
            await response.write(LATE)
        self.ended.set()  # before the end of body: nothing that waits for it can beat it
        await response.write_eof()
        return response


def _cut(data: bytes) -> bytes:
    """A stream without its last event."""
    return data[: data.rindex(b"\n\n", 0, len(data) - 2) + 2]


@pytest.fixture(scope="module")
def upstream() -> Iterator[HoldingUpstream]:
    server = HoldingUpstream()
    server.start()
    yield server
    server.stop()


def _guard(upstream: ReplayUpstream, log_dir: Path, **options: object) -> GuardServer:
    url = upstream.base_url
    server = GuardServer(
        GuardOptions(upstream=url, port=0, log_dir=log_dir, atif_scan="off", **options)
    )
    server.start_background()
    return server


@pytest.fixture
def guard(upstream: HoldingUpstream, tmp_path: Path) -> Iterator[GuardServer]:
    upstream.release.clear()
    upstream.ended.clear()
    server = _guard(upstream, tmp_path)
    yield server
    upstream.release.set()
    server.stop_background()


def _body(api: str, user: str, stream: bool, model: str = "tiny", tools: bool = True) -> bytes:
    body: dict[str, object] = {"model": model, "stream": stream, "max_tokens": 64}
    body["messages"] = [{"role": "user", "content": user}]
    if tools:
        body["tools"] = OPENAI_TOOLS if api == "openai" else ANTHROPIC_TOOLS
    return json.dumps(body).encode()


def _post(
    conn: http.client.HTTPConnection, api: str, session: str, body: bytes, replay: str, **x: str
) -> bytes:
    """The whole body, as a plain HTTP/1.1 client reads it (to the chunked terminator);
    `x` are the upstream's `x-` headers."""
    headers = {"Content-Type": "application/json", "x-replay": replay}
    headers |= {f"x-{k.replace('_', '-')}": v for k, v in x.items()}
    conn.request("POST", f"/s/{session}{ROUTES[api]}", body=body, headers=headers)
    response = conn.getresponse()
    assert response.status == 200
    return response.read()


def _settles(condition: Callable[[], bool], seconds: float = 10) -> bool:
    """Whether `condition` holds within `seconds`: for what the guard does in the
    background (reading an upstream body to its end), which a loaded machine delays."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _exchanges(server: GuardServer, session: str) -> list[dict]:
    server.close_session(session)  # (if still open) waits for the deferred log lines
    path = Path(str(server.options.log_dir)) / session / "exchanges.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- 1. the client's stream ends with its last event ------------------------------------
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_stream_ends_with_its_last_event_not_with_the_upstream(
    guard: GuardServer, upstream: HoldingUpstream, api: str
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", guard.port, timeout=30)
    body = _body(api, NOT_SHOWN, stream=True)  # blocked: the rewritten stream ends too
    plain = _post(conn, api, "plain", body, STREAMS[api])
    sock = conn.sock
    held = _post(conn, api, "held", body, STREAMS[api], hold="20")
    assert not upstream.ended.is_set()  # the client has it all while the upstream is open
    assert held == plain and held.rstrip().endswith(LAST_EVENT[api].rstrip())
    assert b"[guard]" in held and LATE not in held
    before = guard.stats["bytes_after_last_event"]
    upstream.release.set()  # the upstream sends LATE after the last event, then ends
    again = _post(conn, api, "plain", body, STREAMS[api])
    assert conn.sock is sock and again == plain  # the same keep-alive connection
    assert guard.close_session("held") is not None  # the held request is over
    # the rest of the upstream's body is read in the background, after the session closed
    assert _settles(lambda: guard.stats["bytes_after_last_event"] - before == len(LATE))
    (exchange,) = _exchanges(guard, "held")
    assert exchange["rewritten"] is True and exchange["stream"] is True
    upstream.ended.clear()  # a stream without its last event ends with the upstream
    cut = _post(conn, api, "cut", _body(api, SHOWN, True), STREAMS[api], hold="0.2", cut_last="1")
    assert upstream.ended.wait(10)
    # Changed on purpose: a stream that does not end with its last event (here: junk
    # after a cut) is refused with an error event, which ends it.
    assert b"[guard] response refused (guard.upstream-" in cut.rsplit(b"\n\n", 2)[-2]
    assert LATE not in cut


def test_data_after_done_in_the_same_read_is_not_delivered(
    guard: GuardServer, upstream: HoldingUpstream
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", guard.port, timeout=30)
    body = _body("openai", SHOWN, True)
    body = _post(conn, "openai", "same", body, STREAMS["openai"], hold="0", same_write="1")
    assert LATE not in body


def test_the_next_request_on_the_connection_does_not_wait_for_the_upstream(
    guard: GuardServer, upstream: HoldingUpstream
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", guard.port, timeout=30)
    body = _body("openai", SHOWN, stream=True)
    _post(conn, "openai", "next", body, STREAMS["openai"], hold="2")
    _post(conn, "openai", "next", body, STREAMS["openai"])
    assert not upstream.ended.is_set()


# -- 2. the conversation is read late, or on the spot by a check -------------------------
@pytest.mark.parametrize("name", ["openai_single", *STREAMS.values()])
def test_a_check_sees_the_conversation(
    upstream: HoldingUpstream, tmp_path: Path, name: str
) -> None:
    api, stream = name.split("_")[0], name.endswith("_stream")
    server = _guard(upstream, tmp_path)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        allowed = _post(conn, api, "shown", _body(api, SHOWN, stream), name)
        undeclared = _body(api, SHOWN, stream, tools=False)
        blocked = _post(conn, api, "undeclared", undeclared, name)
        statuses = {s: server.close_session(s) for s in ("shown", "undeclared")}
    finally:
        server.stop_background()
    assert b"example.org/data.csv" in allowed and b"[guard]" not in allowed
    assert b"tool.undeclared" in blocked
    rules = [(s or {}).get("rules") for s in statuses.values()]
    assert rules == [{}, {"tool.undeclared": 1}]


def test_the_conversation_is_read_late_and_logged_with_its_fields(
    upstream: HoldingUpstream, tmp_path: Path
) -> None:
    lazy = _guard(upstream, tmp_path / "lazy")
    mapped = _guard(upstream, tmp_path / "mapped", model_map={"h": "tiny"})
    try:
        conn = http.client.HTTPConnection("127.0.0.1", lazy.port, timeout=30)
        no_tools, stream = "openai_no_tools", "openai_single_stream"
        _post(conn, "openai", "late", _body("openai", SHOWN, False), no_tools)
        session = lazy.guard.sessions["late"]
        _post(conn, "openai", "late", _body("openai", SHOWN, True), stream)
        sent = len(upstream.received)
        conn.request("POST", "/s/raw/v1/chat/completions", body=b"{not json")
        not_json = conn.getresponse()
        refused = json.loads(not_json.read())
        reached = len(upstream.received) - sent
        logged = _exchanges(lazy, "late")
        conn = http.client.HTTPConnection("127.0.0.1", mapped.port, timeout=30)
        _post(conn, "openai", "m", _body("openai", SHOWN, True, model="h"), stream)
        _post(conn, "openai", "m", _body("openai", SHOWN, False), no_tools)
        logged += _exchanges(mapped, "m")
    finally:
        lazy.stop_background()
        mapped.stop_background()
    assert "example.org" in session.view.hosts  # read with no check asking for it
    # Changed on purpose: a body that is not JSON is refused, never forwarded.
    assert not_json.status == 400 and refused["error"]["type"] == "guard.bad-request-json"
    assert reached == 0
    fields = [(x["model"], x["upstream_model"], x["stream"]) for x in logged]
    assert fields == [
        ("tiny", "tiny", False),
        ("tiny", "tiny", True),
        ("h", "tiny", True),
        ("tiny", "tiny", False),
    ]
    assert logged[2]["request"]["model"] == "h"


# -- 3. call facts worked out as the arguments close -------------------------------------
def _event(text: str, first: bool = False, finish: str | None = None) -> Event:
    """A chunk of call 0's arguments (the first one names the call)."""
    function = {"name": "bash", "arguments": text} if first else {"arguments": text}
    call = {"index": 0, "id": "call_1", "function": function}
    choice = {"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}
    return SSEParser().feed(f"data: {json.dumps({'id': 'c', 'choices': [choice]})}\n\n".encode())[0]


@pytest.fixture
def facts(monkeypatch: pytest.MonkeyPatch) -> tuple[StreamRewriter, Session, list, list]:
    """A rewriter checking with a real guard; what it prepared, and every time a call's
    facts were worked out."""
    guard = Guard(atif_scan="off")
    session = guard.session("p")
    prepared: list[str] = []
    worked_out: list[str] = []
    real = checker.call_facts
    monkeypatch.setattr(
        checker, "call_facts", lambda call, wd: worked_out.append(call.arguments) or real(call, wd)
    )

    def prepare(call: ToolCall) -> None:
        prepared.append(call.arguments)
        guard.prepare(session, call)

    rewriter = StreamRewriter(lambda calls: guard.check(session, {"bash"}, calls), prepare)
    return rewriter, session, prepared, worked_out


def test_facts_worked_out_as_the_arguments_close_are_used_by_the_check(facts: tuple) -> None:
    rewriter, session, prepared, worked_out = facts
    rewriter.feed(_event('{"command": ', first=True))
    assert prepared == [] and not session.prepared
    rewriter.feed(_event('"cat /tests/x"}'))
    assert prepared == worked_out == ['{"command": "cat /tests/x"}']
    assert len(session.prepared) == 1
    out = rewriter.feed(_event("", finish="tool_calls"))
    assert [d.rules for d in rewriter.decisions] == [["access.hidden-files"]]
    assert b"[guard]" in b"".join(out)
    assert worked_out == prepared and not session.prepared  # used (once), not worked out again


def test_arguments_that_go_on_after_closing_are_judged_whole(facts: tuple) -> None:
    rewriter, session, prepared, _ = facts
    rewriter.feed(_event('{"command": "ls"}', first=True))
    rewriter.feed(_event(' {"command": "cat /tests/x"}', finish="tool_calls"))
    assert prepared == ['{"command": "ls"}']
    (decision,) = rewriter.decisions
    assert decision.call.arguments == '{"command": "ls"} {"command": "cat /tests/x"}'
    assert decision.rules == ["tool.arguments-invalid"]  # not the stale `ls`, allowed
    assert list(session.prepared) == [("bash", '{"command": "ls"}')]  # left behind
    later = StreamRewriter(rewriter.check)  # the same call id and tool, unprepared
    later.feed(_event('{"command": "cat /tests/x"}', first=True, finish="tool_calls"))
    assert [d.rules for d in later.decisions] == [["access.hidden-files"]]


def test_prepared_facts_are_bounded_per_session() -> None:
    guard = Guard(atif_scan="off")
    session = guard.session("bound")
    for number in range(3 * MAX_PREPARED):
        arguments = json.dumps({"command": f"echo {number}"})
        guard.prepare(session, ToolCall("c", "bash", arguments, json.loads(arguments)))
        assert 0 < len(session.prepared) <= MAX_PREPARED
    assert ("bash", arguments) in session.prepared
    guard.prepare(session, ToolCall("c", "bash", "{", None))  # no object: nothing kept
    assert ("bash", "{") not in session.prepared
