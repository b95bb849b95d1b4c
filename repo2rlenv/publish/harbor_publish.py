"""`repo2rlenv push DIR --to harbor:ORG/NAME --out OUT`, end to end: choose the tasks
with the one selection every destination uses, copy them (rewritten where asked) under
OUT, and write Harbor's `dataset.toml` and a local `registry.json` naming those copies.

The copies are what is published: the digests are computed over them and registry.json
points at them, so a task rewritten to the portable base is rewritten only there and the
mined folder is never modified by publishing. OUT is built beside itself and renamed into
place, so a failed push leaves an earlier one whole; OUT may be new, empty, or an earlier
push (it holds `rlenv-publish.json`), never a folder of anything else."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.publish.harbor_registry import (
    NAME_PATTERN,
    RegistryDataset,
    RegistryError,
    build_dataset,
    write_dataset,
)
from repo2rlenv.publish.selection import PublishRequest, Selection
from repo2rlenv.publish.staging import PUBLISH_FILE, write_record, write_tasks

PREFIX = "harbor:"


@dataclass(frozen=True)
class HarborTarget:
    """`harbor:ORG/NAME[@VERSION]`: the dataset's name and, optionally, its version."""

    name: str
    version: str | None = None

    @classmethod
    def parse(cls, text: str) -> HarborTarget:
        body = text.removeprefix(PREFIX)
        name, _, version = body.partition("@")
        if not text.startswith(PREFIX) or not NAME_PATTERN.match(name) or ".." in name:
            raise RegistryError(f"{text!r} is not harbor:ORG/NAME[@VERSION]")
        if "@" in body and not version.strip():
            raise RegistryError(f"{text!r} names an empty version")
        return cls(name=name, version=version or None)


@dataclass(frozen=True, kw_only=True)
class HarborPush(PublishRequest):
    target: HarborTarget
    out: Path
    description: str = ""


@dataclass(frozen=True)
class HarborOutcome:
    selection: Selection
    dataset: RegistryDataset | None
    """None for a dry run or when no task was chosen (nothing is written)."""


def check_out(root: Path, out: Path) -> None:
    """OUT must not overlap the mined folder (a rerun would find the copies as tasks,
    or replace the mined tasks) and must hold nothing but an earlier push."""
    root, out = root.resolve(), out.resolve()
    if out == root or out.is_relative_to(root) or root.is_relative_to(out):
        raise RegistryError(f"--out {out} overlaps the task folder {root}; name another folder")
    earlier = out.is_dir() and (not any(out.iterdir()) or (out / PUBLISH_FILE).is_file())
    if out.exists() and not earlier:
        raise RegistryError(f"--out {out} holds something other than an earlier push")


def push_to_harbor(request: HarborPush) -> HarborOutcome:
    """Publish the chosen tasks of `request.root` as a Harbor registry dataset in
    `request.out`; raises `RegistryError` (one line) for what Harbor would refuse."""
    check_out(request.root, request.out)
    selection = request.select()
    if request.dry_run or not selection.chosen:
        return HarborOutcome(selection=selection, dataset=None)
    out = request.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write_record(selection, write_tasks(selection, building), building)
        built = build_dataset(
            request.target.name,
            [building / chosen.row.path for chosen in selection.chosen],
            version=request.target.version,
            description=request.description,
        )
        tasks = tuple(
            entry.model_copy(update={"path": out / entry.path.relative_to(building)})
            for entry in built.tasks
        )
        dataset = built.model_copy(update={"tasks": tasks})
        write_dataset(dataset, building)
        _swap(building, out)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return HarborOutcome(selection=selection, dataset=dataset)


def _swap(building: Path, out: Path) -> None:
    """Rename the new push into place; an earlier one is moved aside first and removed
    only once the new one is there."""
    if not out.exists():
        os.replace(building, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
    os.replace(out, old / "push")
    os.replace(building, out)
    shutil.rmtree(old, ignore_errors=True)
