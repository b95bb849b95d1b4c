"""The guard's HTTP sides (`server`, `upstream`, both aiohttp) over real sockets.

Clients here are raw sockets (the framing is what is under test) or real HTTP
libraries (`requests`, aiohttp as a real server); no mocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import aiohttp.connector
import pytest
import requests
from aiohttp import web

from train.guard import GuardOptions, GuardServer, wire
from train.guard.server import Listener, Request, Responder
from train.guard.upstream import KEEPALIVE_S, UpstreamError, UpstreamPool
from train.serving.server import KEEP_ALIVE_ENV


async def _echo(request: Request, out: Responder) -> None:
    if request.path == "/stream":
        out.start(200, [("Content-Type", "text/plain")], None)
        out.write(b"one,")
        out.end(b"two")
        return
    body = f"{request.method} {request.target} {len(request.body)}:".encode() + request.body
    out.reply(200, body, [("Content-Type", "text/plain")])


@asynccontextmanager
async def _server(max_body: int = 1 << 20) -> AsyncIterator[int]:
    listener = Listener(_echo, max_body)
    try:
        yield await listener.start("127.0.0.1", 0)
    finally:
        await listener.stop()


async def _exchange(port: int, data: bytes, until: bytes, count: int = 1) -> bytes:
    """Sends raw bytes; reads until `until` has been seen `count` times, or EOF."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    received = b""
    while received.count(until) < count:
        piece = await asyncio.wait_for(reader.read(65536), 10)
        if not piece:
            break
        received += piece
    writer.close()
    return received


def test_server_keeps_alive_and_reads_chunked_bodies_and_expect_continue() -> None:
    async def run() -> tuple[bytes, bytes]:
        async with _server() as port:
            two = await _exchange(
                port,
                b"GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"
                b"POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
                b"HTTP/1.1 200",
                count=2,
            )
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                b"POST /c HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            for piece in (b"3\r\nab", b"c\r\n4;ext=1\r", b"\ndefg\r\n0\r\n", b"\r\n"):
                writer.write(piece)  # split anywhere, even inside a chunk's framing
                await asyncio.sleep(0.02)
            final = await asyncio.wait_for(reader.readuntil(b"abcdefg"), 10)
            writer.close()
            return two, interim + final

    two, chunked = asyncio.run(run())
    assert two.count(b"HTTP/1.1 200 OK") == 2
    assert b"GET /a?x=1 0:" in two and b"POST /b 5:hello" in two
    assert chunked.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")
    assert chunked.endswith(b"POST /c 7:abcdefg")


def test_server_streams_chunked_and_refuses_bad_requests() -> None:
    """aiohttp's parser does the refusing (changed on purpose: the reason codes of the
    hand-written parser are gone; a refusal is a 4xx and a closed connection)."""

    async def run() -> tuple[bytes, bytes, bytes, list[bytes], bytes]:
        async with _server(max_body=10) as port:
            stream = await _exchange(port, b"GET /stream HTTP/1.1\r\nHost: h\r\n\r\n", b"two")
            old = await _exchange(port, b"GET /stream HTTP/1.0\r\n\r\n", b"never")
            head = await _exchange(port, b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n", b"\r\n\r\n")
            bad = [
                await _exchange(port, request, b"never")
                for request in (
                    b"NONSENSE\r\n\r\n",
                    b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: -3\r\n\r\n",
                    b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"-6\r\nabc\r\n0\r\n\r\n",
                    b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                )
            ]
            big = await _exchange(
                port,
                b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n" + b"x" * 11,
                b"never",
            )
            return stream, old, head, bad, big

    stream, old, head, bad, big = asyncio.run(run())
    assert b"Transfer-Encoding: chunked" in stream and b"one,two" in stream.replace(b"\r\n", b"")
    assert old.endswith(b"\r\n\r\none,two")  # HTTP/1.0: no chunks, ended by the close
    assert b"Transfer-Encoding" not in old
    assert b"Content-Length: 10" in head and head.endswith(b"\r\n\r\n")  # no body
    for answer in bad:
        assert answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n")[0]
    assert b" 413 " in big.split(b"\r\n")[0] and b"http.body-too-large" in big


@asynccontextmanager
async def _aiohttp_upstream() -> AsyncIterator[tuple[str, list[str]]]:
    """A real aiohttp server; records the peer port of every request it serves."""
    peers: list[str] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        peers.append(str(request.transport.get_extra_info("peername")[1]))
        if request.path == "/sse":
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for n in range(5):
                await response.write(f"data: {n}\n\n".encode())
            await response.write_eof()
            return response
        return web.Response(body=b"x" * 70000 + await request.read())

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}", peers
    finally:
        await runner.cleanup()


