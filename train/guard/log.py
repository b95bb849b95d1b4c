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
for in-flight requests, so after a close every exchange is on disk. Lines are appended
with one write each (line-buffered), so a crash loses at most the line being written;
the verdict is replaced atomically.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

from train.guard import fast

MAX_ARGUMENT_CHARS = 8192


class SessionLog:
    def __init__(self, root: Path, session_id: str) -> None:
        self.dir = Path(root) / session_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.session_id = session_id
        self._decisions: IO[str] | None = None
        self._exchanges: IO[str] | None = None

    def _file(self, name: str) -> IO[str]:
        return (self.dir / name).open("a", encoding="utf-8", buffering=1)

    def decision(self, record: dict[str, Any]) -> None:
        if self._decisions is None:
            self._decisions = self._file("decisions.jsonl")
        args = record.get("arguments")
        if isinstance(args, str) and len(args) > MAX_ARGUMENT_CHARS:
            record = {**record, "arguments": args[:MAX_ARGUMENT_CHARS], "truncated": True}
        self._decisions.write(
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
        if self._exchanges is None:
            self._exchanges = self._file("exchanges.jsonl")
        head = fast.dumps({"ts": time.time(), "session": self.session_id, **fields})
        request_text = request_raw.decode("utf-8", errors="replace").strip()
        if not request_is_json or not request_text:
            request_text = json.dumps(request_text)
        elif "\n" in request_text or "\r" in request_text:
            # JSON strings cannot hold raw newlines: these are whitespace between tokens.
            request_text = request_text.replace("\r", " ").replace("\n", " ")
        body = fast.dumps(response)
        self._exchanges.write(f'{head[:-1]}, "request": {request_text}, "response": {body}}}\n')

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
        tmp = self.dir / f".verdict.json.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
        tmp.replace(self.dir / "verdict.json")

    def close(self) -> None:
        for handle in (self._decisions, self._exchanges):
            if handle is not None:
                handle.close()
        self._decisions = self._exchanges = None


def read_verdict(log_dir: Path, session_id: str) -> dict[str, Any] | None:
    path = Path(log_dir) / session_id / "verdict.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())
