"""atif-scan audits in a worker process, so they never hold the proxy's event loop.

An audit runs after its response has gone out, but on the loop it still cost 0.2-1 ms
per call (most of it atif-scan building its trace), time during which every other
response in flight waits. The audit needs only the call and the task's instruction, so
it runs in a worker process. Findings come back to the loop, which records them on the
session.

The hand-off never blocks the loop. The worker runs at `nice 10`; on a busy machine it
falls behind, and a blocking `send` on a full socket would stop every response in
flight until it caught up. So the loop talks to the worker through an asyncio stream
(the transport writes only when the socket is writable and buffers the rest), and that
buffer is bounded (`MAX_QUEUED_BYTES`): past it an audit is not queued, it runs on the
loop at once (counted in `overflowed`), so no audit is ever dropped. A session's close
waits a bounded time for its audits and then takes back those the worker has not done
(`reclaim`) and runs them on the loop: a stalled worker delays a verdict, never loses
part of it. Messages are length-prefixed JSON both ways: nothing the worker sends back
is unpickled in the guard.

The worker is forked from multiprocessing's fork server (safe in a trainer that holds
threads or CUDA; cheap per server once the fork server runs). If it cannot start, or
dies, audits run on the loop as before: slower, never skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import os
import socket
import struct
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from train.guard import wire
from train.guard.atif_rules import VERDICTS, AtifScanRule, action_arguments, warm
from train.guard.checker import Decision, Guard
from train.guard.facts import CallFacts, ToolCall, Violation
from train.guard.rules import SessionView
from train.guard.session import Session

VIEW = SessionView("/", (), (), (), set(), (), ())
"""atif-scan reads only the call and the instruction, never the session's view."""
Done = Callable[[list[Violation] | None, float], None]
NICENESS = 10
TRACE_ENV = "RLENV_GUARD_AUDIT_TRACE"
"""A file the worker appends `start end` (the machine-wide monotonic clock, seconds) to for
each audit, when this variable names one: the guard bench lays the audits next to its
slowest responses (`benchmarks/guard_traced.py`). Unset in a run: nothing is written."""
HEADER = struct.Struct("!I")
"""Each message: its length (4 bytes, big-endian), then that many bytes of JSON."""


def frame(message: Any) -> bytes:
    body = wire.dumps(message).encode()
    return HEADER.pack(len(body)) + body


@lru_cache(maxsize=64)
def _rule(instruction: str) -> AtifScanRule:
    return AtifScanRule(instruction)


def _serve_warm(sock: socket.socket) -> None:
    """Runs at a lower priority: an audit is never on a response's critical path, so
    on a busy machine the proxy, the upstream and the harness go first."""
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    warm()
    serve(sock)


def serve(sock: socket.socket) -> None:
    """The worker: [number, call, instruction] in; [number, findings, µs] out only when
    there are findings, since most audits find nothing and a reply for each would wake
    the proxy's loop for nothing. [number, null, null] in is a sync: it is answered
    [number, null, [audits, µs, cached]] once every audit sent before it is done (the
    socket keeps order): the worker's totals so far, the µs its CPU time (a `nice 10`
    process on a busy machine waits; that is not the audit's cost), so what an audit
    costs is measured where it runs (`AuditWorker.stats`)."""
    stream = sock.makefile("rb")
    audits, spent = 0, 0.0
    trace = os.environ.get(TRACE_ENV)
    traced = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if trace else None
    while True:
        try:
            head = stream.read(HEADER.size)
            if len(head) < HEADER.size:
                return
            body = stream.read(HEADER.unpack(head)[0])
            number, call, instruction = wire.loads(body)
        except (OSError, ValueError):
            return
        if call is None:
            reply: list[Any] = [number, None, [audits, round(spent, 1), VERDICTS.hits]]
        else:
            start, began, cpu = time.perf_counter(), time.monotonic(), time.thread_time()
            tool = ToolCall(call["id"], call["name"], "", call["args"], call["api"])
            found = _rule(instruction)(tool, CallFacts(), VIEW)
            latency_us = (time.perf_counter() - start) * 1e6
            audits += 1
            spent += (time.thread_time() - cpu) * 1e6
            if traced is not None:
                os.write(traced, f"{began:.6f} {time.monotonic():.6f}\n".encode())
            if not found:
                continue
            reply = [number, [[v.rule, v.detail] for v in found], latency_us]
        try:
            sock.sendall(frame(reply))
        except OSError:  # the proxy stopped while this audit ran
            return


