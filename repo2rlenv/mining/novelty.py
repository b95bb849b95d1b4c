"""Check 5 of the session miner: is a draft new? Not an exact copy (same bundle digest)
nor a near copy (same instruction and reference, whitespace, case and generated names
aside) of an earlier task of the run, nor of a task in the eval set (`--exclude`)."""

from __future__ import annotations

import hashlib
import re
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


class Novelty:
    """What the run has emitted so far, and the eval set's keys; the first draft of a
    kind of content wins, so the order drafts are offered in decides which is kept."""

    def __init__(self, exclude: list[Path]) -> None:
        self.excluded = exclusion_keys(exclude)
        self.keys = set(self.excluded)
        self.hashes: set[str] = set()

    def check(self, draft: Draft) -> Event:
        """The draft, now counted as seen; or its skip (`novel.in-eval-set`,
        `novel.duplicate`) naming the task it repeats."""
        digest = bundle_digest(draft.bundle)
        key = _bundle_key(draft.bundle)
        block = draft.bundle.config.metadata.repo2rlenv
        record = block.source.record_id if block and block.source else draft.bundle.task_id
        seen = "novel.duplicate" if digest in self.hashes or key in self.keys else None
        reason = "novel.in-eval-set" if key in self.excluded else seen
        if reason is not None:
            return Skip(
                record,
                reason,
                draft.bundle.task_id,
                kind=draft.kind,
                source_format=draft.source_format,
            )
        self.hashes.add(digest)
        self.keys.add(key)
        return draft
