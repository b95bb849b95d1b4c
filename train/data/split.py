"""Split tasks into train and held-out: seeded, grouped, stratified, and stable.

Why this shape:
- *Grouped*: tasks mined from one source record (or, with `group_by = "dataset"`, one
  dataset) share code and wording, so they always land on the same side; otherwise the
  held-out score would measure memorisation.
- *Stable*: every group gets a rank from a seeded hash of its own key, never from its
  position in the folder listing. Within each stratum the held-out groups are a prefix of
  that ranking. Adding unrelated tasks never re-ranks existing groups: a task only changes
  side when its stratum's quota changes, or when a new group ranks ahead of it and the
  quota is full, and then it is the lowest-ranked held-out group that moves to train.
- *Capped*: each source group holds out its target (40 mined tasks, 150 notebook
  questions) but never more than `max_fraction` of its tasks, so small sets still train.
- *Stratified*: a group's stratum is the kind most of its tasks have. The cap is shared
  between strata in proportion to their task counts (largest remainder), so a rare kind
  is held out as often as its share says, but never whole: at least one group of every
  stratum stays in train, or the policy would never see that kind.
A group larger than its stratum's quota can never be held out whole, so it stays in
train; the walk along the ranking stops at the first group that does not fit, which
keeps the held-out set a prefix (and so stable) at the price of undershooting the
quota by less than one group.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from train.data.tasks import SOURCE_GROUPS, SourceGroup, TaskRecord

Side = Literal["train", "heldout"]
SPLIT_FORMAT_VERSION = 1


class SplitSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = Field(default=0, description="Seed of the group ranking.")
    holdout_repo2rlenv: int = Field(default=40, ge=0, description="Mined tasks to hold out.")
    holdout_smoldataenvs: int = Field(
        default=150, ge=0, description="Notebook questions to hold out."
    )
    max_fraction: float = Field(
        default=0.25, ge=0.0, le=0.9, description="Most of a source group ever held out."
    )
    group_by: Literal["record", "dataset"] = Field(
        default="record", description="Keep one source record, or one dataset, on one side."
    )

    def target(self, source: SourceGroup) -> int:
        return self.holdout_repo2rlenv if source == "repo2rlenv" else self.holdout_smoldataenvs


@dataclass
class SourceSplit:
    source: SourceGroup
    tasks: int
    groups: int
    target: int
    cap: int
    quota_by_stratum: dict[str, int]
    heldout_by_stratum: dict[str, int] = field(default_factory=dict)

    @property
    def heldout(self) -> int:
        return sum(self.heldout_by_stratum.values())


@dataclass
class Split:
    settings: SplitSettings
    side: dict[str, Side]
    group_of: dict[str, str]
    sources: dict[str, SourceSplit]
    tasks: dict[str, TaskRecord]

    def ids(self, side: Side) -> list[str]:
        return sorted(t for t, s in self.side.items() if s == side)

    def to_dict(self) -> dict[str, object]:
        return {
            "version": SPLIT_FORMAT_VERSION,
            "settings": self.settings.model_dump(mode="json"),
            "sources": {
                name: {
                    "tasks": s.tasks,
                    "groups": s.groups,
                    "target": s.target,
                    "cap": s.cap,
                    "heldout": s.heldout,
                    "quota_by_stratum": s.quota_by_stratum,
                    "heldout_by_stratum": s.heldout_by_stratum,
                }
                for name, s in sorted(self.sources.items())
            },
            "train": self.ids("train"),
            "heldout": self.ids("heldout"),
            "tasks": {
                task_id: {
                    "side": self.side[task_id],
                    "group": self.group_of[task_id],
                    "kind": self.tasks[task_id].kind,
                    "source_group": self.tasks[task_id].source_group,
                    "content_hash": self.tasks[task_id].content_hash,
                }
                for task_id in sorted(self.side)
            },
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def write(self, path: Path) -> Path:
        return write_text_atomic(path, self.to_json())


class SplitFileError(ValueError):
    """A split.json that cannot be read; the message starts with a reason code."""


def read_heldout(path: Path) -> list[str]:
    """The held-out task ids of a split.json that `python -m train` wrote, so evaluation
    runs on exactly the tasks training never saw."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise SplitFileError(f"split.unreadable: {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != SPLIT_FORMAT_VERSION:
        raise SplitFileError(
            f"split.version: {path} is not a version {SPLIT_FORMAT_VERSION} split.json"
        )
    heldout = data.get("heldout")
    if not isinstance(heldout, list) or not all(isinstance(t, str) for t in heldout):
        raise SplitFileError(f"split.malformed: {path} has no list of held-out task ids")
    return heldout


def write_text_atomic(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    staging.write_text(text)
    os.replace(staging, path)
    return path


def group_key(task: TaskRecord, group_by: Literal["record", "dataset"]) -> str:
    parts = [task.source_group, task.source_dataset]
    if group_by == "record":
        parts.append(task.source_record_id)
    return "\x1f".join(parts)


def rank(seed: int, key: str) -> tuple[int, str]:
    """A group's place in the seeded order; depends on nothing but the seed and the key."""
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big"), key


def primary_kind(members: list[TaskRecord]) -> str:
    counts = Counter(t.kind for t in members)
    return min(counts, key=lambda kind: (-counts[kind], kind))


def apportion(
    total: int, weights: dict[str, int], limits: dict[str, int], seed: int
) -> dict[str, int]:
    """Largest-remainder shares of `total`, none above its limit; what a limited kind
    cannot take goes to the others. Ties go by a seeded rank, not by name order."""
    size = sum(weights.values())
    if size == 0 or total == 0:
        return dict.fromkeys(weights, 0)
    exact = {k: total * w / size for k, w in weights.items()}
    shares = {k: min(math.floor(v), limits[k]) for k, v in exact.items()}
    order = sorted(weights, key=lambda k: (-(exact[k] - math.floor(exact[k])), rank(seed, k)))
    left = total - sum(shares.values())
    while left > 0:
        open_kinds = [k for k in order if shares[k] < limits[k]]
        if not open_kinds:
            break
        for kind in open_kinds[:left]:
            shares[kind] += 1
        left = total - sum(shares.values())
    return shares


def _split_source(
    source: SourceGroup,
    groups: dict[str, list[TaskRecord]],
    settings: SplitSettings,
    side: dict[str, Side],
) -> SourceSplit:
    n_tasks = sum(len(m) for m in groups.values())
    target = settings.target(source)
    cap = min(target, math.floor(settings.max_fraction * n_tasks + 1e-9))
    strata: dict[str, list[str]] = defaultdict(list)
    for key, members in groups.items():
        strata[primary_kind(members)].append(key)
    weights = {kind: sum(len(groups[k]) for k in keys) for kind, keys in strata.items()}
    limits = {
        kind: weights[kind] - min(len(groups[k]) for k in keys) for kind, keys in strata.items()
    }
    quotas = apportion(cap, weights, limits, settings.seed)
    result = SourceSplit(source, n_tasks, len(groups), target, cap, dict(sorted(quotas.items())))
    for kind, keys in sorted(strata.items()):
        quota, filled = quotas[kind], 0
        for key in sorted(keys, key=lambda k: rank(settings.seed, k)):
            size = len(groups[key])
            if size > quota:
                continue
            if filled + size > quota:
                break
            filled += size
            for task in groups[key]:
                side[task.task_id] = "heldout"
        result.heldout_by_stratum[kind] = filled
    return result


def split_tasks(tasks: list[TaskRecord], settings: SplitSettings | None = None) -> Split:
    settings = settings or SplitSettings()
    by_id = {t.task_id: t for t in tasks}
    if len(by_id) != len(tasks):
        raise ValueError("task ids must be unique")
    side: dict[str, Side] = dict.fromkeys(by_id, "train")
    group_of = {t.task_id: group_key(t, settings.group_by) for t in tasks}
    sources: dict[str, SourceSplit] = {}
    for source in SOURCE_GROUPS:
        groups: dict[str, list[TaskRecord]] = defaultdict(list)
        for task in tasks:
            if task.source_group == source:
                groups[group_of[task.task_id]].append(task)
        if groups:
            sources[source] = _split_source(source, groups, settings, side)
    return Split(settings, side, group_of, sources, by_id)
