"""The append-only record of finished attempts that makes an evaluation resumable.

One JSON line per finished attempt, keyed by checkpoint, task and attempt index. A run
reads the ledger first and skips every key already in it, so a killed evaluation,
rerun, does only what is left and its report (built from the ledger alone) has the same
bytes as an uninterrupted run's. A line cut short by a kill is ignored and its attempt
runs again; the first line for a key wins.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from train.rollout.contract import Rollout, RolloutStatus

AttemptKey = tuple[str, str, int]
"""(checkpoint label, task id, attempt index)."""


class Attempt(BaseModel):
    """One finished attempt, as much of its rollout as the report needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checkpoint: str = Field(min_length=1, description="Checkpoint label; 'base' for the model.")
    task_id: str = Field(min_length=1)
    attempt: int = Field(ge=0)
    model: str = Field(description="Name the server answered under (adapter or base).")
    status: RolloutStatus
    verifier_score: float | None = Field(default=None, ge=0.0, le=1.0)
    tool_calls: int = Field(default=0, ge=0)
    blocked_calls: int = Field(default=0, ge=0)
    error: str | None = None
    wall_s: float = Field(default=0.0, ge=0.0, description="Not in the report: varies by run.")

    @property
    def key(self) -> AttemptKey:
        return (self.checkpoint, self.task_id, self.attempt)

    @property
    def solved(self) -> bool:
        """Fully correct and clean: a blocked call voids a pass, as it voids the reward."""
        return (
            self.status == "scored"
            and self.verifier_score is not None
            and self.verifier_score >= 1.0
            and self.blocked_calls == 0
        )

    @classmethod
    def from_rollout(cls, checkpoint: str, rollout: Rollout) -> Attempt:
        request = rollout.request
        return cls(
            checkpoint=checkpoint,
            task_id=request.task_id,
            attempt=request.attempt,
            model=request.adapter,
            status=rollout.status,
            verifier_score=rollout.verifier_score if rollout.status == "scored" else None,
            tool_calls=rollout.tool_calls,
            blocked_calls=rollout.blocked_calls,
            error=rollout.error,
            wall_s=round(rollout.wall_s, 3),
        )


class Ledger:
    """Thread-safe: attempts finish on worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.skipped_lines = 0
        self._lock = threading.Lock()

    def load(self) -> dict[AttemptKey, Attempt]:
        found: dict[AttemptKey, Attempt] = {}
        self.skipped_lines = 0
        if not self.path.exists():
            return found
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    attempt = Attempt.model_validate_json(line)
                except ValidationError:
                    self.skipped_lines += 1
                    continue
                found.setdefault(attempt.key, attempt)
        return found

    def append(self, attempt: Attempt) -> None:
        line = json.dumps(attempt.model_dump(mode="json"), sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                if handle.tell() and not _ends_with_newline(self.path):
                    handle.write(b"\n")  # a kill cut the last line: start a fresh one
                handle.write(line.encode())
                handle.flush()
                os.fsync(handle.fileno())


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
