"""How a run fails: one error type whose message starts with a reason code, and the
codes of a run that started and then failed (exit 1) as against one that could not
start (exit 2). Apart from `run` so the services it starts raise the same error."""

from __future__ import annotations

FAILED_CODES = ("run.trainer-failed", "run.server-died")
"""RunError codes of a run that started and failed (exit 1); the others are set-up
errors (exit 2)."""


class RunError(RuntimeError):
    """A run that cannot start or had to stop; the message starts with a reason code."""
