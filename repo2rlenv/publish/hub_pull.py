"""Fetch a pushed task set from the Hub into a new folder, all or nothing.

The file names come from the Hub, so they are hostile: each is checked (relative, no
`..`, no backslash, no hidden `.cache`) before anything is downloaded. The files go
into a temporary folder beside `--out`, the executable bits of `rlenv-publish.json`
are put back, every task's content hash is checked against `manifest.jsonl`, and only
then is the folder renamed to `--out`: an interrupted or refused pull leaves nothing
that looks like a task set."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path, PurePosixPath

from repo2rlenv.bundle.reader import read_task_dir
from repo2rlenv.hub import SourceUnavailable, hub_error, hub_info
from repo2rlenv.manifest import MANIFEST, read_manifest
from repo2rlenv.publish.staging import PUBLISH_FILE, PublishRecord

BAD_PATH = "publish.unsafe-path"
HASH_MISMATCH = "publish.hash-mismatch"
NOT_A_TASK_SET = "publish.not-a-task-set"
CLIENT_FOLDER = ".cache"
"""Where `snapshot_download(local_dir=...)` keeps its own bookkeeping; not a task file."""


def safe_name(name: str) -> bool:
    """A repository file name that stays inside the folder it is written to."""
    path = PurePosixPath(name)
    return (
        bool(name)
        and "\\" not in name
        and "\0" not in name
        and not path.is_absolute()
        and all(part not in ("", ".", "..") for part in name.split("/"))
        and path.parts[0] != CLIENT_FOLDER
    )


def pull(repo_id: str, out: Path, revision: str | None = None) -> tuple[str, int]:
    """Download dataset `repo_id` at `revision` into `out` (which must not exist);
    returns the commit and the number of tasks."""
    from huggingface_hub import snapshot_download

    commit, names = hub_info(repo_id, revision)
    if MANIFEST not in names:
        raise SourceUnavailable(
            NOT_A_TASK_SET, f"dataset {repo_id} has no {MANIFEST}: not a task set `push` wrote"
        )
    unsafe = sorted(name for name in names if not safe_name(name))
    if unsafe:
        raise SourceUnavailable(
            BAD_PATH, f"dataset {repo_id} names a file outside it: {unsafe[0]!r}"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".pull", dir=out.parent))
    try:
        try:
            snapshot_download(
                repo_id, repo_type="dataset", revision=commit or revision, local_dir=staging
            )
        except Exception as exc:
            raise hub_error(exc, repo_id, revision) from exc
        shutil.rmtree(staging / CLIENT_FOLDER, ignore_errors=True)
        _restore_modes(staging, set(names))
        tasks = _check_hashes(staging, repo_id)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return commit or (revision or "main"), tasks


def _restore_modes(root: Path, names: set[str]) -> None:
    record_path = root / PUBLISH_FILE
    if not record_path.is_file():
        return
    record = PublishRecord.model_validate(json.loads(record_path.read_text()))
    for name in record.executables:
        if not safe_name(name) or name not in names:
            raise SourceUnavailable(
                BAD_PATH, f"{PUBLISH_FILE} names a file not in the dataset: {name!r}"
            )
        path = root / name
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _check_hashes(root: Path, repo_id: str) -> int:
    rows = read_manifest(root)
    for row in rows:
        if not safe_name(row.path):
            raise SourceUnavailable(BAD_PATH, f"manifest.jsonl names a path outside: {row.path!r}")
        found = read_task_dir(root / row.path).content_hash
        if found != row.content_hash:
            raise SourceUnavailable(
                HASH_MISMATCH,
                f"task {row.path} of dataset {repo_id} does not hash to its manifest row",
            )
    return len(rows)
