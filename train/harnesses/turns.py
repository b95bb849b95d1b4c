"""What a rollout takes from the guard's session log: its turns, model calls, tool calls.

The guard writes one exchange per model request (`exchanges.jsonl`, train/guard/log.py)
with the upstream's token ids and logprobs, asked for on the policy's behalf; those are
the only trustworthy record of what the policy generated (a harness may re-render or
truncate text), so turns are built from them and from nothing the harness reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from train.rollout.contract import Turn


class SessionRecord:
    """The parsed exchanges and verdict of one guard session."""

    def __init__(self, exchanges: list[dict[str, Any]], verdict: dict[str, Any] | None) -> None:
        self.exchanges = exchanges
        self.verdict = verdict or {}

    @classmethod
    def read(cls, log_dir: Path, session_id: str) -> SessionRecord:
        folder = Path(log_dir) / session_id
        exchanges = []
        path = folder / "exchanges.jsonl"
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut by a crash: the guard writes whole lines only
                if isinstance(record, dict):
                    exchanges.append(record)
        verdict_path = folder / "verdict.json"
        verdict = json.loads(verdict_path.read_text()) if verdict_path.is_file() else None
        return cls(exchanges, verdict)

    @property
    def blocked(self) -> bool:
        return bool(self.verdict.get("blocked"))

    @property
    def blocked_calls(self) -> int:
        value = self.verdict.get("blocked_calls", 0)
        return value if isinstance(value, int) and value >= 0 else 0

    @property
    def after_response_failures(self) -> int:
        """Exchange lines or audits the guard failed to write or run for this session
        (train.guard.relay): its turns or its verdict are then incomplete."""
        value = self.verdict.get("after_response_failures", 0)
        return value if isinstance(value, int) and value >= 0 else 0

    @property
    def model_calls(self) -> int:
        return len(self.exchanges)

    @property
    def answered_calls(self) -> int:
        return sum(1 for r in self.exchanges if r.get("status") == 200)

    def upstream_errors(self) -> list[int]:
        """HTTP statuses of calls the server (or the guard's link to it) failed: 5xx.
        A 4xx (a prompt past the context, say) is the policy's own doing and counts."""
        return [s for r in self.exchanges if isinstance(s := r.get("status"), int) and s >= 500]

    def turns(self) -> list[Turn]:
        """One turn per answered request whose token ids and logprobs line up (none when
        the guard was not asked to request them: `GuardOptions.request_tokens`)."""
        turns = []
        for record in self.exchanges:
            prompt = record.get("prompt_token_ids")
            completion = record.get("completion_token_ids")
            logprobs = record.get("logprobs")
            if record.get("status") != 200 or not prompt or not completion or not logprobs:
                continue
            if len(logprobs) != len(completion) or any(v is None for v in logprobs):
                continue
            turns.append(
                Turn(
                    prompt_token_ids=prompt,
                    completion_token_ids=completion,
                    completion_logprobs=[float(v) for v in logprobs],
                    model=str(record.get("upstream_model") or record.get("model") or ""),
                )
            )
        return turns

    def delivered_tool_calls(self) -> int:
        """Tool calls the model made that reached the harness (blocked ones removed):
        the count for a harness whose output does not say what it executed."""
        total = 0
        for record in self.exchanges:
            response = record.get("response")
            if not isinstance(response, dict):
                continue
            for choice in response.get("choices") or []:
                if not isinstance(choice, dict):
                    continue
                message = choice.get("message")
                calls = (message or {}).get("tool_calls") if isinstance(message, dict) else None
                if calls is None:
                    calls = choice.get("tool_calls")
                total += len(calls) if isinstance(calls, list) else 0
            blocked = record.get("blocked_calls")
            total -= len(blocked) if isinstance(blocked, list) else 0
        return max(total, 0)
