"""The guard bench's moving parts: a recorded upstream, the guard as deployed, the
load generator, and the CPU accounting of the guard's processes (`guard_bench.py`
reads what they measure)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import random
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from train.guard import wire  # noqa: E402

RECORDED = REPO / "tests" / "guard" / "fixtures" / "recorded"
FIXTURES = (
    "openai_single_stream",
    "openai_two_calls_stream",
    "anthropic_single_stream",
    "responses_single_stream",
)


def _responses_events() -> list[bytes]:
    """A Responses API stream of one `bash` call (no recorded vLLM one yet): the events
    a server sends for it, the arguments in eight deltas."""
    arguments = json.dumps({"command": "ls -la /workspace && cat README.md"})
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash"}
    response = {"id": "resp_1", "object": "response", "created_at": 1, "model": "tiny"}
    step = -(-len(arguments) // 8)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**call, "arguments": "", "status": "in_progress"},
        },
    ]
    events += [
        {
            "type": "response.function_call_arguments.delta",
            "output_index": 0,
            "item_id": "fc_1",
            "delta": arguments[i : i + step],
        }
        for i in range(0, len(arguments), step)
    ]
    done = {**call, "arguments": arguments, "status": "completed"}
    events += [
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "item_id": "fc_1",
            "arguments": arguments,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [done]},
        },
    ]
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def _events(name: str) -> list[bytes]:
    if name.startswith("responses"):
        return _responses_events()
    body = json.loads((RECORDED / f"{name}.json").read_text())["body"]
    return [block.encode() + b"\n\n" for block in body.split("\n\n") if block.strip()]


async def _serve_forever(handle: Any, port: Any) -> None:
    """Serve every path with `handle` on a free loopback port, publish the port through
    the shared `port` value, and run until the process is stopped."""
    app = web.Application(client_max_size=64 << 20)
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port.value = site._server.sockets[0].getsockname()[1]
    await asyncio.Event().wait()


def upstream_main(port: Any) -> None:
    """A fast upstream: waits `x-gen-ms` (generation, in four pauses), then replays each
    recorded event as its own write. It notes, on the machine-wide monotonic clock, when
    each request arrived and when its response was written out."""
    streams = {name: _events(name) for name in FIXTURES}
    timings: dict[str, tuple[float, float]] = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        await request.read()
        if request.path == "/__timings":
            out = dict(timings)
            timings.clear()
            return web.json_response(out)
        pause = float(request.headers.get("x-gen-ms", "0")) / 4000
        events = streams[request.headers["x-replay"]]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for number, event in enumerate(events):
            if pause and number % max(1, len(events) // 4) == 0:
                await asyncio.sleep(pause)
            await response.write(event)
        await response.write_eof()
        timings[request.headers["x-bench-id"]] = (arrived, time.monotonic())
        return response

    wire.run(_serve_forever(handle, port))


def plain_proxy_main(upstream: str, port: Any) -> None:
    """The bare pass-through the guard is measured against: an aiohttp reverse proxy,
    its own process and loop like the guard, that streams each answer back unread."""

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        async with client.request(
            request.method, upstream + request.path_qs, data=body, headers=headers
        ) as answer:
            response = web.StreamResponse(
                status=answer.status,
                headers={"Content-Type": answer.headers.get("Content-Type", "")},
            )
            await response.prepare(request)
            async for piece in answer.content.iter_any():
                await response.write(piece)
            await response.write_eof()
            return response

    async def boot() -> None:
        nonlocal client
        client = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=None)
        )
        await _serve_forever(handle, port)

    client: Any = None
    wire.run(boot())


HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive"})


def start_guard(
    upstream: str, log_dir: str, atif: str, profile: str | None = None, trace: str | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """The guard as it is deployed: `python -m train.guard`, its own process and loop
    (and its own audit worker), never sharing a loop with the load generator. With
    `profile` (a file), the guard runs under cProfile and writes its stats there when
    it stops (cProfile slows it: read where the time goes, not the latency). With
    `trace` (a folder), it runs under `guard_traced.py`, which records what held its
    loop there."""
    port, admin_port = _free_port(), _free_port()
    token_file = Path(log_dir) / "admin-token"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    token_file.write_text(secrets.token_urlsafe(32))
    ADMIN[f"http://127.0.0.1:{port}"] = (f"http://127.0.0.1:{admin_port}", token_file.read_text())
    profiling = ["-m", "cProfile", "-o", profile] if profile else []
    module = ["-m", "train.guard"]
    if trace:
        module = [str(REPO / "benchmarks" / "guard_traced.py"), trace]
    command = [sys.executable, *profiling, *module, "--upstream", upstream]
    command += ["--port", str(port)]
    command += ["--log-dir", log_dir, "--atif-scan", atif, "--admin-port", str(admin_port)]
    command += ["--admin-token-file", str(token_file)]
    process = subprocess.Popen(command, cwd=REPO, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:  # serving, and (audit mode) its audit worker up, as in a long run
            health = guard_health(f"http://127.0.0.1:{port}")
            if atif != "audit" or health.get("audit_worker"):
                return process, port
        except OSError:
            pass
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the guard did not start on port {port}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


ADMIN: dict[str, tuple[str, str]] = {}
"""A started guard's model URL -> (its control plane's URL, its token)."""


def guard_health(base: str) -> dict[str, Any]:
    admin, token = ADMIN[base]
    request = urllib.request.Request(
        f"{admin}/guard/health", headers={"authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=1) as answer:
        return json.load(answer)


def spawn(target: Any, *args: Any) -> tuple[multiprocessing.Process, int]:
    port = multiprocessing.Value("i", 0)
    process = multiprocessing.Process(target=target, args=(*args, port), daemon=True)
    process.start()
    deadline = time.monotonic() + 60
    while port.value == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    return process, port.value


def _body(session: int, turn: int) -> tuple[str, str, dict[str, Any]]:
    name = FIXTURES[session % len(FIXTURES)]
    user = (
        "Fix the bug; data at https://example.org/data.csv"
        if session % 2
        else "Fix the bug in app.py"
    )
    history: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for i in range(turn):
        output = f"step {i}: " + "x = compute(y)  # line of output\n" * 30
        history += [
            {"role": "assistant", "content": f"running step {i}"},
            {"role": "user", "content": output},
        ]
    if name.startswith("anthropic"):
        return (
            name,
            "/v1/messages",
            {
                "model": "tiny",
                "max_tokens": 64,
                "stream": True,
                "tools": [{"name": "bash", "input_schema": {}}],
                "messages": history,
            },
        )
    if name.startswith("responses"):
        tool = {"type": "function", "name": "bash", "parameters": {}}
        return (
            name,
            "/v1/responses",
            {"model": "tiny", "stream": True, "input": history, "tools": [tool]},
        )
    return (
        name,
        "/v1/chat/completions",
        {
            "model": "tiny",
            "stream": True,
            "messages": history,
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
        },
    )


async def run_load(
    base: str, sessions: int, turns: int, tag: str, gen_ms: float = 0, prefix: str = ""
) -> dict[str, tuple[float, float]]:
    """Runs the conversations; returns, per request id, (sent, done) on the monotonic
    clock."""
    times: dict[str, tuple[float, float]] = {}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as client:

        async def conversation(session: int) -> None:
            rng = random.Random(session)  # same draws for both paths
            if gen_ms:
                await asyncio.sleep(rng.uniform(0, gen_ms) / 1000)
            for turn in range(turns):
                name, path, body = _body(session, turn)
                data = json.dumps(body).encode()
                key = f"{tag}-{session}-{turn}"
                generation = rng.uniform(0.5, 1.5) * gen_ms
                headers = {
                    "x-replay": name,
                    "content-type": "application/json",
                    "x-gen-ms": f"{generation:.1f}",
                    "x-bench-id": key,
                }
                sent = time.monotonic()
                async with client.post(
                    f"{base}/s/{tag}-{session}{prefix}{path}", data=data, headers=headers
                ) as response:
                    await response.read()
                times[key] = (sent, time.monotonic())

        await asyncio.gather(*[conversation(s) for s in range(sessions)])
    return times


async def upstream_timings(upstream: str) -> dict[str, list[float]]:
    async with aiohttp.ClientSession() as client, client.get(f"{upstream}/__timings") as r:
        return await r.json()


def cpu_seconds(root: int) -> float:
    """CPU time (user + system) of a process and all its descendants: the guard's
    loop, its fork server and its audit worker."""
    return sum(cpu_split(root))


def cpu_split(root: int) -> tuple[float, float]:
    """CPU time (user + system) of the process itself (the guard's loop) and of all its
    descendants (its fork server and audit worker), apart."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / tick

    def descends(pid: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parents.get(pid, 0)
        return False

    children = sum(s for pid, s in used.items() if pid != root and descends(pid))
    return used.get(root, 0.0), children
