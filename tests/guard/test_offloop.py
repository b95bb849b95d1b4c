"""Work moved off the proxy's event loop still happens, in order, before a close returns:
the log writer thread and the atif-scan audit worker process."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections import Counter
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


def test_session_log_lines_are_on_disk_in_order_and_survive_a_missing_folder(
    tmp_path: Path,
) -> None:
    """Lines are written as they come (no writer thread, no barrier): each is on disk
    when `decision` returns; a folder that cannot be made keeps the lines for the next
    try; a line after a close (a late audit finding) reopens the file."""
    blocker = tmp_path / "root"
    blocker.write_text("a file where the log folder should be")
    log = SessionLog(blocker, "s")
    log.decision({"n": 0})  # the folder cannot be made: printed, kept
    blocker.unlink()
    for number in range(1, 3):
        log.decision({"n": number})
        lines = (blocker / "s" / "decisions.jsonl").read_text().splitlines()
        assert [json.loads(x)["n"] for x in lines] == list(range(number + 1))
    log.close()
    log.decision({"n": 3})
    log.verdict(False, Counter(), 4, 0)
    lines = (blocker / "s" / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(x)["n"] for x in lines] == [0, 1, 2, 3]
    assert json.loads((blocker / "s" / "verdict.json").read_text())["decisions"] == 4
    log.close()


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


def test_verdict_is_replaced_whole_and_comes_back_after_its_folder_vanishes(
    tmp_path: Path,
) -> None:
    """The verdict's folder is made when a write finds it missing (not stat'ed on every
    write): a folder removed under the session is made again by the next write. The
    bytes are those of `json.dumps(indent=2, sort_keys=True)`, which readers saw."""
    log = SessionLog(tmp_path, "s")
    log.verdict(False, Counter(), 0, 0)
    shutil.rmtree(tmp_path / "s")
    log.verdict(True, Counter({"a.rule": 2}), 2, 2)
    path = tmp_path / "s" / "verdict.json"
    payload = json.loads(path.read_text())
    assert payload["rules"] == {"a.rule": 2} and payload["reward_override"] == 0.0
    assert path.read_text() == json.dumps(payload, indent=2, sort_keys=True) + "\n"
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["verdict.json"]
