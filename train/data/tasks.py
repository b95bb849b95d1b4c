"""Load any folder of Harbor tasks into flat records the split and the report can count.

Ours carry `[metadata.repo2rlenv]`; foreign tasks do not, and fall back to what
task.toml itself says (Harbor's `source`, the `[task]` name, `[metadata] difficulty`)
with kind "unknown". A folder that cannot be read is reported with a stable reason code
and left out: one broken task must not stop a training run over thousands.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from repo2rlenv.bundle import TaskTree, find_task_dirs, read_task_dir
from schemas import LabelStatus, TaskConfig

SourceGroup = Literal["repo2rlenv", "smoldataenvs"]
SOURCE_GROUPS: tuple[SourceGroup, ...] = ("repo2rlenv", "smoldataenvs")
UNKNOWN = "unknown"

_CONFIG_REASON = {
    "missing": "task.config-missing",
    "toml": "task.config-invalid-toml",
    "schema": "task.config-schema",
}


class TaskRecord(BaseModel):
    """One loaded task, reduced to what splitting, counting and sampling need."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    """Folder path relative to the loaded root (POSIX): unique within one load."""
    path: Path
    """The task folder as loaded; every later step (split, rollouts) takes this one."""
    generator: str
    source_group: SourceGroup
    kind: str
    difficulty: str
    source_dataset: str
    source_record_id: str
    source_format: str
    harness: str | None
    evaluation: LabelStatus
    content_hash: str


class InvalidTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    reason: str
    detail: str


@dataclass
class LoadResult:
    root: Path
    tasks: list[TaskRecord] = field(default_factory=list)
    invalid: list[InvalidTask] = field(default_factory=list)
    filtered: Counter[str] = field(default_factory=Counter)
    """Valid tasks left out by a filter, by reason code (e.g. `filter.not-verified`)."""

    @property
    def found(self) -> int:
        return len(self.tasks) + len(self.invalid) + sum(self.filtered.values())


def source_group_of(generator: str) -> SourceGroup:
    return "smoldataenvs" if generator == "smoldataenvs" else "repo2rlenv"


HEURISTIC_MARK = " (heuristic)"
"""Suffix of a difficulty guessed from the task's shape rather than measured."""


def _difficulty(config: TaskConfig) -> str:
    """Our label (`repo2rlenv difficulty`) first, measured or marked heuristic; else
    Harbor's free-form `[metadata] difficulty`."""
    block = config.metadata.repo2rlenv
    if block is not None and block.difficulty is not None:
        label = block.difficulty
        return label.label + (HEURISTIC_MARK if label.source == "heuristic" else "")
    value = (config.metadata.model_extra or {}).get("difficulty")
    if isinstance(value, str) and value.strip():
        return value.strip().lower()
    return UNKNOWN


def _task_id(root: Path, folder: Path) -> str:
    rel = folder.relative_to(root).as_posix()
    return folder.name if rel == "." else rel


def record_from_tree(tree: TaskTree, task_id: str) -> TaskRecord:
    """A record for a tree whose config parsed; foreign tasks get the fallbacks."""
    config, digest = tree.config, tree.content_hash
    if config is None or digest is None:
        raise ValueError(f"{task_id}: task.toml did not parse")
    block = config.metadata.repo2rlenv
    source = block.source if block else None
    name = config.task.name if config.task else None
    if source is not None:
        dataset, record_id = source.dataset, source.record_id
    else:
        org = name.split("/", 1)[0] if name else None
        parent = task_id.rsplit("/", 1)[0] if "/" in task_id else "."
        dataset = config.source or org or f"local:{parent}"
        record_id = name or task_id
    generator = block.generator if block else "external"
    return TaskRecord(
        task_id=task_id,
        path=tree.root,
        generator=generator,
        source_group=source_group_of(generator),
        kind=(block.kind if block else None) or UNKNOWN,
        difficulty=_difficulty(config),
        source_dataset=dataset,
        source_record_id=record_id,
        source_format=source.format if source else UNKNOWN,
        harness=source.harness if source else None,
        evaluation=block.evaluation.status if block else "unverified",
        content_hash=digest,
    )


def _invalid(tree: TaskTree, task_id: str) -> InvalidTask:
    if "task.toml" in tree.symlinks:
        return InvalidTask(path=task_id, reason="bundle.symlink", detail="task.toml is a link")
    reason = _CONFIG_REASON.get(tree.config_error_kind or "", "task.config-invalid")
    return InvalidTask(path=task_id, reason=reason, detail=tree.config_error or "")


def load_tasks(root: Path, *, only_verified: bool = False) -> LoadResult:
    """Every task folder under `root`. Never raises on a bad task; raises
    `FileNotFoundError` / `NotADirectoryError` only when `root` itself is unusable."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"no such folder: {root}")
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root}")
    result = LoadResult(root=root)
    try:
        folders = find_task_dirs([root], unconfigured=True)
    except OSError as exc:
        raise OSError(f"cannot search {root} for tasks: {exc}") from exc
    for folder in folders:
        task_id = _task_id(root, folder)
        try:
            tree = read_task_dir(folder)
        except OSError as exc:
            result.invalid.append(
                InvalidTask(path=task_id, reason="task.unreadable", detail=str(exc))
            )
            continue
        if tree.config is None:
            result.invalid.append(_invalid(tree, task_id))
            continue
        record = record_from_tree(tree, task_id)
        if only_verified and record.evaluation != "verified":
            result.filtered["filter.not-verified"] += 1
            continue
        result.tasks.append(record)
    result.tasks.sort(key=lambda t: t.task_id)
    return result


TREES_KEPT = 256
"""Task trees a process keeps: far more than the groups in flight at once (a task's
rollouts run as one group), few enough that large task folders do not pile up."""


class TaskTrees:
    """Each task folder read once while it is in use, not once per rollout: a group of
    eight rollouts read its folder sixteen times (the harness runner, then the guard
    context), each time a walk of every file. Thread-safe; the trees are shared and
    never changed by their readers."""

    def __init__(
        self, read: Callable[[Path], TaskTree] | None = None, kept: int = TREES_KEPT
    ) -> None:
        self._read = read or read_task_dir
        self._kept = kept
        self._trees: OrderedDict[Path, TaskTree] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, task_dir: Path) -> TaskTree:
        with self._lock:
            tree = self._trees.get(task_dir)
            if tree is not None:
                self._trees.move_to_end(task_dir)
                return tree
        tree = self._read(task_dir)  # outside the lock: reads of other tasks go on
        if tree.config is None:
            return tree  # unusable: the rollout fails; a fixed folder is read afresh
        with self._lock:
            tree = self._trees.setdefault(task_dir, tree)
            while len(self._trees) > self._kept:
                self._trees.popitem(last=False)
        return tree
