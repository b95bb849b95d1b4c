"""The rules: does a task match an instance of a table? Each match names its rule
(`decontam.*`), the table and the instance, so a user can see why and disagree."""

from __future__ import annotations

from datetime import datetime

from repo2rlenv.decontam.facts import TaskFacts
from repo2rlenv.decontam.index import TableIndex
from schemas.provenance import DecontamMatch

WINDOW_DAYS = 7
"""The commit window: an instance of the task's repository whose pull request was opened
within 7 days of the task's commit and whose fix or tests touch a file the task's
reference touches. Measured on SWE-bench Verified (docs/decontamination.md): each
instance taken as a task flags 22 of the 500 at 7 days, 35 at 14, 60 at 30."""


def _commit_equal(task: str, instance: str) -> bool:
    """Full ids, or an abbreviated one (7+ hex digits) a run may record."""
    short, full = sorted((task.lower(), instance.lower()), key=len)
    return len(short) >= 7 and full.startswith(short)


def _repo_commit_files(facts: TaskFacts, index: TableIndex) -> list[DecontamMatch]:
    """Same repository, same start commit, and the reference touches a file the
    instance's fix or tests touch (or either side names no files: the start state is
    the instance's, whatever is asked)."""
    if not (facts.repository and facts.commit):
        return []
    found = []
    for commit, entry in index.by_repo.get(facts.repository, []):
        if _commit_equal(facts.commit, commit):
            shared = facts.files & entry.files
            if shared or not facts.files or not entry.files:
                detail = f"{facts.repository}@{commit[:12]}"
                if shared:
                    detail += f", touches {', '.join(sorted(shared)[:3])}"
                found.append(DecontamMatch(
                    rule="decontam.repo-commit-files", benchmark=index.name,
                    instance_id=entry.instance_id, detail=detail,
                ))  # fmt: skip
    return found


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _repo_commit_window(facts: TaskFacts, index: TableIndex) -> list[DecontamMatch]:
    """Same repository, another start commit opened within WINDOW_DAYS of the task's
    commit, and a file both touch (never on files alone being unknown: the window is a
    weaker sign than the same commit)."""
    if not (facts.repository and facts.commit and facts.commit_date and facts.files):
        return []
    start = _when(facts.commit_date)
    found = []
    for commit, entry in index.by_repo.get(facts.repository, []):
        if _commit_equal(facts.commit, commit) or not entry.created_at:
            continue
        days = abs((_when(entry.created_at) - start).days)
        shared = facts.files & entry.files
        if days <= WINDOW_DAYS and shared:
            found.append(DecontamMatch(
                rule="decontam.repo-commit-window", benchmark=index.name,
                instance_id=entry.instance_id,
                detail=f"{facts.repository}@{commit[:12]} opened {days} day(s) from the "
                f"task's commit, touches {', '.join(sorted(shared)[:3])}",
            ))  # fmt: skip
    return found


def commit_date(facts: TaskFacts, indexes: list[TableIndex]) -> str | None:
    """The earliest `created_at` of an instance (in any table) based on the task's
    commit: the commit existed then. None when no table dates it."""
    if not (facts.repository and facts.commit):
        return None
    dates = [
        entry.created_at
        for index in indexes
        for commit, entry in index.by_repo.get(facts.repository, [])
        if entry.created_at and _commit_equal(facts.commit, commit)
    ]
    return min(dates, key=_when) if dates else None


def match(facts: TaskFacts, index: TableIndex) -> list[DecontamMatch]:
    """Every match of the task in one table, rule by rule, in a stable order."""
    found: list[DecontamMatch] = []
    name = index.name
    if facts.instance_id and facts.instance_id in index.by_id:
        found.append(DecontamMatch(
            rule="decontam.same-instance", benchmark=name, instance_id=facts.instance_id,
            detail="the run worked on this instance",
        ))  # fmt: skip
    if facts.content_hash and facts.content_hash in index.by_content:
        entry = index.by_content[facts.content_hash]
        found.append(DecontamMatch(
            rule="decontam.heldout-task", benchmark=name, instance_id=entry.instance_id,
            detail=f"same content hash {facts.content_hash[:12]}",
        ))  # fmt: skip
    elif facts.task_id in index.by_id and not index.by_id[facts.task_id].repository:
        found.append(DecontamMatch(
            rule="decontam.heldout-task", benchmark=name, instance_id=facts.task_id,
            detail="same task id",
        ))  # fmt: skip
    found.extend(_repo_commit_files(facts, index))
    found.extend(_repo_commit_window(facts, index))
    for instance_id, score in index.similar(facts.instruction):
        found.append(DecontamMatch(
            rule="decontam.near-duplicate-text", benchmark=name, instance_id=instance_id,
            score=round(score, 3), detail=f"{score:.0%} of the instruction's shingles",
        ))  # fmt: skip
    for digest, path in sorted(facts.data_hashes.items(), key=lambda item: item[1]):
        entry = index.by_data.get(digest)
        if entry is not None:
            found.append(DecontamMatch(
                rule="decontam.data-hash", benchmark=name, instance_id=entry.instance_id,
                detail=f"{path} sha256 {digest[:12]}",
            ))  # fmt: skip
    return found