def test_pool_streams_chunked_answers_and_reuses_connections() -> None:
    async def run() -> tuple[bytes, bytes, list[str]]:
        async with _aiohttp_upstream() as (url, peers):
            pool = UpstreamPool(url)
            response = await pool.send("GET", "/sse", [], b"").response()
            streamed = b"".join([piece async for piece in response.chunks()])
            response = await pool.send("POST", "/big", [], b"tail").response()
            whole = await response.read()
            await pool.close()
            return streamed, whole, peers

    streamed, whole, peers = asyncio.run(run())
    assert streamed == b"".join(f"data: {n}\n\n".encode() for n in range(5))
    assert len(whole) == 70004 and whole.endswith(b"tail")
    assert len(peers) == 2 and peers[0] == peers[1]  # one keep-alive connection


@asynccontextmanager
async def _raw_upstream(
    answers: list[bytes], close_on_next: bool = False
) -> AsyncIterator[tuple[str, list[int]]]:
    """Answers the n-th connection's first request with `answers[n]`, then closes it
    (after a keep-alive answer: what a server does when its idle timeout fires); with
    `close_on_next`, as the next request comes in, unanswered (the timeout fired as
    that request was on its way)."""
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(len(connections))
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answers[min(len(connections), len(answers)) - 1])
        await writer.drain()
        if close_on_next:
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
                await reader.readuntil(b"\r\n\r\n")
        else:
            await asyncio.sleep(0.05)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", connections
    finally:
        server.close()


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def test_pool_resends_once_on_a_connection_the_server_closed() -> None:
    async def run() -> tuple[bytes, bytes, int]:
        async with _raw_upstream([OK]) as (url, connections):
            pool = UpstreamPool(url)
            first = await (await pool.send("GET", "/", [], b"").response()).read()
            await asyncio.sleep(0.2)  # the server has closed the pooled connection
            second = await (await pool.send("GET", "/", [], b"").response()).read()
            await pool.close()
            return first, second, len(connections)

    first, second, connections = asyncio.run(run())
    assert first == second == b"ok"
    assert connections == 2


def test_pool_resends_a_request_that_met_the_servers_close_in_flight() -> None:
    async def run() -> tuple[bytes, bytes, int, int]:
        async with _raw_upstream([OK], close_on_next=True) as (url, connections):
            pool = UpstreamPool(url)
            first = await (await pool.send("GET", "/", [], b"").response()).read()
            second = await (await pool.send("POST", "/", [], b"body").response()).read()
            await pool.close()
            return first, second, len(connections), pool.connects

    first, second, connections, opened = asyncio.run(run())
    assert first == second == b"ok"
    assert connections == opened == 2


def test_pool_reuses_a_connection_idle_through_a_long_tool_run() -> None:
    """A harness may run a tool for many seconds between two turns: the pooled
    connection is still used then (the server has not closed it), and given up only
    past the pool's own idle bound (here shortened to 0.3 s; KEEPALIVE_S in a run)."""

    async def run(idle_s: float) -> tuple[int, int]:
        async with _aiohttp_upstream() as (url, peers):  # aiohttp keeps idle ones 75 s
            pool = UpstreamPool(url, keepalive_s=0.3)
            await (await pool.send("POST", "/big", [], b"a").response()).read()
            await asyncio.sleep(idle_s)
            await (await pool.send("POST", "/big", [], b"b").response()).read()
            await pool.close()
            return pool.connects, len(set(peers))

    assert KEEPALIVE_S < 60  # under vLLM's, as the trainer starts it
    assert asyncio.run(run(0.05)) == (1, 1)
    assert asyncio.run(run(1.5)) == (2, 2)


