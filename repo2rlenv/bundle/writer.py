"""The one way a task reaches disk: atomic, deterministic, never clobbering a different task.

A bundle is written into a hidden temporary folder beside its destination and renamed
into place, so a reader (or a killed run) sees either no task or a whole task. Modes
are fixed (0644 files, 0755 executables and folders) and nothing time-dependent enters
the bytes, so the same bundle always gives the same folder and the same content hash.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from repo2rlenv.bundle.hashing import content_hash
from repo2rlenv.bundle.reader import read_task_dir
from repo2rlenv.bundle.toml_io import dump_config
from schemas import TaskBundle, TaskConfig

FILE_MODE = 0o644
EXEC_MODE = 0o755
DIR_MODE = 0o755


class BundleConflictError(Exception):
    """The destination holds a different task; refusing to overwrite it silently."""


@dataclass(frozen=True)
class WriteOutcome:
    path: Path
    content_hash: str
    status: Literal["written", "unchanged", "replaced"]


def _with_hash(bundle: TaskBundle) -> tuple[TaskConfig, str, dict[str, tuple[bytes, bool]]]:
    instruction = (
        bundle.instruction if bundle.instruction.endswith("\n") else bundle.instruction + "\n"
    )
    files = {f.path: (f.content, f.executable) for f in bundle.files}
    files["instruction.md"] = (instruction.encode(), False)
    config = bundle.config.model_copy(deep=True)
    digest = content_hash(config, files)
    if config.metadata.repo2rlenv is not None:
        config.metadata.repo2rlenv.content_hash = digest
    return config, digest, files


def render_bundle(bundle: TaskBundle) -> tuple[str, dict[str, tuple[bytes, bool]]]:
    """The exact files a bundle becomes, task.toml included, and its content hash."""
    config, digest, files = _with_hash(bundle)
    rendered = dict(files)
    rendered["task.toml"] = (dump_config(config).encode(), False)
    return digest, rendered


def _write_tree(root: Path, files: dict[str, tuple[bytes, bool]]) -> None:
    root.mkdir(mode=DIR_MODE)
    os.chmod(root, DIR_MODE)
    for rel in sorted(files):
        content, executable = files[rel]
        target = root / rel
        for parent in reversed(target.relative_to(root).parents):
            folder = root / parent
            if not folder.exists():
                folder.mkdir()
                os.chmod(folder, DIR_MODE)
        with open(target, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(target, EXEC_MODE if executable else FILE_MODE)


def _clear_leftovers(out_dir: Path, task_id: str) -> None:
    for stale in out_dir.glob(f".{task_id}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for stale in out_dir.glob(f".{task_id}.old-*"):
        shutil.rmtree(stale, ignore_errors=True)


def write_bundle(bundle: TaskBundle, out_dir: Path, *, overwrite: bool = False) -> WriteOutcome:
    """Write `bundle` to `out_dir/<task_id>`.

    An existing folder with the same content hash is left as it is (its evaluation
    label survives); a different one raises `BundleConflictError` unless `overwrite`.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    digest, files = render_bundle(bundle)
    target = out_dir / bundle.task_id
    _clear_leftovers(out_dir, bundle.task_id)

    if target.is_symlink():
        raise BundleConflictError(f"{target} is a symlink; refusing to write through it")
    existed = target.exists()
    if existed:
        current = read_task_dir(target)
        if current.content_hash == digest and not current.symlinks and not current.special:
            return WriteOutcome(target, digest, "unchanged")
        if not overwrite:
            raise BundleConflictError(
                f"{target} holds a different task (hash {current.content_hash or 'unreadable'}, "
                f"new {digest}); pass overwrite=True (--force) to replace it"
            )

    staging = out_dir / f".{bundle.task_id}.tmp-{uuid.uuid4().hex}"
    try:
        _write_tree(staging, files)
        if existed:
            retired = out_dir / f".{bundle.task_id}.old-{uuid.uuid4().hex}"
            os.rename(target, retired)
            os.rename(staging, target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.rename(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _fsync_dir(out_dir)
    return WriteOutcome(target, digest, "replaced" if existed else "written")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_config(task_dir: Path, config: TaskConfig) -> None:
    """Atomically rewrite one task's task.toml (labels, metadata), keeping the folder."""
    target = Path(task_dir) / "task.toml"
    staging = target.with_name(f".task.toml.tmp-{uuid.uuid4().hex}")
    with open(staging, "wb") as handle:
        handle.write(dump_config(config).encode())
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(staging, FILE_MODE)
    os.replace(staging, target)
