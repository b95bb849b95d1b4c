"""Check 5 of the session miner: is a draft new? Not an exact copy (same bundle digest)
nor a near copy (same instruction and reference, whitespace, case and generated names
aside) of an earlier task of the run, nor of a task in the eval set (`--exclude`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.bundle.writer import bundle_digest
from repo2rlenv.emit import Draft, Event, Skip
from schemas import TaskBundle


def near_duplicate_key(instruction: str, solve_sh: str) -> str:
    squash = re.sub(r"\s+", " ", (instruction + "\n" + solve_sh).lower()).strip()
    squash = re.sub(r"rlenv_[0-9a-f]{12}", "", squash)
    return hashlib.sha256(squash.encode()).hexdigest()


def _bundle_key(bundle: TaskBundle) -> str:
    solve = next(
        (
            f.content.decode("utf-8", "replace")
            for f in bundle.files
            if f.path == "solution/solve.sh"
        ),
        "",
    )
    return near_duplicate_key(bundle.instruction, solve)


def exclusion_keys(folders: list[Path]) -> set[str]:
    keys = set()
    for task_dir in find_task_dirs(folders):
        tree = read_task_dir(task_dir)
        keys.add(
            near_duplicate_key(
                tree.text("instruction.md") or "", tree.text("solution/solve.sh") or ""
            )
        )
    return keys


@dataclass(frozen=True)
class _Kept:
    task_id: str
    record_id: str
    damaged: bool


@dataclass
class _Held:
    """A damaged session's draft waiting for the end of the run (or for its complete
    copy), with the two marks it is compared by."""

    draft: Draft
    digest: str
    key: str


class Novelty:
    """What the run has emitted so far, and the eval set's keys. Among duplicates the
    first complete draft offered wins; a draft from a damaged session (a line that does
    not parse: `Draft.damaged`) never wins over a complete one, whatever the order."""

    def __init__(self, exclude: list[Path]) -> None:
        self.excluded = exclusion_keys(exclude)
        self.kept: dict[str, _Kept] = {}
        """Bundle digest and near-duplicate key of every task kept -> that task."""
        self._held: dict[int, _Held] = {}
        """Damaged drafts not yet decided, by arrival number (so: in input order). Only
        damaged drafts wait here, so a run of complete sessions holds nothing."""
        self._held_by_mark: dict[str, list[int]] = {}
        self._arrivals = 0

    def check(self, draft: Draft) -> Event:
        """The draft, now counted as seen; or its skip (`novel.in-eval-set`,
        `novel.duplicate`) naming the task it repeats and its record."""
        return self._check(draft, bundle_digest(draft.bundle), _bundle_key(draft.bundle))

    def offer(self, draft: Draft) -> list[Event]:
        """The streaming form of `check`. A complete draft is decided now, and a kept
        one also settles the damaged drafts held for being its copies (their skips
        name it). A damaged draft that repeats a kept task (or the eval set) is
        skipped now; otherwise it waits for `release`, since a complete copy may still
        come later in the input."""
        digest, key = bundle_digest(draft.bundle), _bundle_key(draft.bundle)
        if draft.damaged and not self._refused(digest, key):
            number = self._arrivals = self._arrivals + 1
            self._held[number] = _Held(draft, digest, key)
            for mark in (digest, key):
                self._held_by_mark.setdefault(mark, []).append(number)
            return []
        event = self._check(draft, digest, key)
        if not isinstance(event, Draft):
            return [event]
        settled = sorted({n for mark in (digest, key) for n in self._held_by_mark.pop(mark, [])})
        events: list[Event] = [event]
        for number in settled:
            held = self._held.pop(number, None)
            if held is not None:
                events.append(self._check(held.draft, held.digest, held.key))
        return events

    def release(self) -> Iterator[Event]:
        """The damaged drafts no complete copy came for, decided in input order: the
        first of each kind is kept, as among complete ones."""
        held, self._held, self._held_by_mark = self._held, {}, {}
        for number in sorted(held):
            yield self._check(held[number].draft, held[number].digest, held[number].key)

    def _refused(self, digest: str, key: str) -> bool:
        return key in self.excluded or digest in self.kept or key in self.kept

    def _check(self, draft: Draft, digest: str, key: str) -> Event:
        record, task_id = draft.record_id, draft.bundle.task_id
        kept = self.kept.get(digest) or self.kept.get(key)
        if key in self.excluded:
            reason, detail = "novel.in-eval-set", task_id
        elif kept is not None:
            reason = "novel.duplicate"
            detail = f"{task_id} repeats {kept.task_id}, kept from {kept.record_id}"
            if draft.damaged and not kept.damaged:
                detail += " (a complete session; this one has a line that does not parse)"
        else:
            self.kept[digest] = self.kept[key] = _Kept(task_id, record, draft.damaged)
            return draft
        return Skip(record, reason, detail, kind=draft.kind, source_format=draft.source_format)
