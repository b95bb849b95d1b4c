"""After-response jobs (the exchange line, the atif-scan audit) that fail are counted
where the trainer and the operator look, never dropped in silence: `/guard/health`, the
session's status and verdict, and the session's next exchange line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
import requests

from tests.guard.replay import ReplayUpstream
from tests.guard.upstream import OPENAI_TOOLS
from train.guard import GuardOptions, GuardServer
from train.guard.log import SessionLog

FRAME_READ = "python3 -c 'import sys; print(sys._getframe(1).f_locals)'"
"""Allowed on the hot path, flagged only by the audit that runs after the response."""


def _fail_first_exchange(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The exchange log writer raises on its first line (a full disk), then works."""
    real: Callable[..., None] = SessionLog.exchange
    calls: list[int] = []

    def exchange(self: SessionLog, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        real(self, *args, **kwargs)

    monkeypatch.setattr(SessionLog, "exchange", exchange)
    return calls


def test_a_failed_exchange_line_is_counted_and_does_not_drop_the_audit(
    replay: ReplayUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fail_first_exchange(monkeypatch)
    server = GuardServer(
        GuardOptions(upstream=replay.base_url, port=0, log_dir=tmp_path, audit_worker=False)
    )
    server.start_background()
    try:
        client = openai.OpenAI(
            base_url=f"{server.base_url}/s/a/v1",
            api_key="x",
            max_retries=0,
            default_headers={"x-replay": "openai_single_stream", "x-replay-command": FRAME_READ},
        )
        for _ in range(2):
            list(
                client.chat.completions.create(
                    model="tiny",
                    messages=[{"role": "user", "content": "Inspect the caller."}],
                    tools=OPENAI_TOOLS,
                    stream=True,
                )
            )
        status = server.close_session("a")
        health = requests.get(
            f"{server.admin_url}/guard/health",
            headers={"authorization": f"Bearer {server.options.admin_token}"},
            timeout=10,
        ).json()
    finally:
        server.stop_background()
    assert len(calls) == 2
    assert health["after_response_failures"] == 1
    assert status is not None and status["after_response_failures"] == 1
    # Both audits ran, the first one's included although its exchange line failed.
    assert status["blocked"] is True and status["rules"] == {"atif.tamper.caller_frame_read": 2}
    verdict = json.loads((tmp_path / "a" / "verdict.json").read_text())
    assert verdict["after_response_failures"] == 1 and verdict["blocked_calls"] == 2
    (line,) = (tmp_path / "a" / "exchanges.jsonl").read_text().splitlines()
    assert json.loads(line)["after_response_failures"] == 1  # the gap before it, shown


def test_a_healthy_guard_reports_zero_failures(guard_server: GuardServer) -> None:
    health = requests.get(
        f"{guard_server.admin_url}/guard/health",
        headers={"authorization": f"Bearer {guard_server.options.admin_token}"},
        timeout=10,
    ).json()
    assert health["after_response_failures"] == 0


def test_an_exchange_line_that_cannot_be_written_raises_while_decisions_go_on(
    tmp_path: Path,
) -> None:
    """The writer's own failure (the folder cannot be made) reaches the after-response
    job as an error to count; a decision line, written on the response's path, is
    printed and kept for the next try instead."""
    blocker = tmp_path / "root"
    blocker.write_text("a file where the log folder should be")
    log = SessionLog(blocker, "s")
    with pytest.raises(OSError, match="exchange line not written"):
        log.exchange({"status": 200}, b"{}", {"choices": []})
    log.decision({"n": 0})  # no raise
    blocker.unlink()
    log.decision({"n": 1})
    assert len((blocker / "s" / "decisions.jsonl").read_text().splitlines()) == 2
    log.close()
