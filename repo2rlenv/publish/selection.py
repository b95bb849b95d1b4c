"""Which tasks of a mined folder are published, and why each other one is held back.

Only a task `validate` proved (`evaluation.status == "verified"`) leaves the machine
unless the user asks for unverified ones too, only when its source's licence allows
redistribution (`repo2rlenv.publish.licences`), and only when its Dockerfile starts from
an image others can get (`repo2rlenv.publish.portable`): a task on the offline base is
held back, or its published copy rewritten to the portable recipe. Every task held back
is counted under a reason code and named, never dropped in silence. One selection for
every destination (the Hub, a Harbor registry dataset), so the rules cannot drift apart.

The selection never writes: a rewritten task's new bytes live in `Chosen.files`, and its
manifest row carries the hash of those bytes, so the mined folder stays as mined."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from repo2rlenv.bundle.hashing import content_hash
from repo2rlenv.bundle.reader import TaskTree, find_task_dirs, read_task_dir
from repo2rlenv.manifest import manifest_row
from repo2rlenv.publish.licences import normalise, verdict
from repo2rlenv.publish.portable import local_only_bases, portable_dockerfile
from schemas.manifest import ManifestRow
from schemas.provenance import Repo2RLEnvMetadata

HELD_UNREADABLE = "publish.task-unreadable"
HELD_UNVERIFIED = "publish.not-verified"
HELD_LICENCE_UNKNOWN = "publish.licence-unknown"
HELD_LICENCE_FORBIDS = "publish.licence-forbids"
HELD_LOCAL_BASE = "env.local-only-base"
"""validate's rule id: the Dockerfile starts FROM an image only this machine has."""
HELD_NOT_REWRITABLE = "publish.local-base-not-rewritable"
"""`--local-base rewrite` met a FROM line the recipe would change the meaning of."""
DOCKERFILE = "environment/Dockerfile"

LocalBase = Literal["refuse", "rewrite", "keep"]
"""What a task on a local-only base gets: held back, a published copy rewritten to the
portable recipe, or published as is (it then builds only where that image exists)."""


@dataclass(frozen=True)
class Chosen:
    """A task that is published: its folder, its manifest row (hash of the published
    bytes), its metadata, and the files to publish (the folder's, or with the
    Dockerfile rewritten when `rewritten`)."""

    folder: Path
    row: ManifestRow
    block: Repo2RLEnvMetadata | None
    tree: TaskTree
    files: dict[str, tuple[bytes, bool]]
    rewritten: bool = False


@dataclass
class Selection:
    chosen: list[Chosen] = field(default_factory=list)
    held: Counter[str] = field(default_factory=Counter)
    held_tasks: dict[str, list[str]] = field(default_factory=dict)

    def hold(self, code: str, task: str) -> None:
        self.held[code] += 1
        self.held_tasks.setdefault(code, []).append(task)


@dataclass(frozen=True, kw_only=True)
class PublishRequest:
    """What every publish names, whatever the destination: the mined folder, the rules
    that choose its tasks, and whether to only say what would go."""

    root: Path
    include_unverified: bool = False
    include_unknown_licence: bool = False
    local_base: LocalBase = "refuse"
    dry_run: bool = False

    def select(self) -> Selection:
        return select_tasks(
            self.root,
            include_unverified=self.include_unverified,
            include_unknown_licence=self.include_unknown_licence,
            local_base=self.local_base,
        )


def select_tasks(
    root: Path,
    *,
    include_unverified: bool = False,
    include_unknown_licence: bool = False,
    local_base: LocalBase = "refuse",
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
            _choose(selection, rel, Chosen(folder, row, block, tree, dict(tree.files)), local_base)
    selection.chosen.sort(key=lambda chosen: chosen.row.path)
    return selection


def _choose(selection: Selection, rel: str, chosen: Chosen, local_base: LocalBase) -> None:
    dockerfile = chosen.tree.text(DOCKERFILE) or ""
    if not local_only_bases(dockerfile) or local_base == "keep":
        selection.chosen.append(chosen)
        return
    if local_base == "refuse":
        selection.hold(HELD_LOCAL_BASE, rel)
        return
    try:
        text = portable_dockerfile(dockerfile)
    except ValueError:
        selection.hold(HELD_NOT_REWRITABLE, rel)
        return
    files = dict(chosen.files)
    files[DOCKERFILE] = (text.encode(), files[DOCKERFILE][1])
    assert chosen.tree.config is not None  # unreadable tasks never get here
    row = chosen.row.model_copy(update={"content_hash": content_hash(chosen.tree.config, files)})
    selection.chosen.append(replace(chosen, row=row, files=files, rewritten=True))


def licence_of(chosen: Chosen) -> str | None:
    source = chosen.block.source if chosen.block else None
    return normalise(source.license if source else None)
