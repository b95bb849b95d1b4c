"""Which tasks of a mined folder are published, and why each other one is held back.

Only a task `validate` proved (`evaluation.status == "verified"`) leaves the machine
unless the user asks for unverified ones too, and only when its source's licence allows
redistribution (`repo2rlenv.publish.licences`). Every task held back is counted under
a reason code and named, never dropped in silence."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from repo2rlenv.bundle.reader import TaskTree, find_task_dirs, read_task_dir
from repo2rlenv.manifest import manifest_row
from repo2rlenv.publish.licences import normalise, verdict
from schemas.manifest import ManifestRow
from schemas.provenance import Repo2RLEnvMetadata

HELD_UNREADABLE = "publish.task-unreadable"
HELD_UNVERIFIED = "publish.not-verified"
HELD_LICENCE_UNKNOWN = "publish.licence-unknown"
HELD_LICENCE_FORBIDS = "publish.licence-forbids"


@dataclass(frozen=True)
class Chosen:
    """A task that is published: its folder, its manifest row and its metadata."""

    folder: Path
    row: ManifestRow
    block: Repo2RLEnvMetadata | None
    tree: TaskTree


@dataclass
class Selection:
    chosen: list[Chosen] = field(default_factory=list)
    held: Counter[str] = field(default_factory=Counter)
    held_tasks: dict[str, list[str]] = field(default_factory=dict)

    def hold(self, code: str, task: str) -> None:
        self.held[code] += 1
        self.held_tasks.setdefault(code, []).append(task)


def select_tasks(
    root: Path, *, include_unverified: bool = False, include_unknown_licence: bool = False
) -> Selection:
    """The tasks under `root` to publish, in the manifest's order (sorted paths)."""
    selection = Selection()
    for folder in find_task_dirs([root]):
        rel = folder.relative_to(root).as_posix()
        row = manifest_row(root, folder)
        tree = read_task_dir(folder)
        if row is None or tree.config is None or tree.symlinks or tree.special:
            # a link or a device file cannot be published as bytes; validate names it
            selection.hold(HELD_UNREADABLE, rel)
            continue
        block = tree.config.metadata.repo2rlenv
        if row.evaluation != "verified" and not include_unverified:
            selection.hold(HELD_UNVERIFIED, rel)
            continue
        licence = block.source.license if block and block.source else None
        judged = verdict(licence)
        if judged == "forbidden":
            selection.hold(HELD_LICENCE_FORBIDS, rel)
        elif judged == "unknown" and not include_unknown_licence:
            selection.hold(HELD_LICENCE_UNKNOWN, rel)
        else:
            selection.chosen.append(Chosen(folder=folder, row=row, block=block, tree=tree))
    selection.chosen.sort(key=lambda chosen: chosen.row.path)
    return selection


def licence_of(chosen: Chosen) -> str | None:
    source = chosen.block.source if chosen.block else None
    return normalise(source.license if source else None)