def _spawn() -> tuple[socket.socket, Any] | None:
    try:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        parent, child = socket.socketpair()
        process = context.Process(
            target=_serve_warm, args=(child,), name="guard-audit", daemon=True
        )
        process.start()
    except (OSError, RuntimeError, ValueError, AssertionError):
        # AssertionError: a daemonic multiprocessing child may not have children
        return None
    child.close()
    return parent, process


class AuditWorker:
    """Audits without findings are settled in bulk, by `sync()` (a session's close
    asks for one) or once `MAX_UNSETTLED` of them are waiting. Each pending audit
    carries its session's key, so a close can take back that session's audits."""

    MAX_UNSETTLED = 512
    MAX_QUEUED_BYTES = 4 << 20
    """Audits written but not yet taken by the socket (the worker is behind): about a
    thousand typical calls, a few hundred of the largest (string arguments are clipped
    to 8,192 characters). Past it an audit runs on the loop (`submit` says False)."""

    def __init__(self) -> None:
        self._writer: asyncio.StreamWriter | None = None
        self._reading: asyncio.Task[None] | None = None
        self._process: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[int, tuple[str, Done]] = {}
        self._syncs: dict[int, asyncio.Future[None]] = {}
        self._numbers = itertools.count()
        self.overflowed = 0
        """Audits run on the loop because the queue to the worker was full."""
        self.reclaimed = 0
        """Audits taken back from a worker that had not done them when a session closed."""
        self.stats = {"audits_done": 0, "audit_us": 0.0, "audits_cached": 0}
        """The worker's totals as of its last sync answer: audits done, the CPU µs they
        took in it (the scan alone, not the hand-off), how many its cache answered."""

    @property
    def alive(self) -> bool:
        return self._writer is not None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def queued_bytes(self) -> int:
        writer = self._writer
        return writer.transport.get_write_buffer_size() if writer is not None else 0

    async def start(self) -> bool:
        """Starts the worker off the loop (the first fork server takes a second or two
        to import the guard); audits before it is up run inline."""
        loop = asyncio.get_running_loop()
        started = await loop.run_in_executor(None, _spawn)
        if started is None:
            return False
        sock, process = started
        reader, writer = await asyncio.open_connection(sock=sock)
        self._writer, self._process, self._loop = writer, process, loop
        self._reading = loop.create_task(self._read(reader))
        return True

    def submit(self, call: ToolCall, instruction: str, done: Done, key: str = "") -> bool:
        """Queues one audit without waiting; False when there is no worker or its queue
        is full (`overflowed` counts those): the caller audits inline."""
        writer = self._writer
        if writer is None:
            return False
        if writer.transport.get_write_buffer_size() >= self.MAX_QUEUED_BYTES:
            self.overflowed += 1
            return False
        slim = {
            "id": call.id,
            "name": call.name,
            "args": action_arguments(call.args or {}),
            "api": call.api,
        }
        number = next(self._numbers)
        self._pending[number] = (key, done)
        writer.write(frame([number, slim, instruction]))
        if len(self._pending) >= self.MAX_UNSETTLED and not self._syncs:
            self._send_sync()
        return True

    async def sync(self) -> None:
        """Returns once every audit submitted so far is done (and its findings, if
        any, handed over)."""
        if self._writer is None or not self._pending:
            return
        await self._send_sync()

    async def refresh_stats(self, timeout: float = 1.0) -> dict[str, float]:
        """Asks the worker for its totals (a sync) and waits for them at most `timeout`
        seconds: a busy worker gives the ones of its last answer."""
        if self._writer is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._send_sync()), timeout)
        return dict(self.stats)

    def reclaim(self, key: str) -> int:
        """Takes back the audits of `key` the worker has not answered: each is handed
        back (None), so its caller audits it here. Answers that come later for them
        are ignored. Returns how many."""
        numbers = [n for n, (k, _) in self._pending.items() if k == key]
        for number in numbers:
            self._pending.pop(number)[1](None, 0.0)
        self.reclaimed += len(numbers)
        return len(numbers)

    def _send_sync(self) -> asyncio.Future[None]:
        assert self._loop is not None and self._writer is not None
        number = next(self._numbers)
        future = self._syncs[number] = self._loop.create_future()
        self._writer.write(frame([number, None, None]))  # never refused: 30 bytes
        return future

    async def _read(self, reader: asyncio.StreamReader) -> None:
        """Findings and sync answers, as the worker sends them; the worker's end (EOF,
        a broken message) hands every audit still waiting back to be run here."""
        try:
            while True:
                head = await reader.readexactly(HEADER.size)
                body = await reader.readexactly(HEADER.unpack(head)[0])
                number, found, latency_us = wire.loads(body)
                if found is None:
                    if isinstance(latency_us, list) and len(latency_us) == 3:
                        done, spent, cached = latency_us
                        self.stats = {
                            "audits_done": int(done),
                            "audit_us": float(spent),
                            "audits_cached": int(cached),
                        }
                    self._synced(number)
                    continue
                entry = self._pending.pop(number, None)
                if entry is not None:
                    entry[1]([Violation(str(r), str(d)) for r, d in found], float(latency_us))
        except (asyncio.IncompleteReadError, OSError, ValueError, TypeError):
            pass
        self._reading = None  # ending: `stop` must not cancel this task
        self.stop()

    def _synced(self, number: int) -> None:
        """Every audit sent before sync `number` is done: those not answered found
        nothing."""
        settled = [n for n in self._pending if n < number]
        for n in settled:
            self._pending.pop(n)[1]([], 0.0)
        future = self._syncs.pop(number, None)
        if future is not None and not future.done():
            future.set_result(None)

    def stop(self) -> None:
        """Stops the worker; every audit still waiting is handed back (None), so its
        caller audits it here."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None
        writer.close()
        if self._process is not None:
            # Killed, not waited for: what it still had is handed back below, and a
            # wait for a busy (or stopped) worker would hold the loop.
            self._process.kill()
            self._process.join(timeout=5)
        pending, self._pending = self._pending, {}
        for _, done in pending.values():
            done(None, 0.0)
        syncs, self._syncs = self._syncs, {}
        for future in syncs.values():
            if not future.done():
                future.set_result(None)


class Auditor:
    """The proxy's audit step: sends the delivered calls to the worker; findings come
    back on the loop and mark the session. `hold` and `release` count an audit as work
    still running for its session, so closing it waits for the verdict. Without a
    worker the audit runs inline."""

    def __init__(
        self,
        guard: Guard,
        worker: AuditWorker,
        hold: Callable[[str], None],
        release: Callable[[str], None],
    ) -> None:
        self.guard = guard
        self.worker = worker
        self.hold = hold
        self.release = release

    def __call__(self, session: Session, decisions: list[Decision], request_id: str) -> None:
        targets = self.guard.audit_targets(session, decisions)
        if not targets:
            return
        worker = self.worker
        if not worker.alive or not isinstance(session.scanner, AtifScanRule):
            self.guard.audit(session, targets, request_id)
            return
        session_id = session.context.session_id
        for decision in targets:

            def done(
                found: list[Violation] | None, latency_us: float, decision: Decision = decision
            ) -> None:
                try:
                    if found is None:  # the worker died or a close took it back: audit here
                        self.guard.audit(session, [decision], request_id)
                    else:
                        self.guard.apply_audit(session, decision, found, latency_us, request_id)
                finally:
                    self.release(session_id)

            self.hold(session_id)
            # False: the worker's queue is full (counted) or it just died; never skipped
            if not worker.submit(decision.call, session.scanner.instruction, done, session_id):
                self.release(session_id)
                self.guard.audit(session, [decision], request_id)
