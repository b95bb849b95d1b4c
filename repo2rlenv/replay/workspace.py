"""A virtual workspace: what each file held at every point of a session, as far as the
session shows it.

Every file has an initial state (unknown until observed; `absent` when the agent's
first touch created it), a list of changes (writes, edits, patches, deletes, commands
with known or unknown effect) and a list of complete observations (full reads). The
state of a file before event `i` is the initial state carried forward through the
changes before `i`; where that is not known, a later full read with no change in
between tells it. Nothing is ever written to the real filesystem.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Literal

Status = Literal["known", "partial", "unknown", "absent"]


def _same_text(a: str | None, b: str | None) -> bool:
    """Equal up to one final newline: harnesses that number lines cannot show it."""
    return a == b or (a is not None and b is not None and (a + "\n" == b or a == b + "\n"))


@dataclass(frozen=True)
class FileState:
    status: Status
    content: str | None = None

    @property
    def known(self) -> bool:
        return self.status in {"known", "absent"}


UNKNOWN = FileState("unknown")
PARTIAL = FileState("partial")
ABSENT = FileState("absent")


@dataclass
class FileHistory:
    path: str
    initial: FileState = UNKNOWN
    changes: list[tuple[int, FileState, str]] = field(default_factory=list)
    observations: list[tuple[int, str]] = field(default_factory=list)
    seeded: bool = False
    """The initial content came from a repository checkout, not from the session."""

    @property
    def touched(self) -> bool:
        return bool(self.changes or self.observations)

    def forward(self, index: int) -> FileState:
        state = self.initial
        for at, new, _cause in self.changes:
            if at >= index:
                break
            state = new
        return state

    def state_before(self, index: int) -> FileState:
        forward = self.forward(index)
        later_change = next((at for at, _s, _c in self.changes if at >= index), None)
        seen = next(
            (
                (at, c)
                for at, c in self.observations
                if at >= index and (later_change is None or at <= later_change)
            ),
            None,
        )
        if seen is None:
            return forward
        observed = FileState("known", seen[1])
        if forward.status == "known":
            if not _same_text(forward.content, observed.content):
                return UNKNOWN  # something we could not see changed it: trust neither
            return forward  # replay's own bytes are exact; a read may have lost a newline
        return observed


class VirtualWorkspace:
    def __init__(self) -> None:
        self.files: dict[str, FileHistory] = {}
        self.opaque_at: list[int] = []
        self._latest: dict[str, FileState] = {}
        self.mismatches: list[str] = []
        """Seeded files whose first full read showed other content (a wrong anchor)."""

    def seed(self, files: dict[str, str]) -> None:
        """Start from a checkout: every file is known before the session touches it."""
        for path, content in files.items():
            self.files[path] = FileHistory(path, FileState("known", content), seeded=True)

    @property
    def seeded(self) -> bool:
        """Whether the session started from a checkout (`seed`): its first request then
        has a known start state."""
        return any(history.seeded for history in self.files.values())

    def latest(self, path: str) -> FileState:
        """The state after every change recorded so far (replay appends in order, so this
        is `before(path, now)` in constant time)."""
        if path in self._latest:
            return self._latest[path]
        return self.files[path].initial if path in self.files else UNKNOWN

    def history(self, path: str) -> FileHistory:
        if path not in self.files:
            self.files[path] = FileHistory(path)
        return self.files[path]

    def before(self, path: str, index: int) -> FileState:
        """What replay believes `path` holds when event `index` starts."""
        return self.files[path].forward(index) if path in self.files else UNKNOWN

    def set(self, index: int, path: str, state: FileState, cause: str) -> None:
        history = self.history(path)
        if not history.touched and not history.seeded and cause == "write":
            history.initial = ABSENT
        history.changes.append((index, state, cause))
        self._latest[path] = state

    def observe(self, index: int, path: str, content: str) -> None:
        """A full read. From here on the file holds what was seen (an observation that
        contradicts replay's belief means an unseen command changed it)."""
        history = self.history(path)
        fresh = not history.touched
        if fresh and history.seeded and not _same_text(history.initial.content, content):
            self.mismatches.append(path)
        if not history.touched and not history.seeded:
            history.initial = FileState("known", content)
        else:
            forward = history.forward(index)
            if not (forward.status == "known" and _same_text(forward.content, content)):
                history.changes.append((index, FileState("known", content), "read"))
                self._latest[path] = FileState("known", content)
        history.observations.append((index, content))

    def delete_tree(self, index: int, prefix: str) -> None:
        for path in [p for p in self.files if p == prefix or p.startswith(prefix + "/")]:
            self.set(index, path, ABSENT, "delete")
        if prefix not in self.files:
            self.set(index, prefix, ABSENT, "delete")

    def mark_opaque(self, index: int) -> None:
        self.opaque_at.append(index)

    def opaque_between(self, start: int, end: int) -> bool:
        position = bisect_left(self.opaque_at, start)
        return position < len(self.opaque_at) and self.opaque_at[position] < end

    def snapshot(self, index: int) -> dict[str, FileState]:
        """State of every file the session touched, just before event `index`."""
        return {path: h.state_before(index) for path, h in sorted(self.files.items())}

    def changed_between(self, start: int, end: int) -> list[str]:
        return sorted(
            p
            for p, h in self.files.items()
            if any(start <= at < end and cause != "read" for at, _s, cause in h.changes)
        )
