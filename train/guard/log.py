"""Per-session files the trainer reads: decisions, exchanges and the session verdict.

`<log_dir>/<session>/decisions.jsonl`  one line per checked tool call:
    {ts, session, request_id, call_id, tool, arguments, verdict, rules, details,
     latency_us}
`<log_dir>/<session>/exchanges.jsonl`  one line per model request/response pair:
    {ts, session, request_id, api, stream, status, model, upstream_model, rewritten,
     blocked_calls, after_response_failures, prompt_token_ids, completion_token_ids,
     logprobs, finish_reason, request, response}; `response` is the upstream's answer
     (streams reassembled), before any rewrite, so samples are built from what the
     policy actually generated; `after_response_failures` counts the session's
     exchange lines and audits that failed before this line (train.guard.relay).
`<log_dir>/<session>/verdict.json`  {session_id, blocked, reward_override, rules,
    decisions, blocked_calls, after_response_failures}: `blocked` true means the
    episode's reward must be 0 (`blocked_calls` counts calls blocked, or flagged by the
    atif-scan audit). It is written when the session is registered, the moment it
    first turns blocked, and when it is closed (then with final counts).

Decision lines carry verdict `allow`, `block`, or `flag` (an atif-scan audit finding on
a call already delivered). An exchange is written just after its response's last byte;
closing the session (`DELETE /guard/sessions/<id>`, `GuardServer.close_session`) waits
for in-flight requests, so after a close every exchange is on disk. Each line is
appended with one `os.write` (O_APPEND), so a crash loses at most the line being
written; the verdict is replaced atomically. All of it runs on the caller's thread (the
proxy's event loop), in order: a line is a microsecond-scale append to the page cache
(the profile in docs/guard.md, "Where the time goes", puts every file write, verdicts
included, under a millisecond), so there is no writer thread to hand lines to and no barrier to
wait on: what a status or close reports is already on disk.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from repo2rlenv import ui
from train.guard import wire

MAX_ARGUMENT_CHARS = 8192


class _Lines:
    """One append-only JSONL file, opened (with its folder) at its first line. Every
    line is one `os.write` on an O_APPEND descriptor. If the folder cannot be made or
    the file opened, the lines wait in memory for the next line's try. `append` returns
    the error of a line not on disk now (None when written); the caller decides whether
    that is printed (a decision line, written on the response's path) or raised (an
    exchange line, written after the response, where AfterResponse counts it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._waiting: list[bytes] = []

    def append(self, line: str) -> OSError | None:
        data = line.encode()
        if self._fd is None:
            self._waiting.append(data)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:  # a full or vanished log folder must not stop the proxy
                return exc
            data, self._waiting = b"".join(self._waiting), []
        try:
            os.write(self._fd, data)
        except OSError as exc:  # a full disk must not take the proxy down
            return exc
        return None

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class SessionLog:
    """A session's three files, written on the caller's thread as each line comes."""

    def __init__(self, root: Path, session_id: str) -> None:
        self.dir = Path(root) / session_id
        self.session_id = session_id
        self._decisions = _Lines(self.dir / "decisions.jsonl")
        self._exchanges = _Lines(self.dir / "exchanges.jsonl")

    def decision(self, record: dict[str, Any]) -> None:
        args = record.get("arguments")
        if isinstance(args, str) and len(args) > MAX_ARGUMENT_CHARS:
            record = {**record, "arguments": args[:MAX_ARGUMENT_CHARS], "truncated": True}
        failed = self._decisions.append(
            wire.dumps({"ts": time.time(), "session": self.session_id, **record}) + "\n"
        )
        if failed is not None:
            ui.error(f"guard log {self._decisions.path}: {failed}")

    def exchange(
        self,
        fields: dict[str, Any],
        request_raw: bytes,
        response: Any,
        request_is_json: bool = True,
    ) -> None:
        """`request_raw` is written as it came when it parsed as JSON: re-encoding a
        long conversation on every turn would cost more than the check itself."""
        head = wire.dumps({"ts": time.time(), "session": self.session_id, **fields})
        request_text = request_raw.decode("utf-8", errors="replace").strip()
        if not request_is_json or not request_text:
            request_text = json.dumps(request_text)
        elif "\n" in request_text or "\r" in request_text:
            # JSON strings cannot hold raw newlines: these are whitespace between tokens.
            request_text = request_text.replace("\r", " ").replace("\n", " ")
        body = wire.dumps(response)
        line = f'{head[:-1]}, "request": {request_text}, "response": {body}}}\n'
        failed = self._exchanges.append(line)
        if failed is not None:  # raised: the after-response job counts it
            raise OSError(f"exchange line not written to {self._exchanges.path}: {failed}")

    def verdict(
        self,
        blocked: bool,
        rules: Counter[str],
        decisions: int,
        blocked_calls: int,
        after_response_failures: int = 0,
    ) -> None:
        payload = {
            "session_id": self.session_id,
            "blocked": blocked,
            "reward_override": 0.0 if blocked else None,
            "rules": dict(sorted(rules.items())),
            "decisions": decisions,
            "blocked_calls": blocked_calls,
            "after_response_failures": after_response_failures,
        }
        # The first block writes it inside the check, on that response's path: orjson
        # and bare descriptors (for ASCII, the bytes of json.dumps(indent=2, sort_keys=True)).
        text = orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        tmp = self.dir / f".verdict.json.tmp-{os.getpid()}"
        try:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            except FileNotFoundError:  # the first write, or the folder was removed
                self.dir.mkdir(parents=True, exist_ok=True)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, text)
            finally:
                os.close(fd)
            os.replace(tmp, self.dir / "verdict.json")
        except OSError as exc:  # as for the lines: printed, the proxy goes on
            ui.error(f"guard log: {exc}")

    def close(self) -> None:
        self._decisions.close()
        self._exchanges.close()


def read_verdict(log_dir: Path, session_id: str) -> dict[str, Any] | None:
    path = Path(log_dir) / session_id / "verdict.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())
