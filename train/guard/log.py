"""Per-session files the trainer reads: decisions, exchanges and the session verdict.

`<log_dir>/<session>/decisions.jsonl`  one line per checked tool call:
    {ts, session, request_id, call_id, tool, arguments, verdict, rules, details,
     latency_us}
`<log_dir>/<session>/exchanges.jsonl`  one line per model request/response pair:
    {ts, session, request_id, api, stream, status, model, upstream_model, rewritten,
     blocked_calls, prompt_token_ids, completion_token_ids, logprobs, finish_reason,
     request, response}; `response` is the upstream's answer (streams reassembled),
     before any rewrite, so samples are built from what the policy actually generated.
`<log_dir>/<session>/verdict.json`  {session_id, blocked, reward_override, rules,
    decisions, blocked_calls}: `blocked` true means the episode's reward must be 0
    (`blocked_calls` counts calls blocked, or flagged by the atif-scan audit). It is
    written when the session is registered, the moment it first turns blocked, and
    when it is closed (then with final counts).

Decision lines carry verdict `allow`, `block`, or `flag` (an atif-scan audit finding on
a call already delivered). An exchange is written just after its response's last byte;
closing the session (`DELETE /guard/sessions/<id>`, `GuardServer.close_session`) waits
for in-flight requests, so after a close every exchange is on disk. Each line is
appended with one `os.write` (O_APPEND), so a crash loses at most the line being
written; the verdict is replaced atomically. Behind the proxy, all file work (folder,
opens, appends, verdict) runs on the guard's log-writer thread (`writer.LogWriter`),
usually a few milliseconds behind the response (the first lines of a session wait in
memory for their file); a session's status (`GET /guard/sessions/<id>`) and its close
wait for it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from train.guard import fast, ui
from train.guard.writer import LogWriter

MAX_ARGUMENT_CHARS = 8192


class _Lines:
    """One append-only JSONL file. The open (folder, file) is the writer's job; until it
    is done, lines wait in memory. Every line is one `os.write` on an O_APPEND
    descriptor, on the writer's thread while it runs: usually microseconds, but on a
    disk busy with other work a write waits for dirty pages to be flushed (hundreds of
    milliseconds, seen in the proxy's tail), and on the loop that wait would land on
    every response in flight."""

    def __init__(self, path: Path, writer: LogWriter) -> None:
        self.path = path
        self.writer = writer
        self._fd: int | None = None
        self._waiting: list[bytes] = []
        self._opening = False
        self._lock = threading.Lock()

    def append(self, line: str) -> None:
        data = line.encode()
        if not self.writer.running:
            self._append(data)
            return
        # Even an append can stall on a busy disk: it is a writer job. The open it may
        # need is asked for first, here, so both keep their place among the jobs (a
        # close or a status query queued after this line finds it on disk).
        with self._lock:
            opens = self._fd is None and not self._opening
            self._opening |= opens
        if opens:
            self.writer.submit(self._open)
        self.writer.submit(lambda: self._append(data))

    def _append(self, data: bytes) -> None:
        with self._lock:
            if self._fd is not None:
                _write(self._fd, data, self.path)
                return
            self._waiting.append(data)
            if self._opening:
                return
            self._opening = True
        self.writer.submit(self._open)

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            with self._lock:
                self._opening = False  # the next line tries again; these stay queued
            raise
        with self._lock:
            waiting, self._waiting = self._waiting, []
            if waiting:
                _write(fd, b"".join(waiting), self.path)
            self._fd, self._opening = fd, False

    def close(self) -> None:
        """Asked through the writer, so it comes after the open it may be queued behind."""
        self.writer.submit(self._close)

    def _close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _write(fd: int, data: bytes, path: Path) -> None:
    try:
        os.write(fd, data)
    except OSError as exc:  # a full disk must not take the proxy down
        ui.error(f"guard log {path}: {exc}")


class SessionLog:
    """Formats each line on the caller's thread (a snapshot) and appends it there once
    the file is open; folder, opening and replacing the verdict are `writer` jobs, in
    order: those are the calls that stall for milliseconds on a busy disk."""

    def __init__(self, root: Path, session_id: str, writer: LogWriter | None = None) -> None:
        self.dir = Path(root) / session_id
        self.session_id = session_id
        self.writer = writer or LogWriter()
        self._decisions = _Lines(self.dir / "decisions.jsonl", self.writer)
        self._exchanges = _Lines(self.dir / "exchanges.jsonl", self.writer)

    def decision(self, record: dict[str, Any]) -> None:
        args = record.get("arguments")
        if isinstance(args, str) and len(args) > MAX_ARGUMENT_CHARS:
            record = {**record, "arguments": args[:MAX_ARGUMENT_CHARS], "truncated": True}
        self._decisions.append(
            fast.dumps({"ts": time.time(), "session": self.session_id, **record}) + "\n"
        )

    def exchange(
        self,
        fields: dict[str, Any],
        request_raw: bytes,
        response: Any,
        request_is_json: bool = True,
    ) -> None:
        """`request_raw` is written as it came when it parsed as JSON: re-encoding a
        long conversation on every turn would cost more than the check itself."""
        head = fast.dumps({"ts": time.time(), "session": self.session_id, **fields})
        request_text = request_raw.decode("utf-8", errors="replace").strip()
        if not request_is_json or not request_text:
            request_text = json.dumps(request_text)
        elif "\n" in request_text or "\r" in request_text:
            # JSON strings cannot hold raw newlines: these are whitespace between tokens.
            request_text = request_text.replace("\r", " ").replace("\n", " ")
        body = fast.dumps(response)
        self._exchanges.append(f'{head[:-1]}, "request": {request_text}, "response": {body}}}\n')

    def verdict(
        self, blocked: bool, rules: Counter[str], decisions: int, blocked_calls: int
    ) -> None:
        payload = {
            "session_id": self.session_id,
            "blocked": blocked,
            "reward_override": 0.0 if blocked else None,
            "rules": dict(sorted(rules.items())),
            "decisions": decisions,
            "blocked_calls": blocked_calls,
        }
        self.writer.submit(lambda: self._replace_verdict(payload))

    def _replace_verdict(self, payload: dict[str, Any]) -> None:
        """Formatted here, on the writer's thread: a session's first block happens in
        the middle of a response."""
        text = json.dumps(payload, indent=2, sort_keys=True) + "\n"
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".verdict.json.tmp-{os.getpid()}"
        tmp.write_text(text)
        tmp.replace(self.dir / "verdict.json")

    def close(self) -> None:
        self._decisions.close()
        self._exchanges.close()


def read_verdict(log_dir: Path, session_id: str) -> dict[str, Any] | None:
    path = Path(log_dir) / session_id / "verdict.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())
