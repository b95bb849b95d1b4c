"""The hand-off of atif-scan audits to their worker never holds the proxy's event loop.

The worker is stopped with SIGSTOP (as a busy machine stops a `nice 10` process): the
socket to it fills, and the loop must go on answering every session; the audits queued
meanwhile are all accounted for, by the worker once it resumes, or on the loop when a
session closes first. A watchdog resumes the worker after `WATCHDOG_S`, so a loop that
does block (the old blocking `send`) fails the time bounds below instead of hanging.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import openai
import pytest

from tests.guard.replay import ReplayUpstream
from tests.guard.upstream import OPENAI_TOOLS
from train.guard import GuardOptions, GuardServer
from train.guard.audit_worker import AuditWorker
from train.guard.facts import ToolCall, Violation

FRAME_READ = "python3 -c 'import sys; print(sys._getframe(1).f_locals)'"
"""A call only atif-scan catches: allowed on the hot path, flagged by the audit."""
PADDED = "echo " + "a" * 7000
"""A clean call of about 7 kB: some thirty of them fill the socket to a stopped worker."""
WATCHDOG_S = 20.0
BOUND_S = 2.0
"""A response or a close while the worker is stopped (one takes 10-80 ms here)."""


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The worker stopped, resumed on leaving or by the watchdog, whichever is first."""
    os.kill(pid, signal.SIGSTOP)
    watchdog = threading.Timer(WATCHDOG_S, os.kill, (pid, signal.SIGCONT))
    watchdog.start()
    try:
        yield
    finally:
        watchdog.cancel()
        with suppress(ProcessLookupError):  # a worker that died meanwhile
            os.kill(pid, signal.SIGCONT)


def test_a_stopped_worker_never_holds_the_loop_and_its_audits_settle_after() -> None:
    """Submitting 120 audits of 7 kB to a stopped worker takes no loop time worth the
    name (the old blocking send stopped the loop until the worker ran again); once it
    resumes every audit is settled, the findings among them included."""

    async def scenario() -> tuple[float, float, list[str], int]:
        worker = AuditWorker()
        assert await worker.start()
        assert worker.pid is not None
        told: list[str] = []

        def done(tag: str) -> Callable[[list[Violation] | None, float], None]:
            def record(found: list[Violation] | None, _us: float) -> None:
                told.append(f"{tag}:{'none' if found is None else len(found)}")

            return record

        clean = ToolCall("c", "bash", "", {"command": PADDED}, "openai")
        bad = ToolCall("b", "bash", "", {"command": FRAME_READ}, "openai")
        loop = asyncio.get_running_loop()
        try:
            with stopped(worker.pid):
                start = loop.time()
                for number in range(120):
                    worker.submit(clean, "", done(f"clean{number}"))
                worker.submit(bad, "", done("flagged"))
                submitted = loop.time() - start
                assert worker.queued_bytes > 0  # the socket is full: the rest waits here
                tick = loop.time()
                await asyncio.sleep(0.01)  # the loop still turns
                turned = loop.time() - tick
                assert told == []
            deadline = loop.time() + 60
            while "flagged:1" not in told and loop.time() < deadline:
                await asyncio.sleep(0.01)
            await worker.sync()
            return submitted, turned, told, len(worker._pending)
        finally:
            worker.stop()

    submitted, turned, told, pending = asyncio.run(scenario())
    assert submitted < BOUND_S and turned < BOUND_S
    assert sorted(told) == sorted([f"clean{n}:0" for n in range(120)] + ["flagged:1"])
    assert pending == 0


