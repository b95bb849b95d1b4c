"""Failed rollouts, counted by reason, and the rule that stops a run that cannot progress.

A rollout that fails for a reason that will not go away on a retry (the task folder
cannot be read, its image does not build, the harness is missing, the model server does
not answer) fails the same way for every rollout after it. The scheduler used to retry
and hand out the next rollout forever, so a run with a wrong `--tasks` path spun for
hours without a word. The `NoProgressRule` ends such a run early and the
`FailureTracker` says why: counts by reason code with one example each, kept in
`failures.json` beside the trainer's metrics so the run's parent can show them while
the run goes on and after it stopped.

The streak that stops a run counts only *permanent* reasons and spans several tasks,
so one broken task among many (its own rollouts all fail) cannot end a run; a scored
rollout resets it. Other failures (a verifier error, a harness timeout) are counted and
shown but never stop a run: they are what a policy in training does.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from train.data.split import write_text_atomic

FAILURES = "failures.json"

PERMANENT_REASONS: tuple[str, ...] = (
    "task.unreadable",
    "task.image-build-failed",
    "context.",
    "install.",
    "harness.unknown",
    "harness.layer-build-failed",
    "harness.context-too-small",
    "harness.no-model-calls",
    "guard.unreachable",
    "guard.session-refused",
    "guard.upstream-error",
    "rollout.no-model-answer",
    "rollout.wrong-harness",
)
"""Reason codes (or prefixes ending in '.') that a retry does not cure: a task folder
that is not there, an image or harness that cannot be built, a guard or model server
that does not answer. A harness that exits before any model call, or a model that
answers no call, is how a dead server looks from a rollout."""


def reason_of(error: str | None) -> str:
    """The stable code at the head of a rollout's error (`code: detail`)."""
    if not error:
        return "rollout.failed"
    return error.split(":", 1)[0].strip() or "rollout.failed"


def is_permanent(reason: str) -> bool:
    return any(
        reason.startswith(code) if code.endswith(".") else reason == code
        for code in PERMANENT_REASONS
    )


class NoProgressRule(BaseModel):
    """When a run stops: `first_failures` permanent failures before any rollout was
    scored, or `streak_failures` in a row later; either way over at least `min_tasks`
    distinct tasks (all of them, when the run has fewer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first_failures: int = Field(default=8, ge=1)
    streak_failures: int = Field(default=32, ge=1)
    min_tasks: int = Field(default=3, ge=1)


class FailureSummary(BaseModel):
    """What `failures.json` holds: every failed attempt by reason, one example each."""

    model_config = ConfigDict(extra="forbid")

    scored: int = 0
    failed: int = 0
    counts: dict[str, int] = Field(default_factory=dict)
    examples: dict[str, str] = Field(default_factory=dict)
    stopped: str | None = Field(default=None, description="Why the run was stopped, if it was.")

    def counts_line(self) -> str:
        """`task.unreadable 12, verifier.error 1` (most frequent first)."""
        ordered = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
        return ", ".join(f"{reason} {n}" for reason, n in ordered) or "none"


EXAMPLE_CHARS = 300


class FailureTracker:
    """Counts a scheduler's finished attempts and applies the rule. Not thread-safe:
    the scheduler calls it under its own lock."""

    def __init__(self, rule: NoProgressRule, tasks: int, path: Path | None = None) -> None:
        self.rule = rule
        self.min_tasks = max(1, min(rule.min_tasks, tasks))
        self.path = path
        self.summary = FailureSummary()
        self._streak = 0
        self._streak_tasks: set[str] = set()

    def record(self, task_id: str, status: str, error: str | None) -> str | None:
        """Files one finished attempt; returns why the run must stop, once it must."""
        summary = self.summary
        if status == "scored":
            summary.scored += 1
            self._streak, self._streak_tasks = 0, set()
            self._write()
            return None
        reason = reason_of(error)
        summary.failed += 1
        summary.counts[reason] = summary.counts.get(reason, 0) + 1
        if reason not in summary.examples:
            summary.examples[reason] = f"{task_id}: {error or reason}"[:EXAMPLE_CHARS]
        if is_permanent(reason):
            self._streak += 1
            self._streak_tasks.add(task_id)
        limit = self.rule.first_failures if summary.scored == 0 else self.rule.streak_failures
        if (
            summary.stopped is None
            and self._streak >= limit
            and len(self._streak_tasks) >= self.min_tasks
        ):
            when = "before any rollout was scored" if summary.scored == 0 else "in a row"
            summary.stopped = (
                f"{self._streak} rollouts over {len(self._streak_tasks)} tasks failed {when} "
                f"for reasons a retry does not cure ({summary.counts_line()})"
            )
        self._write()
        return summary.stopped

    def _write(self) -> None:
        if self.path is not None:
            write_text_atomic(self.path, self.summary.model_dump_json(indent=2) + "\n")


def read_failures(path: Path) -> FailureSummary | None:
    """A trainer's `failures.json`; None while there is none (or it is torn)."""
    try:
        return FailureSummary.model_validate(json.loads(Path(path).read_text()))
    except (OSError, ValueError, ValidationError):
        return None
