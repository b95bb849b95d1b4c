"""atif-scan audits in a worker process, so they never hold the proxy's event loop.

An audit runs after its response has gone out, but on the loop it still cost 0.2-1 ms
per call (most of it atif-scan building its trace), time during which every other
response in flight waits. The audit needs only the call and the task's instruction, so
it runs in a worker process. The loop talks to it over a pipe it watches itself
(`add_reader`): no helper thread in the proxy, hence no GIL hand-over in the middle of
a response (a `ProcessPoolExecutor` wakes two threads per call and cost more than the
scan). Findings come back to the loop, which records them on the session.

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
import time
from collections.abc import Callable
from functools import lru_cache
from multiprocessing.connection import Connection
from typing import Any

from train.guard.atif_rules import AtifScanRule, action_arguments, warm
from train.guard.checker import Decision, Guard
from train.guard.facts import CallFacts, ToolCall, Violation
from train.guard.rules import SessionView
from train.guard.session import Session

VIEW = SessionView("/", (), (), (), set(), (), ())
"""atif-scan reads only the call and the instruction, never the session's view."""
Done = Callable[[list[Violation] | None, float], None]
NICENESS = 10


@lru_cache(maxsize=64)
def _rule(instruction: str) -> AtifScanRule:
    return AtifScanRule(instruction)


def _serve_warm(conn: Connection) -> None:
    """Runs at a lower priority: an audit is never on a response's critical path, so
    on a busy machine the proxy, the upstream and the harness go first."""
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    warm()
    serve(conn)


def serve(conn: Connection) -> None:
    """The worker: (number, call, instruction) in; (number, findings, µs) out only when
    there are findings, since most audits find nothing and a reply for each would wake
    the proxy's loop for nothing. (number, None, None) in is a sync: it is answered
    (number, None, 0.0) once every audit sent before it is done (the pipe keeps order)."""
    while True:
        try:
            number, call, instruction = conn.recv()
        except (EOFError, OSError):
            return
        if call is None:
            reply: tuple[int, list[Violation] | None, float] = (number, None, 0.0)
        else:
            start = time.perf_counter()
            found = _rule(instruction)(call, CallFacts(), VIEW)
            if not found:
                continue
            reply = (number, found, (time.perf_counter() - start) * 1e6)
        try:
            conn.send(reply)
        except OSError:  # the proxy stopped while this audit ran
            return


def _spawn() -> tuple[Connection, Any] | None:
    try:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        parent, child = context.Pipe()
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
    asks for one) or once `MAX_UNSETTLED` of them are waiting."""

    MAX_UNSETTLED = 512

    def __init__(self) -> None:
        self._conn: Connection | None = None
        self._process: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[int, Done] = {}
        self._syncs: dict[int, asyncio.Future[None]] = {}
        self._numbers = itertools.count()

    @property
    def alive(self) -> bool:
        return self._conn is not None

    async def start(self) -> bool:
        """Starts the worker off the loop (the first fork server takes a second or two
        to import the guard); audits before it is up run inline."""
        loop = asyncio.get_running_loop()
        started = await loop.run_in_executor(None, _spawn)
        if started is None:
            return False
        parent, process = started
        self._conn, self._process, self._loop = parent, process, loop
        loop.add_reader(parent.fileno(), self._readable)
        return True

    def submit(self, call: ToolCall, instruction: str, done: Done) -> bool:
        """Queues one audit; False when there is no worker (the caller audits inline)."""
        if self._conn is None:
            return False
        slim = ToolCall(call.id, call.name, "", action_arguments(call.args or {}), call.api)
        number = next(self._numbers)
        self._pending[number] = done
        try:
            self._conn.send((number, slim, instruction))
        except (OSError, ValueError):
            self._fail()
            return True  # `done` was told (None): the caller's callback audits inline
        if len(self._pending) >= self.MAX_UNSETTLED and not self._syncs:
            self._send_sync()
        return True

    async def sync(self) -> None:
        """Returns once every audit submitted so far is done (and its findings, if
        any, handed over)."""
        if self._conn is None or not self._pending:
            return
        await self._send_sync()

    def _send_sync(self) -> asyncio.Future[None]:
        assert self._loop is not None and self._conn is not None
        number = next(self._numbers)
        future = self._syncs[number] = self._loop.create_future()
        try:
            self._conn.send((number, None, None))
        except (OSError, ValueError):
            self._fail()
        return future

    def _readable(self) -> None:
        conn = self._conn
        try:
            while conn is not None and conn.poll():
                number, found, latency_us = conn.recv()
                if found is None:
                    self._synced(number)
                    continue
                done = self._pending.pop(number, None)
                if done is not None:
                    done(found, latency_us)
        except (EOFError, OSError):
            self._fail()

    def _synced(self, number: int) -> None:
        """Every audit sent before sync `number` is done: those not answered found
        nothing."""
        settled = [n for n in self._pending if n < number]
        for n in settled:
            self._pending.pop(n)([], 0.0)
        future = self._syncs.pop(number, None)
        if future is not None and not future.done():
            future.set_result(None)

    def _fail(self) -> None:
        """The worker is gone: every audit still waiting is handed back (None)."""
        self.stop()
        pending, self._pending = self._pending, {}
        for done in pending.values():
            done(None, 0.0)
        syncs, self._syncs = self._syncs, {}
        for future in syncs.values():
            if not future.done():
                future.set_result(None)

    def stop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(conn.fileno())
        conn.close()
        if self._process is not None:
            self._process.join(timeout=5)
            if self._process.is_alive():
                self._process.kill()


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
                    if found is None:  # the worker died: audit here, never skip
                        self.guard.audit(session, [decision], request_id)
                    else:
                        self.guard.apply_audit(session, decision, found, latency_us, request_id)
                finally:
                    self.release(session_id)

            self.hold(session_id)
            if not worker.submit(decision.call, session.scanner.instruction, done):
                self.release(session_id)
                self.guard.audit(session, [decision], request_id)
