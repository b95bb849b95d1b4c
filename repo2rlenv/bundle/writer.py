"""The one way a task reaches disk: atomic, deterministic, never clobbering a different task.

A bundle is written into a hidden temporary folder beside its destination and renamed
into place, so a reader (or a killed run) sees either no task or a whole task. Modes
are fixed (0644 files, 0755 executables and folders) and nothing time-dependent enters
the bytes, so the same bundle always gives the same folder and the same content hash.

Durability costs one fsync per task (the parent folder, after the rename), not one per
file: a mined task can always be mined again, and an fsync per file made writing the
slowest step of a run. A killed process loses nothing that was renamed into place. If
the machine itself goes down, a task renamed in its last moments may hold files whose
bytes never reached the disk; the rerun finds that folder's content hash differs from
the task it would write and stops with `BundleConflictError` instead of trusting it
(`--force` rewrites it).
"""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomli_w

from repo2rlenv.bundle.hashing import hash_canonical
from repo2rlenv.bundle.reader import read_task_dir
from repo2rlenv.bundle.toml_io import canonical_dict_bytes, config_to_dict, dump_config, prune
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


def _files_and_config(bundle: TaskBundle) -> tuple[dict[str, tuple[bytes, bool]], dict[str, Any]]:
    instruction = (
        bundle.instruction if bundle.instruction.endswith("\n") else bundle.instruction + "\n"
    )
    files = {f.path: (f.content, f.executable) for f in bundle.files}
    files["instruction.md"] = (instruction.encode(), False)
    return files, config_to_dict(bundle.config)


def bundle_digest(bundle: TaskBundle) -> str:
    """The content hash `render_bundle` gives, without rendering task.toml."""
    files, data = _files_and_config(bundle)
    return hash_canonical(canonical_dict_bytes(data), files)


def render_bundle(bundle: TaskBundle) -> tuple[str, dict[str, tuple[bytes, bool]]]:
    """The exact files a bundle becomes, task.toml included, and its content hash.

    The config is turned into its dict once: the hash reads it without the volatile
    label fields, then the hash is set in it and the same dict becomes task.toml."""
    files, data = _files_and_config(bundle)
    digest = hash_canonical(canonical_dict_bytes(data), files)
    if bundle.config.metadata.repo2rlenv is not None:
        metadata = data.get("metadata", {})
        block = {**metadata.get("repo2rlenv", {}), "content_hash": digest}
        data = prune({**data, "metadata": {**metadata, "repo2rlenv": block}})
    rendered = dict(files)
    rendered["task.toml"] = (tomli_w.dumps(data).encode(), False)
    return digest, rendered


def _write_tree(root: Path, files: dict[str, tuple[bytes, bool]]) -> None:
    """Every file of the staging folder, with its fixed mode. No file is fsynced on its
    own: the folder only becomes visible through the rename, so a killed process leaves
    a hidden staging folder and never a partial task (see `write_bundle` for crashes of
    the machine).

    Modes are asked for at creation; they are set again explicitly only when the
    process umask takes bits away from them, which the staging folder's own mode shows
    (a typical umask of 022 leaves 0755 and 0644 intact, saving two calls per entry)."""
    os.mkdir(root, DIR_MODE)
    exact = stat.S_IMODE(os.stat(root).st_mode) == DIR_MODE
    if not exact:
        os.chmod(root, DIR_MODE)
    made = {""}
    for rel in sorted(files):
        content, executable = files[rel]
        folder = rel.rpartition("/")[0]
        if folder not in made:
            _make_folders(root, folder, made, exact)
        mode = EXEC_MODE if executable else FILE_MODE
        fd = os.open(root / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
            if not exact:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _make_folders(root: Path, folder: str, made: set[str], exact: bool) -> None:
    parts = folder.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        if prefix not in made:
            os.mkdir(root / prefix, DIR_MODE)
            if not exact:
                os.chmod(root / prefix, DIR_MODE)
            made.add(prefix)


def _clear_leftovers(out_dir: Path, task_id: str) -> None:
    """Staging and retired folders of this task that a killed run left behind."""
    prefixes = (f".{task_id}.tmp-", f".{task_id}.old-")
    with os.scandir(out_dir) as entries:
        stale = [entry.path for entry in entries if entry.name.startswith(prefixes)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


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
