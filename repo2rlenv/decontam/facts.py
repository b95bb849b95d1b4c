"""What a task says about itself that a benchmark instance could share: repository,
start commit, the files its reference touches, its instruction, its data files."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from repo2rlenv.bundle import TaskTree
from repo2rlenv.bundle.writer import bundle_digest
from repo2rlenv.validate.reference_writes import reference_writes
from schemas import TaskBundle

DATA_SUFFIXES = frozenset(
    {".csv", ".tsv", ".parquet", ".json", ".jsonl", ".xlsx", ".xls", ".feather", ".arrow",
     ".h5", ".hdf5", ".npy", ".npz", ".pkl", ".sqlite", ".db", ".txt", ".xml", ".zip", ".gz"}
)  # fmt: skip
"""Files under environment/ with these suffixes are data a notebook task reads: the
same bytes in a benchmark's task is the same data, whatever the question says."""

_GITHUB = re.compile(r"^(?:https?://|git@)?(?:www\.)?github\.com[/:]", re.IGNORECASE)


def repo_key(repository: str | None) -> str | None:
    """owner/name, lower case, from a GitHub URL or an `owner/name`: task provenance
    keeps the URL the run named, instance tables keep owner/name."""
    if not repository:
        return None
    name = _GITHUB.sub("", repository.strip()).removesuffix("/").removesuffix(".git")
    return name.lower() or None


def diff_files(patch: str) -> frozenset[str]:
    """Paths a unified diff changes (its `diff --git a/X b/Y` and `+++ b/Y` headers)."""
    found = set(re.findall(r"^diff --git a/(\S+) b/\S+", patch, re.MULTILINE))
    found |= set(re.findall(r"^\+\+\+ b/(\S+)", patch, re.MULTILINE))
    return frozenset(found)


@dataclass(frozen=True)
class TaskFacts:
    task_id: str
    instruction: str = ""
    repository: str | None = None
    commit: str | None = None
    instance_id: str | None = None
    content_hash: str | None = None
    files: frozenset[str] = frozenset()
    """Workspace-relative files the reference solution writes (or a run's diff)."""
    data_hashes: dict[str, str] = field(default_factory=dict)
    """sha256 -> path of each data file under environment/."""
    commit_date: str | None = None
    """When `commit` existed (ISO 8601): a task records no commit date, so the checker
    takes it from the tables (`Decontaminator.check`), the earliest `created_at` of an
    instance based on that commit."""


def _touched(solve_sh: str) -> frozenset[str]:
    written = reference_writes(solve_sh) or {}
    return frozenset(written) | diff_files(solve_sh)


def _data_hashes(files: dict[str, bytes]) -> dict[str, str]:
    hashes: dict[str, str] = {}
    for path, content in sorted(files.items()):
        if not content:
            continue
        if path.startswith("environment/") and PurePosixPath(path).suffix.lower() in DATA_SUFFIXES:
            if path.endswith((".txt", ".json")) and path.count("/") < 2:
                continue  # environment/requirements.txt, wheels.txt: recipe, not data
            hashes.setdefault(hashlib.sha256(content).hexdigest(), path)
    return hashes


def _facts(task_id: str, instruction: str, files: dict[str, bytes], block: object) -> TaskFacts:
    source = getattr(block, "source", None)
    solve = files.get("solution/solve.sh", b"").decode("utf-8", "replace")
    return TaskFacts(
        task_id=task_id,
        instruction=instruction,
        repository=repo_key(getattr(source, "repository", None)),
        commit=getattr(source, "commit", None),
        instance_id=getattr(source, "instance_id", None),
        content_hash=getattr(block, "content_hash", None),
        files=_touched(solve),
        # only notebook (qa) tasks: a repair task's checkout is full of .json/.txt
        # files that many repositories share
        data_hashes=_data_hashes(files) if getattr(block, "kind", None) == "qa" else {},
    )


def of_bundle(bundle: TaskBundle) -> TaskFacts:
    """A draft the miner is about to write."""
    block = bundle.config.metadata.repo2rlenv
    files = {f.path: f.content for f in bundle.files}
    facts = _facts(bundle.task_id, bundle.instruction, files, block)
    if facts.content_hash is None:  # a draft: the hash its folder will have
        return TaskFacts(**{**facts.__dict__, "content_hash": bundle_digest(bundle)})
    return facts


def of_tree(tree: TaskTree) -> TaskFacts:
    """A task folder on disk (`repo2rlenv decontam`, a benchmark given as a folder)."""
    block = tree.config.metadata.repo2rlenv if tree.config else None
    files = {path: content for path, (content, _) in tree.files.items()}
    facts = _facts(tree.name, tree.text("instruction.md") or "", files, block)
    if facts.content_hash is None and tree.config is not None:
        return TaskFacts(**{**facts.__dict__, "content_hash": tree.content_hash})
    return facts
