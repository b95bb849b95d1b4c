"""Work moved off the proxy's event loop still happens, in order, before a close returns:
the log writer thread and the atif-scan audit worker process."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import openai
import pytest

from tests.guard.replay import ReplayUpstream
from tests.guard.upstream import OPENAI_TOOLS
from train.guard import GuardOptions, GuardServer
from train.guard.audit_worker import AuditWorker
from train.guard.facts import ToolCall, Violation
from train.guard.log import SessionLog
from train.guard.writer import LogWriter

FRAME_READ = "python3 -c 'import sys; print(sys._getframe(1).f_locals)'"
"""A call only atif-scan catches: allowed on the hot path, flagged by the audit."""


@pytest.mark.parametrize("worker", [True, False])
def test_audit_after_the_response_marks_the_session_before_close_returns(
    replay: ReplayUpstream, tmp_path: Path, worker: bool
) -> None:
    server = GuardServer(
        GuardOptions(upstream=replay.base_url, port=0, log_dir=tmp_path, audit_worker=worker)
    )
    server.start_background()
    deadline = time.monotonic() + 60
    while worker and not server.auditor.worker.alive and time.monotonic() < deadline:
        time.sleep(0.05)  # the worker starts off the loop; until then audits run inline
    try:
        client = openai.OpenAI(
            base_url=f"{server.base_url}/s/a/v1",
            api_key="x",
            max_retries=0,
            default_headers={"x-replay": "openai_single_stream", "x-replay-command": FRAME_READ},
        )
        calls = []
        for chunk in client.chat.completions.create(
            model="tiny",
            messages=[{"role": "user", "content": "Inspect the caller."}],
            tools=OPENAI_TOOLS,
            stream=True,
        ):
            for choice in chunk.choices:
                calls += [c.function.arguments for c in choice.delta.tool_calls or []]
        assert FRAME_READ in "".join(c or "" for c in calls)  # delivered, not blocked
        assert server.auditor.worker.alive is worker
        status = server.close_session("a")
    finally:
        server.stop_background()
    assert status is not None and status["blocked"] is True
    assert status["rules"] == {"atif.tamper.caller_frame_read": 1}
    lines = [json.loads(x) for x in (tmp_path / "a" / "decisions.jsonl").read_text().splitlines()]
    assert [d["verdict"] for d in lines] == ["allow", "flag"]
    verdict = json.loads((tmp_path / "a" / "verdict.json").read_text())
    assert verdict["blocked"] is True and verdict["blocked_calls"] == 1
    (exchange,) = (tmp_path / "a" / "exchanges.jsonl").read_text().splitlines()
    assert json.loads(exchange)["rewritten"] is False


def test_log_writer_keeps_order_and_its_barrier_waits(tmp_path: Path) -> None:
    writer = LogWriter()
    seen: list[int] = []
    writer.submit(lambda: seen.append(0))  # not started: runs at once
    assert seen == [0]
    writer.start()
    gate = threading.Event()
    writer.submit(gate.wait)
    for number in range(1, 50):
        writer.submit(lambda number=number: seen.append(number))
    barrier = writer.barrier()
    assert not barrier.done()  # the writer is held at the gate
    gate.set()
    barrier.result(timeout=30)
    assert seen == list(range(50))


def test_log_writer_survives_a_failing_write_and_drains_on_stop(tmp_path: Path) -> None:
    writer = LogWriter()
    writer.start()
    seen: list[str] = []

    def broken() -> None:
        (tmp_path / "missing" / "file").write_text("x")

    writer.submit(broken)
    writer.submit(lambda: seen.append("after"))
    writer.stop()
    assert seen == ["after"] and not writer.running
    writer.submit(lambda: seen.append("inline"))
    assert seen == ["after", "inline"]


def test_session_log_lines_wait_for_their_file_then_append_in_order(tmp_path: Path) -> None:
    writer = LogWriter()
    writer.start()
    gate = threading.Event()
    writer.submit(gate.wait)  # the writer is busy: the file cannot be opened yet
    log = SessionLog(tmp_path, "s", writer)
    for number in range(3):
        log.decision({"n": number})
    assert not (tmp_path / "s").exists()
    gate.set()
    writer.flush()
    log.decision({"n": 3})  # the file is open now: appended by the writer, in order
    writer.flush()
    lines = (tmp_path / "s" / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(x)["n"] for x in lines] == [0, 1, 2, 3]
    log.close()
    writer.flush()
    log.decision({"n": 4})  # after a close (a late audit finding): reopened, not lost
    writer.stop()
    lines = (tmp_path / "s" / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(x)["n"] for x in lines] == [0, 1, 2, 3, 4]


def test_a_first_line_then_a_close_behind_a_busy_writer_are_on_disk_at_the_barrier(
    tmp_path: Path,
) -> None:
    """A session's first line needs its file opened; a close and a status query asked
    right after it must find the line written (the real-vLLM close relies on it)."""
    writer = LogWriter()
    writer.start()
    gate = threading.Event()
    writer.submit(gate.wait)
    log = SessionLog(tmp_path, "s", writer)
    log.decision({"n": 0})
    log.close()
    barrier = writer.barrier()
    gate.set()
    barrier.result(timeout=30)
    lines = (tmp_path / "s" / "decisions.jsonl").read_text().splitlines()
    writer.stop()
    assert [json.loads(x)["n"] for x in lines] == [0]


def test_audits_that_find_nothing_send_no_reply_and_settle_at_a_sync() -> None:
    """The worker answers only findings (a reply per clean audit would wake the loop
    for nothing); a sync settles every clean audit sent before it, in order."""

    async def scenario() -> tuple[list[str], int, int, int]:
        worker = AuditWorker()
        assert await worker.start()
        told: list[str] = []

        def done(tag: str) -> Callable[[list[Violation] | None, float], None]:
            def record(found: list[Violation] | None, _us: float) -> None:
                told.append(f"{tag}:{'none' if found is None else len(found)}")

            return record

        clean = ToolCall("c1", "bash", "", {"command": "ls -la"}, "openai")
        bad = ToolCall("c2", "bash", "", {"command": FRAME_READ}, "openai")
        try:
            for tag in ("a", "b"):
                worker.submit(clean, "", done(tag))
            worker.submit(bad, "", done("flagged"))
            deadline = asyncio.get_running_loop().time() + 60
            while "flagged:1" not in told and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            unsettled_before_sync = len(worker._pending)
            await worker.sync()
            return told, unsettled_before_sync, len(worker._pending), len(worker._syncs)
        finally:
            worker.stop()

    told, before, after, syncs = asyncio.run(scenario())
    assert told[0] == "flagged:1"  # a finding comes back on its own, before any sync
    assert before == 2  # the two clean audits: done, but not answered
    assert sorted(told[1:]) == ["a:0", "b:0"] and after == 0 and syncs == 0
