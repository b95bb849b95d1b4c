"""The rules: does a task match an instance of a table? Each match names its rule
(`decontam.*`), the table and the instance, so a user can see why and disagree."""

from __future__ import annotations

from repo2rlenv.decontam.facts import TaskFacts
from repo2rlenv.decontam.index import TableIndex
from schemas.provenance import DecontamMatch


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
