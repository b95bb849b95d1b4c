"""The marker a JSONL line becomes when it cannot be parsed.

A malformed line is never dropped silently: it stays in the record, in place, so a
reader knows the session has a hole (and sets `truncated`) instead of replaying a
history with a step missing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BadLine:
    line: int
    """1-based line number in the source text."""
    reason: str
    """A code from `formats.reasons.REASONS` (format.bad-json, format.too-large...)."""
    excerpt: str = ""


def split_bad(items: list[object]) -> tuple[list[dict], list[BadLine]]:
    """The dict lines of a record and its bad-line markers; other values are ignored."""
    good = [item for item in items if isinstance(item, dict)]
    bad = [item for item in items if isinstance(item, BadLine)]
    return good, bad
