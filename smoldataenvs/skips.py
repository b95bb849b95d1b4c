"""The one shape of a counted skip in the notebook source.

A notebook, a data file, a slice or a question that cannot become a task is skipped
under a stable reason code that the yield table counts (nothing is dropped silently).
Each stage raises its own subclass, so a caller catches what it expects, but all carry
the same two fields and the same `reason: detail` message.
"""

from __future__ import annotations


class SkipError(Exception):
    """A candidate skipped under `reason` (the yield-table code), with a human `detail`."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