def test_the_aiohttp_client_keeps_idle_connections_as_long_as_vllm_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Between two turns a session's connection idles through the harness's tool run,
    and between rounds of rollouts through the trainer's step: tens of seconds. The pool
    keeps it for reuse up to just under vLLM's keep-alive (at 30 s the guard reopened
    ~100 connections per 1,152 responses in the bench), and gives it up before vLLM
    would close it. aiohttp's pool reads `time.monotonic`: its clock is moved on here
    instead of sleeping."""
    skew = [0.0]
    clock = aiohttp.connector.monotonic
    monkeypatch.setattr(aiohttp.connector, "monotonic", lambda: clock() + skew[0])

    async def run(pause_s: float) -> tuple[int, int]:
        async with _aiohttp_upstream() as (url, peers):
            pool = UpstreamPool(url)
            for _ in range(3):
                response = await pool.send("GET", "/sse", [], b"").response()
                assert b"".join([piece async for piece in response.chunks()])
                response.close()
                skew[0] += pause_s
            await pool.close()
            return pool.connects, len(set(peers))

    vllm_s = float(KEEP_ALIVE_ENV["VLLM_HTTP_TIMEOUT_KEEP_ALIVE"])
    assert asyncio.run(run(45.0)) == (1, 1)
    assert asyncio.run(run(vllm_s)) == (3, 3)


def test_pool_reports_an_answer_cut_short_and_close_delimited_bodies() -> None:
    cut = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"
    until_close = b"HTTP/1.1 200 OK\r\n\r\nall of it"

    async def run() -> tuple[str, bytes]:
        async with _raw_upstream([cut, until_close]) as (url, _):
            pool = UpstreamPool(url)
            response = await pool.send("GET", "/", [], b"").response()
            with pytest.raises(UpstreamError) as broken:
                await response.read()
            response = await pool.send("GET", "/", [], b"").response()
            whole = await response.read()
            await pool.close()
            return str(broken.value), whole

    broken, whole = asyncio.run(run())
    assert "broke off" in broken
    assert whole == b"all of it"


@pytest.fixture
def plain_guard() -> Iterator[tuple[GuardServer, list[bytes]]]:
    """A guard in front of a raw upstream that records every request it reads."""
    seen: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = int(
                dict(
                    line.lower().split(b": ", 1)
                    for line in head.split(b"\r\n")[1:]
                    if b": " in line
                ).get(b"content-length", b"0")
            )
            seen.append(head + await reader.readexactly(length))
            if head.startswith(b"DELETE"):
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            elif head.startswith(b"HEAD"):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Up: 1\r\n\r\nhello")
            await writer.drain()

    upstream_loop = asyncio.new_event_loop()
    server = upstream_loop.run_until_complete(asyncio.start_server(handle, sock=listener))
    thread = threading.Thread(target=upstream_loop.run_forever, daemon=True)
    thread.start()
    guard = GuardServer(GuardOptions(upstream=f"http://127.0.0.1:{port}", port=0))
    guard.start_background()
    yield guard, seen
    guard.stop_background()
    upstream_loop.call_soon_threadsafe(server.close)
    upstream_loop.call_soon_threadsafe(upstream_loop.stop)
    thread.join(timeout=10)


def test_passthrough_is_an_allowlist_and_keeps_bodyless_answers(
    plain_guard: tuple[GuardServer, list[bytes]],
) -> None:
    """Routes off the allowlist never reach the upstream (changed on purpose: every
    path used to pass through); the allowed read-only ones keep their answers."""
    guard, seen = plain_guard
    refused = requests.post(
        f"{guard.base_url}/s/p1/files?a=b", data=iter([b"ab", b"cd"]), timeout=10
    )
    deleted = requests.delete(f"{guard.base_url}/files/1", timeout=10)
    head = requests.head(f"{guard.base_url}/health", timeout=10)
    models = requests.get(f"{guard.base_url}//v1/./models/?a=b", timeout=10)
    assert refused.status_code == 404
    assert refused.json()["error"]["type"] == "guard.route-not-allowed"
    assert deleted.status_code == 404
    assert seen[0].startswith(b"HEAD /health ") and head.headers["Content-Length"] == "5"
    assert models.status_code == 200 and models.text == "hello"
    assert models.headers["X-Up"] == "1"
    assert seen[1].startswith(b"GET /v1/models HTTP/1.1\r\n")
    assert len(seen) == 2


def test_a_held_tool_call_does_not_hold_back_the_status_line() -> None:
    """The upstream's first event is a tool-call delta (held until the call is whole);
    the client still gets the status and headers at once, and the call, checked, after
    the upstream finishes."""
    release = threading.Event()
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash"}}
    call["function"]["arguments"] = '{"command": '
    first = {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
    rest = {"index": 0, "function": {"arguments": '"ls"}'}}
    last = {
        "id": "c1",
        "choices": [{"index": 0, "delta": {"tool_calls": [rest]}, "finish_reason": "tool_calls"}],
    }

    def chunk(data: bytes) -> bytes:
        return b"%x\r\n%b\r\n" % (len(data), data)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
            + chunk(b"data: " + json.dumps(first).encode() + b"\n\n")
        )
        await writer.drain()
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 30)
        writer.write(chunk(b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n"))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    upstream_loop = asyncio.new_event_loop()
    server = upstream_loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
    thread = threading.Thread(target=upstream_loop.run_forever, daemon=True)
    thread.start()
    port = server.sockets[0].getsockname()[1]
    guard = GuardServer(GuardOptions(upstream=f"http://127.0.0.1:{port}", port=0))
    guard.start_background()
    try:
        body = json.dumps(
            {
                "model": "m",
                "stream": True,
                "messages": [{"role": "user", "content": "list the files"}],
                "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
            }
        ).encode()
        with socket.create_connection(("127.0.0.1", guard.port), timeout=20) as client:
            client.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: g\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)
            )
            received = b""
            while b"\r\n\r\n" not in received:  # a hang here means the head was held
                received += client.recv(65536)
            assert received.startswith(b"HTTP/1.1 200 OK")
            assert b'"arguments"' not in received  # the partial call is still held
            release.set()
            while not received.endswith(b"0\r\n\r\n"):
                piece = client.recv(65536)
                assert piece, "the guard closed the stream early"
                received += piece
    finally:
        release.set()
        guard.stop_background()
        upstream_loop.call_soon_threadsafe(server.close)
        upstream_loop.call_soon_threadsafe(upstream_loop.stop)
        thread.join(timeout=10)
    for event in (first, last):  # allowed: forwarded as judged (re-serialised), in order
        assert wire.dumps(event).encode() in received
    assert received.index(wire.dumps(first).encode()) < received.index(b"data: [DONE]")