def test_a_full_queue_audits_on_the_loop_and_counts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `MAX_QUEUED_BYTES` an audit is refused (`submit` False, counted), so the
    caller audits it at once: none dropped, memory bounded."""
    monkeypatch.setattr(AuditWorker, "MAX_QUEUED_BYTES", 1)

    async def scenario() -> tuple[list[bool], int]:
        worker = AuditWorker()
        assert await worker.start()
        assert worker.pid is not None
        call = ToolCall("c", "bash", "", {"command": PADDED}, "openai")
        accepted = []
        try:
            with stopped(worker.pid):
                for _ in range(80):
                    accepted.append(worker.submit(call, "", lambda found, us: None))
            return accepted, worker.overflowed
        finally:
            worker.stop()

    accepted, overflowed = asyncio.run(scenario())
    assert accepted[0] is True and accepted[-1] is False
    assert overflowed == accepted.count(False) > 0


def _ask(server: GuardServer, session: str, command: str) -> float:
    """One streamed response from the replay upstream with `command` in its call;
    returns how long it took (the call must reach the client: allowed, not blocked)."""
    client = openai.OpenAI(
        base_url=f"{server.base_url}/s/{session}/v1",
        api_key="x",
        max_retries=0,
        timeout=WATCHDOG_S * 2,
        default_headers={
            "x-replay": "openai_single_stream",
            "x-replay-command": command,
            "x-replay-chunk": "4096",
        },
    )
    start = time.monotonic()
    arguments = ""
    for chunk in client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "Run it."}],
        tools=OPENAI_TOOLS,
        stream=True,
    ):
        for choice in chunk.choices:
            arguments += "".join(c.function.arguments or "" for c in choice.delta.tool_calls or [])
    assert command[:40] in arguments
    return time.monotonic() - start


def test_sessions_answer_while_the_worker_is_stopped_and_no_audit_is_lost(
    replay: ReplayUpstream, tmp_path: Path
) -> None:
    """Through the real server: with the worker stopped, 60 responses with 7 kB calls
    from four sessions (enough to fill the socket) each complete within the bound; a
    session closed while the worker is still stopped gets its whole verdict (its
    audits taken back and run on the loop); the others settle once it resumes."""
    server = GuardServer(
        GuardOptions(upstream=replay.base_url, port=0, log_dir=tmp_path, audit_wait_s=0.5)
    )
    server.start_background()
    deadline = time.monotonic() + 60
    while not server.auditor.worker.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    worker = server.auditor.worker
    assert worker.alive and worker.pid is not None
    sessions = [f"s{n}" for n in range(4)]
    try:
        with stopped(worker.pid):
            took = [_ask(server, sessions[n % 4], PADDED) for n in range(60)]
            took.append(_ask(server, "s0", FRAME_READ))
            start = time.monotonic()
            first = server.close_session("s0")
            closing = time.monotonic() - start
            # read now: closing the others below may take theirs back too when the resumed
            # worker has not caught up within audit_wait_s (a loaded machine: 31 seen)
            reclaimed_by_s0 = worker.reclaimed
            assert worker.queued_bytes > 0  # the worker really was behind
            assert worker.alive  # a full socket is no failure (the old one killed it)
        rest = [server.close_session(s) for s in sessions[1:]]
    finally:
        server.stop_background()
    assert max(took) < BOUND_S, f"slowest response {max(took):.2f} s"
    assert closing < BOUND_S, f"close took {closing:.2f} s"
    assert first is not None and first["blocked"] is True
    assert first["rules"] == {"atif.tamper.caller_frame_read": 1}
    assert reclaimed_by_s0 == 16  # s0's 15 clean audits and the flagged one
    for status in rest:
        assert status is not None and status["blocked"] is False
    for session in sessions:
        verdict = json.loads((tmp_path / session / "verdict.json").read_text())
        assert verdict["decisions"] == (16 if session == "s0" else 15)
    # the worker's own answer for s0's flagged call came after the close took it back:
    # ignored, so the finding is counted once
    verdict = json.loads((tmp_path / "s0" / "verdict.json").read_text())
    assert verdict["rules"] == {"atif.tamper.caller_frame_read": 1}
    lines = (tmp_path / "s0" / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(x)["verdict"] for x in lines].count("flag") == 1


def test_a_worker_killed_with_audits_queued_hands_them_all_back() -> None:
    """SIGKILL with audits queued and unanswered: the stream's end is seen on the loop,
    every waiting audit is handed back (None: its caller audits it here), none twice."""

    async def scenario() -> tuple[list[str], bool]:
        worker = AuditWorker()
        assert await worker.start()
        assert worker.pid is not None
        told: list[str] = []
        call = ToolCall("c", "bash", "", {"command": PADDED}, "openai")
        try:
            os.kill(worker.pid, signal.SIGSTOP)
            for number in range(50):
                worker.submit(call, "", lambda found, us, n=number: told.append(f"{n}:{found}"))
            os.kill(worker.pid, signal.SIGKILL)
            deadline = asyncio.get_running_loop().time() + 30
            while worker.alive and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            return told, worker.alive
        finally:
            worker.stop()

    told, alive = asyncio.run(scenario())
    assert alive is False
    assert sorted(told) == sorted(f"{n}:None" for n in range(50))
