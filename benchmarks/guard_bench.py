"""How much latency the guard adds, against going to the same upstream directly.

One run measures both paths with the same client, the same upstream and the same load:
48 concurrent sessions (by default), each a multi-turn conversation whose history grows
every turn, every response a recorded real vLLM stream with tool calls (a mix of
allowed and blocked, OpenAI and Anthropic). Rounds alternate direct and guarded to
cancel drift on a shared machine.

Three processes, each with its own event loop, as in production: the upstream, the
guard started as `python -m train.guard` (with its log writer thread and its atif-scan
audit worker), and the load generator (this process). On a machine with fewer free
cores than that, p99 measures the scheduler as much as the guard: the load average is
printed with the result.

1. Added latency, paced like a real episode: each response takes the upstream
   `--gen-ms` (drawn uniformly in 0.5-1.5x, sessions start at random offsets, the same
   draws on both paths) to generate. Measured is the time a response spends outside
   the upstream (request in flight before it arrives + response in flight after its
   last byte leaves), from timestamps on the machine-wide monotonic clock, so the
   generation time and its jitter cancel out. Target: p99 added <= 2 ms.
2. Capacity: the same load with no pacing at all (a closed loop as fast as the machine
   goes); here latency is queueing, so responses per second are reported.
3. The check itself per tool call (in process), with and without atif-scan's detectors,
   over the calls of the real sample sessions.

    python benchmarks/guard_bench.py [--sessions 48] [--turns 6] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from train.guard import fast, ui  # noqa: E402

RECORDED = REPO / "tests" / "guard" / "fixtures" / "recorded"
FIXTURES = ("openai_single_stream", "openai_two_calls_stream", "anthropic_single_stream")
TARGET_P99_MS = 2.0


def _events(name: str) -> list[bytes]:
    body = json.loads((RECORDED / f"{name}.json").read_text())["body"]
    return [block.encode() + b"\n\n" for block in body.split("\n\n") if block.strip()]


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

    async def boot() -> None:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port.value = site._server.sockets[0].getsockname()[1]
        await asyncio.Event().wait()

    fast.run(boot())


def start_guard(upstream: str, log_dir: str, atif: str) -> tuple[subprocess.Popen[bytes], int]:
    """The guard as it is deployed: `python -m train.guard`, its own process and loop
    (and its own audit worker), never sharing a loop with the load generator."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "train.guard", "--upstream", upstream, "--port", str(port)]
    command += ["--log-dir", log_dir, "--atif-scan", atif]
    process = subprocess.Popen(command, cwd=REPO, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/guard/health", timeout=1):
                return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the guard did not start on port {port}")


def _spawn(target: Any, *args: Any) -> tuple[multiprocessing.Process, int]:
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


async def _load(
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


async def _upstream_timings(upstream: str) -> dict[str, list[float]]:
    async with aiohttp.ClientSession() as client, client.get(f"{upstream}/__timings") as r:
        return await r.json()


def _overheads(
    client: dict[str, tuple[float, float]], upstream: dict[str, list[float]]
) -> list[tuple[str, float]]:
    """Per response (with its fixture), the time not spent in the upstream: request in
    flight before it arrives, plus the response in flight after the upstream wrote its
    last byte."""
    return [
        (
            FIXTURES[int(k.split("-")[1]) % len(FIXTURES)],
            (upstream[k][0] - sent) + (done - upstream[k][1]),
        )
        for k, (sent, done) in client.items()
        if k in upstream
    ]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def check_costs() -> dict[str, tuple[float, float]]:
    """Per-call check time (ms, p50/p99) over the real sample sessions."""
    from tests.guard.real_sessions import real_sessions
    from train.guard.calls import parse_arguments
    from train.guard.checker import Guard
    from train.guard.context import GuardContext
    from train.guard.facts import ToolCall

    sessions = list(real_sessions())
    out = {}
    for label, atif in (("rules only", "off"), ("rules + atif-scan", "inline")):
        guard = Guard(None, atif_scan=atif)
        times: list[float] = []
        for real in sessions:
            session = guard.register(GuardContext(session_id="b", workdir=real.workdir))
            for call in real.calls:
                raw, parsed = parse_arguments(call.args)
                tool_call = ToolCall("c", call.name, raw, parsed)
                started = time.perf_counter()
                guard.check_one(session, real.declared, tool_call)
                times.append(time.perf_counter() - started)
        out[label] = (_pct(times, 0.5) * 1e3, _pct(times, 0.99) * 1e3)
    return out


def _paths(
    upstream: str, guard: str, args: argparse.Namespace, gen_ms: float, tag: str
) -> tuple[list[list[tuple[str, float]]], list[list[float]], list[float]]:
    """Per path (direct, the guard's plain pass-through route, guarded): time outside
    the upstream, end-to-end latency, and wall seconds; rounds alternate the paths."""
    paths = ((upstream, ""), (guard, "/plain"), (guard, ""))
    over: list[list[tuple[str, float]]] = [[] for _ in paths]
    latency: list[list[float]] = [[] for _ in paths]
    wall = [0.0 for _ in paths]
    for round_number in range(args.rounds):
        for i, (base, prefix) in enumerate(paths):
            started = time.perf_counter()
            client = fast.run(
                _load(base, args.sessions, args.turns, f"{tag}{round_number}{i}", gen_ms, prefix)
            )
            wall[i] += time.perf_counter() - started
            over[i] += _overheads(client, fast.run(_upstream_timings(upstream)))
            latency[i] += [done - sent for sent, done in client.values()]
    return over, latency, wall


def _added(direct: list[float], guarded: list[float]) -> list[str]:
    return [f"{(_pct(guarded, q) - _pct(direct, q)) * 1e3:.2f}" for q in (0.5, 0.99)]


def _of(pairs: list[tuple[str, float]], name: str) -> list[float]:
    return [v for n, v in pairs if n == name]


def _row(label: str, values: list[float]) -> list[str]:
    return [
        label,
        str(len(values)),
        f"{_pct(values, 0.5) * 1e3:.2f}",
        f"{_pct(values, 0.99) * 1e3:.2f}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=48)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--gen-ms",
        type=float,
        default=1000.0,
        help="upstream time to generate one response (paced run)",
    )
    parser.add_argument(
        "--atif-scan",
        choices=("audit", "inline", "off"),
        default="audit",
        help="the guard's atif-scan mode in runs 1 and 2",
    )
    args = parser.parse_args()
    load = os.getloadavg()

    upstream_process, upstream_port = _spawn(upstream_main)
    upstream = f"http://127.0.0.1:{upstream_port}"
    with tempfile.TemporaryDirectory() as logs:
        guard_process, guard_port = start_guard(upstream, logs, args.atif_scan)
        guard = f"http://127.0.0.1:{guard_port}"
        fast.run(_load(guard, args.sessions, 2, "warm"))
        fast.run(_upstream_timings(upstream))
        paced = _paths(upstream, guard, args, args.gen_ms, "p")
        saturated = _paths(upstream, guard, args, 0, "s")
        guard_process.terminate()
        guard_process.wait(timeout=60)
    upstream_process.terminate()

    (direct_by, plain_by, guarded_by), latency, _ = paced
    direct, plain, guarded = ([v for _, v in by] for by in (direct_by, plain_by, guarded_by))
    added_p50 = (_pct(guarded, 0.5) - _pct(direct, 0.5)) * 1e3
    added_p99 = (_pct(guarded, 0.99) - _pct(direct, 0.99)) * 1e3
    ui.bench_table(
        f"1. time outside the upstream per response, {args.sessions} concurrent sessions, "
        f"{args.gen_ms:g} ms generation each, atif-scan {args.atif_scan}",
        ["path", "responses", "p50 ms", "p99 ms"],
        [
            _row("direct", direct),
            _row("plain proxy hop (no checks)", plain),
            _row("through the guard", guarded),
            ["added by the guard", "", f"{added_p50:.2f}", f"{added_p99:.2f}"],
            _row("end-to-end, direct", latency[0]),
            _row("end-to-end, guard", latency[2]),
        ],
    )
    ui.bench_table(
        "   added by the guard, per response shape (ms)",
        ["response", "p50 added", "p99 added"],
        [[name, *_added(_of(direct_by, name), _of(guarded_by, name))] for name in FIXTURES],
    )
    _, sat_latency, sat_wall = saturated
    rates = [len(v) / w for v, w in zip(sat_latency, sat_wall, strict=True)]
    ui.bench_table(
        f"2. capacity, {args.sessions} sessions, no generation time (closed loop)",
        ["path", "responses", "p50 ms", "p99 ms", "responses/s"],
        [
            [*_row("direct", sat_latency[0]), f"{rates[0]:.0f}"],
            [*_row("plain proxy hop (no checks)", sat_latency[1]), f"{rates[1]:.0f}"],
            [*_row("through the guard", sat_latency[2]), f"{rates[2]:.0f}"],
        ],
    )
    costs = check_costs()
    ui.bench_table(
        "3. check per tool call (in process, real sample sessions)",
        ["checks", "p50 ms", "p99 ms"],
        [[k, f"{v[0]:.3f}", f"{v[1]:.3f}"] for k, v in costs.items()],
    )
    atif = costs["rules + atif-scan"][0] - costs["rules only"][0]
    ui.info(f"load average (1 min) at start {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}")
    if added_p99 < 0:  # the direct path's tail was the longer one: noise, not a result
        verdict = "inconclusive (the machine's load dominates the tail; run it again)"
    else:
        verdict = "met" if added_p99 <= TARGET_P99_MS else "NOT met"
    ui.info(
        f"atif-scan adds {atif:.3f} ms per call at p50. Target p99 added <= "
        f"{TARGET_P99_MS} ms: {verdict} ({added_p99:.2f} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
