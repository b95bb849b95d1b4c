"""Errors that clients cause, logged at a bounded rate: one short line, never a traceback.

aiohttp logs every request its parser refuses (`Error handling request`) with a full
traceback and the offending bytes on stderr. A policy under training can send as many
malformed requests as it likes, so that would let a rollout fill the run's log (and
write its own lines into it: the bytes quoted span several lines). The guard's
listeners hand aiohttp this logger instead: every error is counted (`/guard/health`
reports `http_errors`), and at most one line per `INTERVAL_S` reaches stderr, with the
exception's type, its first words on one line (control characters and newlines folded
away), and how many were not printed since the last line.
"""

from __future__ import annotations

import logging
import re
import time

from train.rollout import ui

INTERVAL_S = 10.0
"""At most one line per this many seconds, whatever a client sends."""
MAX_CHARS = 160
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]+")


def one_line(text: str, limit: int = MAX_CHARS) -> str:
    """`text` on one printable ASCII line of at most `limit` characters."""
    flat = " ".join(_UNPRINTABLE.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class _Bounded(logging.Handler):
    def __init__(self, interval_s: float) -> None:
        super().__init__(logging.DEBUG)
        self.interval_s = interval_s
        self.count = 0
        self._held = 0
        self._last = float("-inf")

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        now = time.monotonic()
        if now - self._last < self.interval_s:
            self._held += 1
            return
        self._last = now
        exc = record.exc_info[1] if record.exc_info else None
        what = f"{type(exc).__name__}: {exc}" if exc is not None else ""
        held = f" (+{self._held} not shown)" if self._held else ""
        self._held = 0
        ui.plain(one_line(f"guard http: {record.getMessage()}: {what}") + held)


class ClientErrors:
    """The logger aiohttp's request handlers use (`logger=`), with its count."""

    def __init__(self, name: str, interval_s: float = INTERVAL_S) -> None:
        self._handler = _Bounded(interval_s)
        self.logger = logging.Logger(name, logging.DEBUG)  # not in the global registry
        self.logger.propagate = False
        self.logger.addHandler(self._handler)

    @property
    def count(self) -> int:
        return self._handler.count
